// The data plane as an operator sees it, from the node that serves the
// console: the circuits it routed, live; the routers and their links as a
// map coloured by health, with the latency on each link; and a router's own
// page with its links, terminators and circuits. Circuits and links are
// each node's own (circuits live on the node that made them; links are
// those the routers reported to it): the pages say so.
import { h, api, show, errorBox, cellOf, barChart } from './app.js';

const NS = 'http://www.w3.org/2000/svg';
function svg(tag, attrs, ...kids) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  e.append(...kids);
  return e;
}

// One page at a time refreshes itself; route() stops it on every page.
let timer = null;
export function stopLive() {
  if (timer) clearInterval(timer);
  timer = null;
}
function every(ms, id, draw) {
  stopLive();
  timer = setInterval(() => {
    if (!document.getElementById(id)) return stopLive();
    draw().catch(() => { /* the next tick tries again; a 401 went to the login */ });
  }, ms);
}

const list = async (path) => ((await api('GET', `${path}${path.includes('?') ? '&' : '?'}limit=-1`)).data || []);
const routerHref = (id) => `#/router/${encodeURIComponent(id)}`;
const ms = (ns) => Math.round((ns || 0) / 1e6);

// A link is healthy when its routers report it connected and no operator
// took it out of paths.
const linkOK = (l) => l.state === 'Connected' && !l.down;
function latency(l) {
  const worst = Math.max(ms(l.sourceLatency), ms(l.destLatency));
  return worst >= 60000 ? 'not measured yet' : `${worst} ms`;
}

function bytes(n) {
  if (n === undefined || n === null) return '';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  for (; n >= 1024 && i < units.length - 1; i++) n /= 1024;
  return `${i ? n.toFixed(1) : n} ${units[i]}`;
}

// pathCell names the routers of a circuit's path, in order, each a link to its page.
function pathCell(c) {
  const nodes = (c.path && c.path.nodes) || [];
  const out = [];
  nodes.forEach((n, i) => {
    if (i) out.push(' → ');
    out.push(h('a', { href: routerHref(n.id) }, n.name || n.id));
  });
  return h('span', { class: 'path' }, ...out);
}

// usageText says a circuit's bytes as its routers reported them (each
// interval: a minute by default): what the client sent, what the host sent back.
function usageText(u) {
  if (!u || (!u.bytesIn && !u.bytesOut)) return 'none reported yet';
  return `${bytes(u.bytesIn)} sent, ${bytes(u.bytesOut)} back`;
}

// withBytes: the bytes column shows when the node reports usage.
function circuitRows(circuits, withBytes) {
  return circuits.map((c) => h('tr', { 'data-circuit': c.id },
    h('td', {}, c.identity ? h('a', { href: `#/r/identities/${encodeURIComponent(c.identity.id)}` }, c.identity.name || c.identity.id) : c.identityId || ''),
    h('td', {}, c.service ? h('a', { href: `#/r/services/${encodeURIComponent(c.service.id)}` }, c.service.name || c.service.id) : ''),
    h('td', {}, pathCell(c)),
    h('td', {}, cellOf(c.createdAt)),
    withBytes ? h('td', { class: 'num' }, usageText(c.usage)) : null,
    h('td', {}, h('code', {}, c.id))));
}

function circuitsTable(id, circuits) {
  const withBytes = circuits.some((c) => c.usage);
  const heads = ['Identity', 'Service', 'Path', 'Age', withBytes ? 'Bytes' : null, 'Circuit'].filter(Boolean);
  return h('table', { id },
    h('thead', {}, h('tr', {}, ...heads.map((x) => h('th', {}, x)))),
    h('tbody', {}, ...circuitRows(circuits, withBytes)));
}

// circuitsView lists the open circuits this node routed, again every 2 s.
export async function circuitsView() {
  const draw = async () => {
    const circuits = (await list('/circuits')).sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1));
    const box = document.getElementById('circuits-box');
    if (!box) return;
    box.replaceChildren(
      h('p', { id: 'circuit-count' }, circuits.length === 1 ? '1 open circuit' : `${circuits.length} open circuits`),
      circuits.length ? circuitsTable('circuits-live', circuits) : h('p', { class: 'muted', id: 'circuits-live' }, 'No circuit is open at this node.'));
  };
  show(h('h2', {}, 'Circuits'),
    h('p', { class: 'muted' }, 'The circuits this node routed that are open now, newest first, refreshed every 2 s. ',
      'Each node lists the circuits it made; the path names the routers from the dialing client to the host.'),
    h('div', { id: 'circuits-box' }, h('p', {}, 'Loading…')));
  await draw();
  every(2000, 'circuits-box', draw);
}

// topology draws the routers on a circle and their links between them:
// green when healthy, red when not; the latency on each link.
function topology(routers, links) {
  const n = Math.max(routers.length, 1);
  const size = Math.max(420, Math.min(1200, 90 * Math.sqrt(n) * 2));
  const c = size / 2, r = size / 2 - 70;
  const at = new Map();
  routers.forEach((x, i) => {
    const a = (2 * Math.PI * i) / n - Math.PI / 2;
    // The name outside the circle, away from the links.
    at.set(x.id, { x: c + r * Math.cos(a), y: c + r * Math.sin(a), lx: c + (r + 24) * Math.cos(a), ly: c + (r + 24) * Math.sin(a) + 4 });
  });
  const g = svg('svg', { id: 'topology', viewBox: `0 0 ${size} ${size}`, width: size, height: size, class: 'topology' });
  const lines = svg('g', {});
  g.append(lines);
  for (const l of links) {
    const a = at.get(l.sourceRouter && l.sourceRouter.id), b = at.get(l.destRouter && l.destRouter.id);
    if (!a || !b) continue;
    const ok = linkOK(l);
    lines.append(svg('line', { x1: a.x, y1: a.y, x2: b.x, y2: b.y, class: ok ? 'link up' : 'link bad', 'data-link': l.id },
      svg('title', {}, `${l.sourceRouter.name} → ${l.destRouter.name}: ${ok ? 'connected' : (l.down ? 'taken out of paths' : 'unusable')}, ${latency(l)}`)));
    if (links.length <= 60) {
      lines.append(svg('text', { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 - 3, class: 'latency', 'data-link': l.id }, latency(l)));
    }
  }
  for (const x of routers) {
    const p = at.get(x.id);
    const name = x.name.length > 22 ? x.name.slice(0, 21) + '…' : x.name;
    g.append(svg('a', { href: routerHref(x.id), class: x.online ? 'router up' : 'router bad', 'data-router': x.name },
      svg('circle', { cx: p.x, cy: p.y, r: 9 }),
      svg('text', { x: p.lx, y: p.ly, 'text-anchor': 'middle' }, name),
      svg('title', {}, `${x.name}: ${x.online ? 'connected to this node' : 'not connected to this node'}`)));
  }
  return g;
}

async function routersAndLinks() {
  const [edge, transit, links] = await Promise.all([list('/edge-routers'), list('/routers').catch(() => []), list('/links')]);
  const seen = new Set();
  const routers = [];
  for (const x of [...edge, ...transit]) {
    if (seen.has(x.id)) continue;
    seen.add(x.id);
    routers.push({ id: x.id, name: x.name, online: x.isOnline === true || x.connected === true });
  }
  routers.sort((a, b) => a.name.localeCompare(b.name));
  return { routers, links };
}

// topologyView shows the map, again every 5 s.
export async function topologyView() {
  const draw = async () => {
    const { routers, links } = await routersAndLinks();
    const box = document.getElementById('topology-box');
    if (!box) return;
    const bad = links.filter((l) => !linkOK(l)).length;
    const offline = routers.filter((x) => !x.online).length;
    box.replaceChildren(
      h('p', { id: 'topology-summary' }, `${routers.length} routers (${offline} not connected to this node), `,
        `${links.length} links (${bad} not healthy)`),
      routers.length ? topology(routers, links) : h('p', { class: 'muted' }, 'No routers yet.'));
  };
  show(h('h2', {}, 'Topology'),
    h('p', { class: 'muted' }, 'The routers and the links they reported to this node. Green: connected; red: a router not ',
      'connected to this node, or a link that is unusable or taken out of paths. Each link shows the larger of the latencies its ',
      'two routers measured. Refreshed every 5 s; a router opens its page.'),
    h('div', { id: 'topology-box' }, h('p', {}, 'Loading…')));
  await draw();
  every(5000, 'topology-box', draw);
}

// routerView is a router's data plane: its state at this node, its links,
// its terminators and the circuits through it.
export async function routerView(id) {
  let rec = null, kind = 'edge-routers';
  try {
    rec = (await api('GET', `/edge-routers/${encodeURIComponent(id)}`)).data;
  } catch (ex) {
    if (ex.status !== 404) throw ex;
    kind = 'routers';
    rec = (await api('GET', `/routers/${encodeURIComponent(id)}`)).data;
  }
  const online = rec.isOnline === true || rec.connected === true;
  const linksBox = h('section', { id: 'router-links' }, h('h3', {}, 'Links'), h('p', {}, 'Loading…'));
  const termBox = h('section', { id: 'router-terminators' }, h('h3', {}, 'Terminators'), h('p', {}, 'Loading…'));
  const circBox = h('section', { id: 'router-circuits' }, h('h3', {}, 'Circuits'), h('p', {}, 'Loading…'));
  show(h('h2', {}, `Router: ${rec.name}`),
    h('div', { class: 'toolbar' }, h('a', { class: 'button', href: `#/r/${kind}/${encodeURIComponent(id)}` }, 'Its record'),
      h('a', { class: 'button', href: '#/topology' }, 'Topology')),
    h('p', { id: 'router-state', class: online ? 'pass' : 'fail' }, online ? 'Connected to this node' : 'Not connected to this node',
      rec.versionInfo && rec.versionInfo.version ? `, version ${rec.versionInfo.version}` : '', '.'),
    linksBox, termBox, circBox);
  const draw = async () => {
    const [links, terminators, circuits] = await Promise.all([list('/links'),
      list(`/terminators?filter=${encodeURIComponent(`routerId = "${id}"`)}`), list('/circuits')]);
    const mine = links.filter((l) => (l.sourceRouter && l.sourceRouter.id === id) || (l.destRouter && l.destRouter.id === id));
    linksBox.replaceChildren(h('h3', {}, `Links (${mine.length})`), mine.length ? h('table', { id: 'router-links-table' },
      h('thead', {}, h('tr', {}, ...['To', 'State', 'Latency', 'Cost', 'Protocol', 'Dialed by'].map((x) => h('th', {}, x)))),
      h('tbody', {}, ...mine.map((l) => {
        const other = l.sourceRouter.id === id ? l.destRouter : l.sourceRouter;
        return h('tr', { class: linkOK(l) ? '' : 'fail', 'data-link': l.id },
          h('td', {}, h('a', { href: routerHref(other.id) }, other.name || other.id)),
          h('td', {}, linkOK(l) ? 'connected' : (l.down ? 'taken out of paths' : 'unusable')),
          h('td', {}, latency(l)), h('td', {}, String(l.cost)), h('td', {}, l.protocol || ''),
          h('td', {}, l.sourceRouter.id === id ? 'this router' : other.name || other.id));
      }))) : h('p', { class: 'muted' }, 'none reported to this node'));
    termBox.replaceChildren(h('h3', {}, `Terminators (${terminators.length})`), terminators.length ? h('table', { id: 'router-terminators-table' },
      h('thead', {}, h('tr', {}, ...['Service', 'Binding', 'Address', 'Instance', 'Precedence', 'Cost', 'Created'].map((x) => h('th', {}, x)))),
      h('tbody', {}, ...terminators.map((t) => h('tr', { 'data-terminator': t.id },
        h('td', {}, t.service ? h('a', { href: `#/r/services/${encodeURIComponent(t.service.id)}` }, t.service.name || t.service.id) : ''),
        h('td', {}, t.binding || ''), h('td', {}, t.address || ''), h('td', {}, t.identity || ''),
        h('td', {}, t.precedence || ''), h('td', {}, String(t.cost)), h('td', {}, cellOf(t.createdAt)))))) : h('p', { class: 'muted' }, 'none'));
    const through = circuits.filter((c) => ((c.path && c.path.nodes) || []).some((n) => n.id === id));
    circBox.replaceChildren(h('h3', {}, `Circuits (${through.length})`),
      through.length ? circuitsTable('router-circuits-table', through) : h('p', { class: 'muted' }, 'none through it at this node'));
  };
  try {
    await draw();
  } catch (ex) {
    if (ex.status !== 401) circBox.append(errorBox(ex));
  }
  every(5000, 'router-links', draw);
}

// serviceTraffic fills box with a service's traffic over the last hour, a
// bar a minute: the bytes its dialing clients sent and its hosts sent back
// through the circuits of this node, from the usage its routers reported
// (the node's data-plane events keep an hour).
export async function serviceTraffic(box, serviceID) {
  const since = Date.now() - 3600e3;
  const filter = `namespace = "usage" and action = "service" and serviceId = "${serviceID}"`;
  const sent = new Array(60).fill(0), back = new Array(60).fill(0);
  try {
    let from = 0;
    for (;;) {
      const page = await api('GET', `/data-plane-events?limit=1000&fromId=${from}&filter=${encodeURIComponent(filter)}`);
      const rows = page.data || [];
      for (const e of rows) {
        const m = Math.floor((Date.parse(e.intervalStart || e.at) - since) / 60e3);
        if (m < 0 || m >= 60) continue;
        sent[m] += e.bytesIn || 0;
        back[m] += e.bytesOut || 0;
      }
      if (rows.length < 1000) break;
      from = rows[rows.length - 1].id;
    }
  } catch (ex) {
    if (ex.status === 404) {
      box.replaceChildren(h('h3', {}, 'Traffic, the last hour'), h('p', { class: 'muted' }, 'This node keeps no data-plane events.'));
      return;
    }
    box.replaceChildren(h('h3', {}, 'Traffic, the last hour'), errorBox(ex));
    return;
  }
  const total = (a) => a.reduce((x, y) => x + y, 0);
  box.replaceChildren(h('h3', {}, 'Traffic, the last hour'),
    h('p', { id: 'service-traffic-total' }, `${bytes(total(sent))} sent by its clients, ${bytes(total(back))} sent back by its hosts`,
      ' (the circuits of this node, as their routers reported them: every minute by default)'),
    barChart('service-traffic', 'bytes a minute: sent (blue), back (green)', [[sent, 'bar'], [back, 'bar back']]));
}
