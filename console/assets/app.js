// edgectl console: a single page over the Management API of the node that
// serves it (same origin). The session token lives in this tab's
// sessionStorage only: never in a cookie, never in the URL.
import { resources, byPath, loadResources } from './resources.js';
import qrcode from './vendor/qrcode.mjs';
import { circuitsView, topologyView, routerView, stopLive, serviceTraffic } from './dataplane.js';

const MGMT = '/edge/management/v1';
const TOKEN = 'edgectl.token';
const main = () => document.getElementById('main');

// ---------- small DOM helpers: elements and text nodes, never HTML strings ----------

function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// show renders a view of the signed-in console; once the session is gone
// (a 401 sent the tab to the login), a view still loading renders nothing.
function show(...nodes) {
  if (!sessionStorage.getItem(TOKEN)) return;
  main().replaceChildren(...nodes);
}

function showLogin(...nodes) {
  main().replaceChildren(...nodes);
}

function fmt(v) {
  if (v === undefined || v === null) return '';
  if (Array.isArray(v)) return v.map(fmt).join(', ');
  if (typeof v === 'object') {
    if ('name' in v && 'id' in v) return v.name;
    return JSON.stringify(v);
  }
  return String(v);
}

// Column headings in words: createdAt is "Created", isAdmin "Admin",
// type.name "Type", roleAttributes "Role attributes"; an event's at is
// "When", its entityType "Kind", its changedFields "Changed fields".
const LABELS = { id: 'ID', createdAt: 'Created', updatedAt: 'Updated', 'type.name': 'Type', typeId: 'Type', expiresAt: 'Expires',
  lastActivityAt: 'Last activity', cachedLastActivityAt: 'Last activity', isOnline: 'Online', hasApiSession: 'Logged in',
  at: 'When', entityType: 'Kind', entityName: 'Name', actor: 'By' };
function label(c) {
  if (LABELS[c]) return LABELS[c];
  let w = c.split('.')[0].replace(/^is(?=[A-Z])/, '').replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  return w.charAt(0).toUpperCase() + w.slice(1);
}

// An API time (RFC 3339) said as a person says it, relative to now.
const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;
function ago(iso) {
  const t = Date.parse(iso);
  let d = (Date.now() - t) / 1000;
  const future = d < 0;
  d = Math.abs(d);
  let a;
  if (d < 10) return 'now';
  if (d < 60) a = `${Math.round(d)} s`;
  else if (d < 3600) a = `${Math.round(d / 60)} min`;
  else if (d < 172800) a = `${Math.round(d / 3600)} h`;
  else if (d < 604800) a = `${Math.round(d / 86400)} days`;
  else return new Date(t).toLocaleString();
  return future ? `in ${a}` : `${a} ago`;
}

// cellOf is a table cell's content: times relative, the exact local time on hover.
function cellOf(v) {
  if (typeof v === 'string' && TIME.test(v)) return h('time', { datetime: v, title: new Date(Date.parse(v)).toLocaleString() }, ago(v));
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  return fmt(v);
}

// Relative times stay true while a page stays open (the live events above
// all): every 10 s each one is said again.
setInterval(() => document.querySelectorAll('main time[datetime]').forEach((t) => { t.textContent = ago(t.dateTime); }), 10e3);

function get(obj, path) {
  return path.split('.').reduce((o, k) => (o == null ? undefined : o[k]), obj);
}

function hashParams() {
  const [, q] = location.hash.split('?');
  return new URLSearchParams(q || '');
}

function go(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
}

// ---------- the API ----------

class APIError extends Error {
  constructor(status, body) {
    const e = (body && body.error) || {};
    super(e.message || `HTTP ${status}`);
    this.status = status;
    this.code = e.code;
    this.cause = e.cause;
  }
}

async function api(method, path, body, { auth = true, own401 = false } = {}) {
  const headers = { Accept: 'application/json' };
  const token = sessionStorage.getItem(TOKEN);
  if (auth && token) headers['svc-session'] = token;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const resp = await fetch(MGMT + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store', credentials: 'omit' });
  let data = null;
  const text = await resp.text();
  if (text) {
    try { data = JSON.parse(text); } catch { data = null; }
  }
  if (resp.status === 401 && auth && !(own401 && data && data.error && data.error.code === 'INVALID_AUTH')) {
    sessionStorage.removeItem(TOKEN);
    toLogin('Your session has ended; log in again.');
    throw new APIError(401, data);
  }
  if (!resp.ok) throw new APIError(resp.status, data);
  return data;
}

let loginMessage = '';
function toLogin(msg) {
  loginMessage = msg || '';
  stopStream();
  go('#/login');
}

// ---------- layout ----------

// navFor is whom and which resources the navigation was drawn for.
let navFor = null;

// nav draws the navigation, the pages and the resources, and who is logged
// in, unless it shows them already. route calls it on every page: before
// the resources are loaded (a login) it has the pages only, and once they
// are it is drawn again with them.
function nav() {
  const user = sessionStorage.getItem('edgectl.user') || '';
  const drawn = `${user}\n${resources.map((r) => r.path).join(' ')}`;
  if (navFor === drawn && document.getElementById('logout')) return;
  navFor = drawn;
  const links = [h('a', { href: '#/' }, 'Overview'), h('a', { href: '#/why' }, 'Why'), h('a', { href: '#/events' }, 'Events'),
    h('a', { href: '#/circuits' }, 'Circuits'), h('a', { href: '#/topology' }, 'Topology')];
  const list = resources.map((r) => h('a', { href: `#/r/${r.path}`, 'data-resource': r.path }, r.title));
  const n = document.getElementById('nav');
  n.replaceChildren(h('div', { class: 'navgroup' }, ...links), list.length ? h('div', { class: 'navgroup', id: 'nav-resources' }, ...list) : null);
  document.getElementById('who').replaceChildren(
    h('span', { id: 'whoami' }, user),
    h('button', { id: 'logout', type: 'button', onclick: logout }, 'Log out'));
}

async function logout() {
  try { await api('DELETE', '/current-api-session'); } catch { /* gone already */ }
  sessionStorage.removeItem(TOKEN);
  sessionStorage.removeItem('edgectl.user');
  toLogin('Logged out.');
}

function errorBox(err) {
  return h('div', { class: 'error', role: 'alert' }, err instanceof APIError ? `${err.code || err.status}: ${err.message}` : String(err));
}

// ---------- login ----------

function loginView() {
  document.body.classList.add('anon');
  // The message stays until the next login: several requests may fail with 401 at once.
  const msg = h('div', { class: 'notice', id: 'login-message' }, loginMessage);
  const user = h('input', { id: 'username', name: 'username', autocomplete: 'username', required: true });
  const pass = h('input', { id: 'password', name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const err = h('div', { id: 'login-error', class: 'error-slot' });
  const form = h('form', { id: 'login', class: 'card narrow', onsubmit: async (e) => {
    e.preventDefault();
    err.replaceChildren();
    try {
      const r = await api('POST', '/authenticate?method=password', { username: user.value, password: pass.value }, { auth: false });
      sessionStorage.setItem(TOKEN, r.data.token);
      sessionStorage.setItem('edgectl.user', user.value);
      const queries = r.data.authQueries || [];
      if (queries.some((q) => (q.typeId || '').toUpperCase() === 'MFA')) totpView();
      else enter();
    } catch (ex) {
      err.replaceChildren(errorBox(ex));
    }
  } },
  h('h1', {}, 'edgectl'), msg,
  h('label', { for: 'username' }, 'Username'), user,
  h('label', { for: 'password' }, 'Password'), pass,
  err, h('button', { type: 'submit', id: 'login-submit' }, 'Log in'));
  showLogin(form);
  user.focus();
}

function totpView() {
  const code = h('input', { id: 'totp', name: 'code', inputmode: 'numeric', autocomplete: 'one-time-code', required: true });
  const err = h('div', { class: 'error-slot' });
  show(h('form', { class: 'card narrow', id: 'totp-form', onsubmit: async (e) => {
    e.preventDefault();
    try {
      // A wrong code is the caller's to show (INVALID_AUTH); any other 401 ends the session.
      await api('POST', '/authenticate/mfa', { code: code.value }, { own401: true });
      enter();
    } catch (ex) {
      if (ex.status !== 401 || ex.code === 'INVALID_AUTH') err.replaceChildren(errorBox(ex));
    }
  } }, h('h1', {}, 'One more step'), h('p', {}, 'Your auth policy asks for the code of your authenticator app.'),
  h('label', { for: 'totp' }, 'Code'), code, err, h('button', { type: 'submit', id: 'totp-submit' }, 'Verify')));
  code.focus();
}

function enter() {
  loginMessage = '';
  document.body.classList.remove('anon');
  go('#/');
}

// ---------- network view ----------

// networkView draws, for an identity, identity → service policies → services
// → the edge routers it may reach each service through (for a service:
// service → service policies → identities, with the edge routers the service
// may use), as ZAC's visualizer does; what is failing is marked: a policy
// that selects nothing, a service no edge router both may use is online for,
// a router that is not online.
async function networkView() {
  const p = hashParams();
  const ident = p.get('identity');
  const svcID = p.get('service');
  if (!ident && !svcID) return show(h('h2', {}, 'Network view'), h('p', {}, 'Open it from an identity or a service.'));
  show(h('h2', {}, 'Network view'), h('p', {}, 'Loading…'));
  const list = async (path) => ((await api('GET', `${path}${path.includes('?') ? '&' : '?'}limit=-1`)).data || []);
  const online = (r) => r.isOnline === true;
  let root, columns;
  if (ident) {
    const [me, policies, routers] = await Promise.all([api('GET', `/identities/${encodeURIComponent(ident)}`),
      list(`/identities/${encodeURIComponent(ident)}/service-policies`), list(`/identities/${encodeURIComponent(ident)}/edge-routers`)]);
    root = { id: me.data.id, name: me.data.name, kind: 'identities' };
    const mine = new Set(routers.map((r) => r.id));
    const services = new Map();
    const policyNodes = await Promise.all(policies.map(async (pol) => {
      const svcs = await list(`/service-policies/${encodeURIComponent(pol.id)}/services`);
      for (const sv of svcs) services.set(sv.id, sv);
      return { id: pol.id, name: `${pol.name} (${pol.type})`, kind: 'service-policies', to: svcs.map((x) => x.id), bad: svcs.length === 0 };
    }));
    const serviceNodes = await Promise.all([...services.values()].map(async (sv) => {
      const both = (await list(`/services/${encodeURIComponent(sv.id)}/edge-routers`)).filter((r) => mine.has(r.id));
      return { id: sv.id, name: sv.name, kind: 'services', to: both.map((r) => r.id), bad: !both.some(online) };
    }));
    columns = [['Identity', [{ ...root, to: policyNodes.map((n) => n.id) }]], ['Service policies', policyNodes],
      ['Services', serviceNodes], ['Edge routers', routers.map((r) => ({ id: r.id, name: r.name, kind: 'edge-routers', bad: !online(r) }))]];
  } else {
    const [me, policies, routers] = await Promise.all([api('GET', `/services/${encodeURIComponent(svcID)}`),
      list(`/services/${encodeURIComponent(svcID)}/service-policies`), list(`/services/${encodeURIComponent(svcID)}/edge-routers`)]);
    root = { id: me.data.id, name: me.data.name, kind: 'services' };
    const identities = new Map();
    const policyNodes = await Promise.all(policies.map(async (pol) => {
      const ids = await list(`/service-policies/${encodeURIComponent(pol.id)}/identities`);
      for (const i of ids) identities.set(i.id, i);
      return { id: pol.id, name: `${pol.name} (${pol.type})`, kind: 'service-policies', to: ids.map((x) => x.id), bad: ids.length === 0 };
    }));
    columns = [['Service', [{ ...root, to: [...policyNodes.map((n) => n.id), ...routers.map((r) => r.id)] }]], ['Service policies', policyNodes],
      ['Identities', [...identities.values()].map((i) => ({ id: i.id, name: i.name, kind: 'identities' }))],
      ['Edge routers', routers.map((r) => ({ id: r.id, name: r.name, kind: 'edge-routers', bad: !online(r) }))]];
  }
  show(h('h2', {}, `Network view: ${root.name}`), graph(columns),
    h('p', { class: 'muted' }, 'Red: a policy that selects nothing, a service that no edge router both may use is online for, an edge router that is not online.'));
}

// graph draws columns of nodes as SVG, each with lines to the nodes its "to" names.
function graph(columns) {
  const NS = 'http://www.w3.org/2000/svg';
  const el = (tag, attrs, ...kids) => {
    const e = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    e.append(...kids);
    return e;
  };
  const colW = 230, rowH = 44, boxW = 190, boxH = 30, top = 36;
  const rows = Math.max(1, ...columns.map(([, nodes]) => nodes.length));
  const svg = el('svg', { id: 'network', viewBox: `0 0 ${columns.length * colW} ${top + rows * rowH}`, class: 'network' });
  const at = new Map();
  columns.forEach(([title, nodes], c) => {
    svg.append(el('text', { x: c * colW + 8, y: 18, class: 'colhead' }, title));
    nodes.forEach((n, r) => at.set(n.id, { x: c * colW + 8, y: top + r * rowH, c }));
  });
  const lines = el('g', {});
  svg.append(lines);
  columns.forEach(([, nodes], c) => nodes.forEach((n) => (n.to || []).forEach((to) => {
    const a = at.get(n.id), b = at.get(to);
    if (!b || b.c <= c) return;
    lines.append(el('line', { x1: a.x + boxW, y1: a.y + boxH / 2, x2: b.x, y2: b.y + boxH / 2, class: 'edge' }));
  })));
  columns.forEach(([, nodes]) => nodes.forEach((n) => {
    const a = at.get(n.id);
    const name = n.name.length > 26 ? n.name.slice(0, 25) + '…' : n.name;
    const link = el('a', { href: `#/r/${n.kind}/${encodeURIComponent(n.id)}`, class: n.bad ? 'node bad' : 'node', 'data-name': n.name },
      el('rect', { x: a.x, y: a.y, width: boxW, height: boxH, rx: 5 }), el('text', { x: a.x + 8, y: a.y + 20 }, name),
      el('title', {}, n.name));
    svg.append(link);
  }));
  return svg;
}

// ---------- overview ----------

async function overview() {
  show(h('h2', {}, 'Overview'), h('p', {}, 'Loading…'));
  const hourAgo = new Date(Date.now() - 3600e3);
  const [members, summary, events, routers, hour, health] = await Promise.all([
    api('GET', '/cluster/members'), api('GET', '/summary'),
    api('GET', '/events?filter=' + encodeURIComponent('sort by id desc') + '&limit=10').catch(() => ({ data: [] })),
    api('GET', '/edge-routers?limit=500').catch(() => ({ data: [] })),
    api('GET', '/events?limit=-1&filter=' + encodeURIComponent(
      `createdAt >= datetime(${hourAgo.toISOString()}) and namespace in ["entity", "authentication"]`)).catch(() => ({ data: [] })),
    api('GET', '/health-history').catch(() => ({ data: [] }))]);
  const mt = table(['id', 'address', 'isLeader', 'isOnline', 'isVoter', 'lastAppliedIndex', 'lag', 'version'], members.data,
    (m) => (m.isLeader ? 'leader' : ''));
  mt.id = 'members';
  const counts = h('div', { class: 'counts', id: 'counts' },
    ...Object.entries(summary.data).sort().map(([k, v]) => {
      const r = byPath[k.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase())]; // edgeRouterPolicies → edge-router-policies
      return h(r ? 'a' : 'div', { class: 'count', href: r ? `#/r/${r.path}` : undefined }, h('b', {}, String(v)), h('span', {}, r ? r.title : label(k)));
    }));
  const unreachable = h('section', { id: 'unreachable' }, h('h3', {}, 'Services no one can reach'), h('p', { class: 'muted' }, 'Checking…'));
  show(h('h2', {}, 'Overview'),
    h('section', {}, h('h3', {}, 'Cluster'), mt),
    routerHealth(routers.data || []),
    unreachable,
    lastHour(hour.data || [], hourAgo, health.data || []),
    h('section', {}, h('h3', {}, 'Resources'), counts),
    h('section', {}, h('h3', {}, 'Recent events'), eventsTable(events.data || [], 'recent-events')));
  servicesNoOneReaches(unreachable);
}

// servicesNoOneReaches lists the services (of the first 100) that no
// identity may dial or bind, or that no online edge router serves, in box
// (`edgectl verify` says more).
async function servicesNoOneReaches(box) {
  try {
    const services = (await api('GET', '/services?limit=100')).data || [];
    const found = (await Promise.all(services.map(async (sv) => {
      const [who, routers] = await Promise.all([api('GET', `/services/${encodeURIComponent(sv.id)}/identities?limit=1`),
        api('GET', `/services/${encodeURIComponent(sv.id)}/edge-routers?limit=-1`)]);
      if (!(who.data || []).length) return [sv, 'no identity may dial or bind it'];
      const rs = routers.data || [];
      if (!rs.length) return [sv, 'no edge router serves it'];
      if (!rs.some((r) => r.isOnline)) return [sv, 'none of its edge routers is online'];
      return null;
    }))).filter(Boolean);
    box.replaceChildren(h('h3', {}, 'Services no one can reach'),
      found.length ? h('ul', { id: 'unreachable-list' }, ...found.map(([sv, why]) => h('li', { class: 'bad' },
        h('a', { href: `#/r/services/${encodeURIComponent(sv.id)}` }, sv.name), ` ${why}`)))
        : h('p', { class: 'muted' }, services.length ? 'none: every service has someone who may use it and an online edge router' : 'no services yet'));
  } catch (ex) {
    if (ex.status !== 401) box.replaceChildren(h('h3', {}, 'Services no one can reach'), errorBox(ex));
  }
}

// lastHour charts the last hour's changes and logins, a bar a minute, from
// the event log: what changed, who got in, who was refused.
function lastHour(events, since, health) {
  const series = { changes: new Array(60).fill(0), logins: new Array(60).fill(0), failed: new Array(60).fill(0) };
  for (const e of events) {
    const m = Math.floor((Date.parse(e.at || e.createdAt) - since.getTime()) / 60e3);
    if (m < 0 || m >= 60) continue;
    if (e.namespace === 'entity') series.changes[m]++;
    else if (e.action === 'login') series.logins[m]++;
    else if (e.action === 'loginFailed') series.failed[m]++;
  }
  const sum = (a) => a.reduce((x, y) => x + y, 0);
  const count = (a, word) => `${sum(a)} ${word}${sum(a) === 1 ? '' : 's'}`;
  const failedLink = h('a', { href: '#/events?filter=' + encodeURIComponent('action = "loginFailed"') }, 'the failed logins');
  // The node's own samples (every 30 s): commands applied, the largest lag, routers connected.
  const applied = new Array(60).fill(0), lag = new Array(60).fill(0), routersOn = new Array(60).fill(0);
  health.forEach((x, i) => {
    const m = Math.floor((Date.parse(x.at) - since.getTime()) / 60e3);
    if (m < 0 || m >= 60) return;
    if (i > 0) applied[m] += Math.max(0, x.appliedIndex - health[i - 1].appliedIndex);
    lag[m] = Math.max(lag[m], x.maxLag);
    routersOn[m] = x.routersConnected;
  });
  const now = health.length ? health[health.length - 1] : null;
  return h('section', { id: 'last-hour' }, h('h3', {}, 'The last hour'),
    h('div', { class: 'charts' },
      barChart('chart-changes', count(series.changes, 'change'), [[series.changes, 'bar']]),
      barChart('chart-logins', `${count(series.logins, 'login')}, ${sum(series.failed)} failed`,
        [[series.logins, 'bar'], [series.failed, 'bar bad']]),
      barChart('chart-applied', `${sum(applied)} log entries applied by this node`, [[applied, 'bar']]),
      barChart('chart-lag', `largest member lag now: ${now ? now.maxLag : '-'}`, [[lag, 'bar bad']]),
      barChart('chart-routers', `routers connected to this node now: ${now ? now.routersConnected : '-'}`, [[routersOn, 'bar']])),
    sum(series.failed) ? h('p', { class: 'muted' }, 'See ', failedLink, ' in the events.') : null);
}

// barChart draws series of 60 per-minute counts as stacked SVG bars, the
// count of each minute on hover.
function barChart(id, title, series) {
  const NS = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(NS, 'svg');
  svg.setAttribute('viewBox', '0 0 300 60');
  svg.setAttribute('class', 'chart');
  const totals = new Array(60).fill(0);
  for (const [values] of series) values.forEach((v, i) => { totals[i] += v; });
  const top = Math.max(1, ...totals);
  const base = new Array(60).fill(0);
  for (const [values, cls] of series) {
    values.forEach((v, i) => {
      if (!v) return;
      const r = document.createElementNS(NS, 'rect');
      const height = (v / top) * 56;
      r.setAttribute('x', String(i * 5));
      r.setAttribute('width', '4');
      r.setAttribute('y', String(60 - base[i] - height));
      r.setAttribute('height', String(height));
      r.setAttribute('class', cls);
      const t = document.createElementNS(NS, 'title');
      t.textContent = `${v}, ${60 - i} min ago`;
      r.append(t);
      svg.append(r);
      base[i] += height;
    });
  }
  return h('figure', { id, class: 'chart' }, svg, h('figcaption', {}, title));
}

// routerState is an edge router's health as this node sees it.
function routerState(r) {
  if (r.isOnline) return 'online';
  if (!r.isVerified) return 'never enrolled';
  if (r.disabled) return 'disabled';
  return 'offline';
}

// routerHealth counts the edge routers by state and lists those not online
// (each holds a control channel to every node; this is this node's view).
function routerHealth(routers) {
  const by = {};
  for (const r of routers) (by[routerState(r)] = by[routerState(r)] || []).push(r);
  const counts = h('div', { class: 'counts', id: 'router-counts' },
    ...['online', 'offline', 'never enrolled', 'disabled'].map((k) =>
      h('div', { class: 'count ' + (k === 'online' ? 'pass' : (by[k] || []).length ? 'fail' : '') }, h('b', {}, String((by[k] || []).length)), h('span', {}, k))));
  const down = routers.filter((r) => !r.isOnline);
  const list = down.length
    ? h('ul', { id: 'routers-down' }, ...down.map((r) => h('li', { class: 'fail' },
      h('a', { href: `#/r/edge-routers/${encodeURIComponent(r.id)}` }, r.name), ` ${routerState(r)}`)))
    : h('p', { class: 'muted', id: 'routers-down' }, routers.length ? 'every edge router is online' : 'no edge routers yet');
  return h('section', {}, h('h3', {}, 'Edge routers'), counts, list);
}

function table(cols, rows, rowClass, link) {
  return h('table', {},
    h('thead', {}, h('tr', {}, ...cols.map((c) => h('th', {}, label(c))))),
    h('tbody', {}, ...rows.map((r) => h('tr', { class: rowClass ? rowClass(r) : undefined },
      ...cols.map((c, i) => {
        const v = get(r, c);
        return h('td', {}, i === 0 && link ? h('a', { href: link(r) }, fmt(v) || r.id) : cellOf(v));
      })))));
}

// ---------- lists ----------

async function listView(res) {
  const p = hashParams();
  const limit = 25;
  const offset = Number(p.get('offset') || 0);
  const filter = p.get('filter') || '';
  const sort = p.get('sort') || '';
  const role = p.get('role') || '';
  // The search box searches names as typed; "Advanced" takes the filter language.
  const advanced = p.get('advanced') === '1';
  const named = !res.columns || res.columns[0] === 'name';
  const qs = new URLSearchParams({ limit: String(limit), offset: String(offset) });
  let f = filter && !advanced ? `${named ? 'name' : 'id'} contains "${filter.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"` : filter;
  if (sort) f = (f ? f + ' ' : 'true ') + 'sort by ' + sort;
  if (f) qs.set('filter', f);
  if (role && res.roles) qs.append('roleFilter', role);
  const search = h('input', { id: 'filter', name: 'filter', value: filter, type: 'search', size: 50,
    placeholder: advanced ? 'filter, e.g. name contains "web" and isAdmin = false' : `search ${named ? 'names' : 'ids'}` });
  const adv = h('input', { type: 'checkbox', id: 'advanced', checked: advanced });
  const roleIn = res.roles ? h('input', { id: 'rolefilter', name: 'role', value: role, placeholder: '#attribute', list: 'role-list' }) : null;
  const submit = () => {
    const q = new URLSearchParams();
    if (search.value) q.set('filter', search.value);
    if (adv.checked) q.set('advanced', '1');
    if (sort) q.set('sort', sort);
    if (roleIn && roleIn.value) q.set('role', roleIn.value);
    go(`#/r/${res.path}?${q}`);
  };
  let typing;
  if (!advanced) search.addEventListener('input', () => { clearTimeout(typing); typing = setTimeout(submit, 350); });
  adv.addEventListener('change', submit);
  const bar = h('form', { class: 'toolbar', onsubmit: (e) => { e.preventDefault(); submit(); } },
    search, h('label', { class: 'muted' }, adv, ' Advanced'), roleIn, roleIn ? datalist('role-list', res.attrSource, '#') : null,
    h('button', { type: 'submit' }, 'Search'),
    res.noCreate ? null : h('a', { class: 'button', href: `#/r/${res.path}/new`, id: 'create' }, `New ${res.one}`));
  show(h('h2', {}, res.title), bar, h('p', {}, 'Loading…'));
  let r;
  try {
    r = await api('GET', `/${res.path}?${qs}`);
  } catch (ex) {
    show(h('h2', {}, res.title), bar, errorBox(ex));
    return;
  }
  const total = (r.meta && r.meta.pagination && r.meta.pagination.totalCount) || 0;
  const cols = res.columns || ['name', 'createdAt'];
  // Only the fields the API sorts by (its filterable fields) get a sort link.
  const sortable = new Set((r.meta && r.meta.filterableFields) || []);
  const sortLink = (c) => {
    const q = new URLSearchParams(p);
    q.set('sort', sort === c ? `${c} desc` : c);
    q.delete('offset');
    return h('a', { href: `#/r/${res.path}?${q}`, class: 'sort' }, label(c), sort === c ? ' ▲' : sort === `${c} desc` ? ' ▼' : '');
  };
  const t = h('table', { id: 'list' },
    h('thead', {}, h('tr', {}, ...cols.map((c) => h('th', {}, sortable.has(c) ? sortLink(c) : label(c))))),
    h('tbody', {}, ...r.data.map((row) => h('tr', {},
      ...cols.map((c, i) => h('td', {}, i === 0 ? h('a', { href: `#/r/${res.path}/${encodeURIComponent(row.id)}` }, fmt(get(row, c)) || row.id) : cellOf(get(row, c))))))));
  const page = (o) => { const q = new URLSearchParams(p); q.set('offset', String(o)); return `#/r/${res.path}?${q}`; };
  const pager = h('div', { class: 'pager' },
    offset > 0 ? h('a', { href: page(Math.max(0, offset - limit)) }, '← previous') : null,
    h('span', {}, `${total ? offset + 1 : 0}–${Math.min(offset + limit, total)} of ${total}`),
    offset + limit < total ? h('a', { href: page(offset + limit), id: 'next' }, 'next →') : null);
  show(h('h2', {}, res.title), bar, t, pager);
}

function datalist(id, source, prefix) {
  const dl = h('datalist', { id });
  if (!source) return dl;
  api('GET', `/${source}?limit=500`).then((r) => {
    for (const a of r.data || []) dl.append(h('option', { value: prefix + (a.name || a.id || a) }));
    if (prefix === '#') dl.append(h('option', { value: '#all' }));
  }).catch(() => {});
  return dl;
}

// ---------- detail ----------

async function detailView(res, id) {
  let r;
  try {
    r = await api('GET', `/${res.path}/${encodeURIComponent(id)}`);
  } catch (ex) {
    show(h('h2', {}, res.title), errorBox(ex));
    return;
  }
  const rec = r.data;
  // A router's tunneler identity (type Router, its router's id) goes only with its router.
  const routerIdentity = res.path === 'identities' && rec.typeId === 'Router';
  const actions = h('div', { class: 'toolbar' },
    res.noEdit ? null : h('a', { class: 'button', href: `#/r/${res.path}/${encodeURIComponent(id)}/edit`, id: 'edit' }, 'Edit'),
    res.noDelete || routerIdentity ? null : h('button', { type: 'button', class: 'danger', id: 'delete', onclick: async () => {
      if (!confirm(`Delete ${res.one} ${rec.name || rec.id}?`)) return;
      try {
        await api('DELETE', `/${res.path}/${encodeURIComponent(id)}`);
        go(`#/r/${res.path}`);
      } catch (ex) { actions.append(errorBox(ex)); }
    } }, 'Delete'),
    res.path === 'identities' ? h('a', { class: 'button', href: `#/why?identity=${encodeURIComponent(id)}` }, 'Why…') : null,
    res.path === 'edge-routers' || res.path === 'routers'
      ? h('a', { class: 'button', id: 'router-data-plane', href: `#/router/${encodeURIComponent(id)}` }, 'Links, terminators, circuits') : null,
    res.path === 'identities' || res.path === 'services'
      ? h('a', { class: 'button', id: 'network-view', href: `#/network?${res.path === 'identities' ? 'identity' : 'service'}=${encodeURIComponent(id)}` }, 'Network view') : null);
  const fields = h('dl', { class: 'fields', id: 'fields' },
    ...Object.entries(rec).filter(([k]) => k !== '_links' && k !== 'enrollment' && !k.startsWith('enrollment'))
      .flatMap(([k, v]) => [h('dt', {}, k), h('dd', { 'data-field': k }, fmt(v))]));
  const parts = [h('h2', {}, `${res.title}: ${rec.name || rec.id}`), actions];
  if (routerIdentity) {
    parts.push(h('p', { id: 'router-of' }, 'The tunneler of edge router ',
      h('a', { href: `#/r/edge-routers/${encodeURIComponent(id)}` }, rec.name),
      ': made, renamed and deleted with it (turn its isTunnelerEnabled off to delete it).'));
  } else if (res.path === 'edge-routers' && rec.isTunnelerEnabled) {
    parts.push(h('p', { id: 'router-identity' }, 'Its tunneler is the identity ',
      h('a', { href: `#/r/identities/${encodeURIComponent(id)}` }, rec.name), '.'));
  }
  const enr = enrollmentSection(res, rec);
  if (enr) parts.push(enr);
  parts.push(h('section', {}, h('h3', {}, 'Fields'), fields));
  const traffic = res.path === 'services' ? h('section', { id: 'traffic' }, h('h3', {}, 'Traffic, the last hour'), h('p', {}, 'Loading…')) : null;
  if (traffic) parts.push(traffic);
  const rel = h('section', { id: 'relations' });
  parts.push(rel);
  show(...parts);
  if (traffic) serviceTraffic(traffic, id);
  for (const sub of res.relations || []) {
    const box = h('div', { class: 'relation', 'data-relation': sub }, h('h3', {}, label(sub)), h('p', {}, 'Loading…'));
    rel.append(box);
    relationPage(box, res, id, sub, 0);
  }
}

// relationPage shows one page (10 records) of a record's related list, with
// links to the pages before and after it.
function relationPage(box, res, id, sub, offset) {
  const limit = 10;
  api('GET', `/${res.path}/${encodeURIComponent(id)}/${sub}?limit=${limit}&offset=${offset}`).then((x) => {
    const rows = x.data || [];
    const total = (x.meta && x.meta.pagination && x.meta.pagination.totalCount) || rows.length;
    const target = byPath[sub] ? sub : null;
    const cols = rows.length && rows[0].name !== undefined ? ['name', 'id'] : Object.keys(rows[0] || { id: '' }).filter((k) => k !== '_links').slice(0, 6);
    const pager = total > limit ? h('div', { class: 'pager' },
      offset > 0 ? h('button', { type: 'button', class: 'link prev', onclick: () => relationPage(box, res, id, sub, Math.max(0, offset - limit)) }, '← previous') : null,
      h('span', {}, `${offset + 1}–${Math.min(offset + limit, total)} of ${total}`),
      offset + limit < total ? h('button', { type: 'button', class: 'link next', onclick: () => relationPage(box, res, id, sub, offset + limit) }, 'next →') : null) : null;
    box.replaceChildren(h('h3', {}, `${label(sub)} (${total})`),
      rows.length ? table(cols, rows, null, target ? (row) => `#/r/${target}/${encodeURIComponent(row.id)}` : null) : h('p', { class: 'muted' }, 'none'),
      pager);
  }).catch((ex) => box.replaceChildren(h('h3', {}, label(sub)), errorBox(ex)));
}

function enrollmentSection(res, rec) {
  if (!res.enrollment) return null;
  const jwts = [];
  if (res.enrollment === 'identity') {
    for (const [method, e] of Object.entries(rec.enrollment || {})) {
      if (e && e.jwt) jwts.push({ label: `${method} enrollment`, jwt: e.jwt, id: e.id, expiresAt: e.expiresAt });
    }
  } else if (rec.enrollmentJwt) {
    jwts.push({ label: 'router enrollment', jwt: rec.enrollmentJwt, expiresAt: rec.enrollmentExpiresAt });
  }
  const sec = h('section', { id: 'enrollment' }, h('h3', {}, 'Enrollment'));
  const err = h('div', { class: 'error-slot' });
  if (!jwts.length) sec.append(h('p', { class: 'muted' }, 'No enrollment outstanding.'));
  for (const j of jwts) {
    const q = qrcode(0, 'L');
    q.addData(j.jwt);
    q.make();
    const img = h('img', { class: 'qr', id: 'enrollment-qr', alt: 'QR code of the enrollment JWT', src: q.createDataURL(3, 8) });
    const file = `${(rec.name || rec.id).replace(/[^A-Za-z0-9._-]/g, '_')}.jwt`;
    const dl = h('button', { type: 'button', id: 'download-jwt', onclick: () => {
      const url = URL.createObjectURL(new Blob([j.jwt], { type: 'application/jwt' }));
      const a = h('a', { href: url, download: file });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 1000);
    } }, `Download ${file}`);
    const refresh = j.id ? h('button', { type: 'button', id: 'refresh-enrollment', onclick: async () => {
      try {
        await api('POST', `/enrollments/${encodeURIComponent(j.id)}/refresh`, { expiresAt: new Date(Date.now() + 24 * 3600e3).toISOString() });
        route();
      } catch (ex) { err.replaceChildren(errorBox(ex)); }
    } }, 'Refresh (24 h from now)') : null;
    sec.append(h('div', { class: 'enroll' },
      h('div', {}, h('b', {}, j.label), j.expiresAt ? ` — expires ${j.expiresAt}` : '',
        h('textarea', { readonly: true, id: 'enrollment-jwt', rows: 5, cols: 70 }, j.jwt), h('div', {}, dl, refresh)),
      img));
  }
  if (res.path === 'edge-routers') {
    sec.append(h('button', { type: 'button', id: 're-enroll', onclick: async () => {
      try { await api('POST', `/${res.path}/${encodeURIComponent(rec.id)}/re-enroll`, {}); route(); } catch (ex) { err.replaceChildren(errorBox(ex)); }
    } }, 'Re-enroll'));
  } else if (res.path === 'identities' && !jwts.some((j) => j.label.startsWith('ott'))) {
    sec.append(h('button', { type: 'button', id: 're-enroll', onclick: async () => {
      try {
        await api('POST', '/enrollments', { identityId: rec.id, method: 'ott', expiresAt: new Date(Date.now() + 24 * 3600e3).toISOString() });
        route();
      } catch (ex) { err.replaceChildren(errorBox(ex)); }
    } }, 'New one-time-token enrollment'));
  }
  sec.append(err);
  return sec;
}

// ---------- forms ----------

function fieldInput(f, rec) {
  let v = rec ? rec[f.read || f.name] : f.value;
  if (rec && f.name === 'type' && v === undefined && rec.type) v = rec.type.name || rec.type;
  const id = `f-${f.name}`;
  const common = { id, name: f.name, 'data-field': f.name };
  let input;
  switch (f.type) {
    case 'bool':
      input = h('input', { ...common, type: 'checkbox', checked: !!v });
      break;
    case 'select':
      input = h('select', common, ...f.options.map((o) => h('option', { value: o, selected: o === (v ?? '') }, o || '—')));
      break;
    case 'number':
      input = h('input', { ...common, type: 'number', value: v ?? '' });
      break;
    case 'json':
      input = h('textarea', { ...common, rows: 4, cols: 60, placeholder: '{}' }, v === undefined || v === null ? '' : JSON.stringify(v, null, 2));
      break;
    case 'pem':
      input = h('textarea', { ...common, rows: 6, cols: 64, placeholder: '-----BEGIN CERTIFICATE-----' }, v || '');
      break;
    case 'list': case 'roles': case 'attrs': {
      const listId = `dl-${f.name}`;
      input = h('input', { ...common, value: (v || []).join(', '), size: 60, list: listId,
        placeholder: f.type === 'roles' ? '#attribute, @id, #all' : 'comma-separated' });
      const src = f.roleSource || f.attrSource || (f.type === 'attrs' ? current.res.attrSource : null);
      return [input, src ? datalist(listId, src, f.type === 'roles' ? '#' : '') : null];
    }
    case 'datetime':
      input = h('input', { ...common, value: v || new Date(Date.now() + 24 * 3600e3).toISOString() });
      break;
    case 'password':
      input = h('input', { ...common, type: 'password', autocomplete: 'new-password' });
      break;
    default:
      input = h('input', { ...common, value: v ?? '', placeholder: f.placeholder || '' });
  }
  return [input];
}

// readOnly marks a field's input read-only when ro is set.
function readOnly(inputs, ro) {
  if (ro && inputs[0]) inputs[0].readOnly = true;
  return inputs;
}

function readField(f, form) {
  const el = form.querySelector(`[name="${f.name}"]`);
  const raw = el.type === 'checkbox' ? el.checked : el.value;
  switch (f.type) {
    case 'bool': return raw;
    case 'number': return raw === '' ? undefined : Number(raw);
    case 'json':
      if (raw.trim() === '') return undefined;
      try { return JSON.parse(raw); } catch { throw new FieldError(f.name, 'is not valid JSON'); }
    case 'list': case 'roles': case 'attrs':
      return raw.split(/[,\n]/).map((s) => s.trim()).filter(Boolean);
    default:
      return raw === '' ? undefined : raw;
  }
}

class FieldError extends Error {
  constructor(field, reason) { super(reason); this.field = field; }
}

let current = {};

function formView(res, rec) {
  const editing = !!rec;
  // A router's tunneler identity (type Router) is named after its edge
  // router: the API refuses a new name, so the form shows it read-only.
  const followsRouter = editing && res.path === 'identities' && rec.typeId === 'Router';
  const fields = (res.fields || []).filter((f) => !(editing && f.createOnly))
    .map((f) => followsRouter && f.name === 'name'
      ? { ...f, readOnly: true, required: false, helpId: 'name-follows-router',
        help: 'It follows its edge router: rename the router to rename it.' }
      : f);
  const general = h('div', { class: 'error-slot', id: 'form-error' });
  const form = h('form', { class: 'card', id: 'resource-form', novalidate: true, onsubmit: async (e) => {
    e.preventDefault();
    form.querySelectorAll('.field-error').forEach((x) => x.replaceChildren());
    form.querySelectorAll('.invalid').forEach((x) => x.classList.remove('invalid'));
    general.replaceChildren();
    let body = {};
    try {
      for (const f of fields) {
        if (f.virtual || f.readOnly) continue;
        const v = readField(f, form);
        if (v !== undefined) body[f.name] = v;
      }
      body = shapeBody(res, body, form, editing);
      await namesToIDs(fields, body);
    } catch (ex) {
      if (ex instanceof FieldError) return markField(form, ex.field, ex.message, general);
      if (ex.status === 401) return;
      throw ex;
    }
    try {
      if (editing) {
        await api('PATCH', `/${res.path}/${encodeURIComponent(rec.id)}`, body);
        go(`#/r/${res.path}/${encodeURIComponent(rec.id)}`);
      } else {
        const r = await api('POST', `/${res.path}`, body);
        go(`#/r/${res.path}/${encodeURIComponent(r.data.id)}`);
      }
    } catch (ex) {
      if (ex instanceof APIError && ex.cause && ex.cause.field) {
        markField(form, ex.cause.field, `${ex.cause.reason || ex.message}`, general, ex);
      } else if (ex.status !== 401) {
        general.replaceChildren(errorBox(ex));
      }
    }
  } },
  ...fields.map((f) => h('div', { class: 'row', 'data-row': f.name },
    h('label', { for: `f-${f.name}` }, f.label || label(f.name) + (f.suffix || ''), f.required ? ' *' : ''),
    ...readOnly(fieldInput(f, rec), f.readOnly),
    f.help ? h('small', { class: 'help', id: f.helpId || null }, f.help) : null,
    h('div', { class: 'field-error', 'data-error-for': f.name, role: 'alert' }))),
  general,
  h('div', { class: 'toolbar' }, h('button', { type: 'submit', id: 'save' }, editing ? 'Save' : 'Create'),
    h('a', { href: editing ? `#/r/${res.path}/${encodeURIComponent(rec.id)}` : `#/r/${res.path}` }, 'Cancel')));
  show(h('h2', {}, editing ? `Edit ${res.one}: ${rec.name || rec.id}` : `New ${res.one}`), form);
  if (res.path === 'configs') schemaForm(form, rec);
}

// schemaForm gives a config's data a form built from its config type's JSON
// schema: a field for each property of a simple type (text, a list of values,
// a number, yes/no, a choice among the schema's values), above the JSON of
// the data, which each field writes into and which stays the value sent (so
// the properties of other types are still edited there).
function schemaForm(form, rec) {
  const data = form.querySelector('#f-data');
  const typeIn = form.querySelector('#f-configTypeId');
  const box = h('div', { id: 'schema-form', class: 'schema-form' });
  data.closest('.row').before(box);
  const load = async (ref) => {
    box.replaceChildren();
    if (!ref) return;
    let ct;
    try {
      ct = await lookup('config-types', ref);
    } catch (ex) { return; }
    const schema = ct && ct.schema;
    if (!schema) return;
    const deref = (n) => {
      for (let i = 0; n && n.$ref && i < 10; i++) n = n.$ref.replace(/^#\//, '').split('/').reduce((o, k) => (o == null ? undefined : o[k]), schema);
      return n || {};
    };
    const top = deref(schema); // host.v1's is a $ref to its definition
    if (!top.properties) return;
    const dataNow = () => { try { return JSON.parse(data.value || '{}') || {}; } catch (e) { return null; } };
    const write = (name, value) => {
      const obj = dataNow();
      if (obj === null) return; // the JSON does not parse: leave it to the person fixing it
      if (value === undefined) delete obj[name]; else obj[name] = value;
      data.value = JSON.stringify(obj, null, 2);
    };
    const required = new Set(top.required || []);
    const rows = [];
    for (const [name, raw] of Object.entries(top.properties).sort(([a], [b]) => a.localeCompare(b))) {
      const p = deref(raw);
      const items = p.type === 'array' ? deref(p.items) : null;
      const now = (dataNow() || {})[name];
      const id = `d-${name}`;
      let input;
      if (p.enum && p.enum.every((e) => typeof e === 'string')) {
        input = h('select', { id, onchange: (e) => write(name, e.target.value || undefined) },
          h('option', { value: '' }, '—'), ...p.enum.map((o) => h('option', { value: o, selected: o === now }, o)));
      } else if (p.type === 'string') {
        input = h('input', { id, value: now ?? '', oninput: (e) => write(name, e.target.value || undefined) });
      } else if (p.type === 'integer' || p.type === 'number') {
        input = h('input', { id, type: 'number', value: now ?? '', oninput: (e) => write(name, e.target.value === '' ? undefined : Number(e.target.value)) });
      } else if (p.type === 'boolean') {
        input = h('input', { id, type: 'checkbox', checked: !!now, onchange: (e) => write(name, e.target.checked) });
      } else if (items && (items.type === 'string' || (items.enum && items.enum.every((e) => typeof e === 'string')))) {
        input = h('input', { id, value: Array.isArray(now) ? now.join(', ') : '', placeholder: items.enum ? items.enum.join(', ') : 'comma-separated',
          oninput: (e) => write(name, e.target.value ? e.target.value.split(',').map((x) => x.trim()).filter(Boolean) : undefined) });
      } else {
        continue; // objects and lists of objects: in the JSON below
      }
      rows.push(h('div', { class: 'row' }, h('label', { for: id }, name, required.has(name) ? ' *' : ''), input,
        p.description ? h('small', { class: 'help' }, p.description) : null));
    }
    if (rows.length) box.replaceChildren(h('p', { class: 'muted' }, `Data of a ${ct.name} config (the JSON below holds the rest):`), ...rows);
  };
  if (typeIn) typeIn.addEventListener('change', () => load(typeIn.value.trim()));
  else if (rec) load(rec.configTypeId);
}

// namesToIDs lets the fields that refer to other records (f.ref: a
// service's configs, a config's type) take names, as the CLI does: each
// name becomes the record's id; an id is kept; anything else is an error at
// the field.
async function namesToIDs(fields, body) {
  for (const f of fields) {
    if (!f.ref || body[f.name] === undefined || body[f.name] === null) continue;
    const one = async (v) => {
      const rec = await lookup(f.ref, v);
      if (!rec) throw new FieldError(f.name, `no ${byPath[f.ref] ? byPath[f.ref].one : f.ref} named ${v}`);
      return rec.id;
    };
    body[f.name] = Array.isArray(body[f.name]) ? await Promise.all(body[f.name].map(one)) : await one(body[f.name]);
  }
}

// shapeBody turns the form's values into the API's body where they differ.
function shapeBody(res, body, form, editing) {
  if (res.path === 'identities' && !editing) {
    const m = body.enrollment;
    delete body.enrollment;
    if (m === 'ott') body.enrollment = { ott: true };
    if (m === 'updb') {
      const u = form.querySelector('[name="enrollmentUsername"]').value || body.name;
      body.enrollment = { updb: u };
    }
  }
  return body;
}

function markField(form, field, reason, general, ex) {
  const top = field.split(/[.[]/)[0];
  const slot = form.querySelector(`[data-error-for="${top}"]`);
  const input = form.querySelector(`[name="${top}"]`);
  if (!slot) {
    general.replaceChildren(errorBox(ex || `${field}: ${reason}`));
    return;
  }
  slot.replaceChildren(`${field}: ${reason}`);
  if (input) {
    input.classList.add('invalid');
    input.setAttribute('aria-invalid', 'true');
    input.focus();
  }
}

// ---------- why ----------

async function whyView() {
  const p = hashParams();
  const idIn = h('input', { id: 'why-identity', name: 'identity', value: p.get('identity') || '', list: 'why-identities', placeholder: 'identity name or id', size: 40 });
  const svcIn = h('input', { id: 'why-service', name: 'service', value: p.get('service') || '', list: 'why-services', placeholder: 'service name or id', size: 40 });
  const out = h('div', { id: 'why-result' });
  const names = (path, id) => {
    const dl = h('datalist', { id });
    api('GET', `/${path}?limit=500`).then((r) => r.data.forEach((x) => dl.append(h('option', { value: x.name })))).catch(() => {});
    return dl;
  };
  const form = h('form', { class: 'toolbar', id: 'why-form', onsubmit: async (e) => {
    e.preventDefault();
    out.replaceChildren(h('p', {}, 'Looking…'));
    try {
      const ident = await resolve('identities', idIn.value);
      const svc = await resolve('services', svcIn.value);
      const r = (await api('GET', `/identities/${encodeURIComponent(ident.id)}/policy-advice/${encodeURIComponent(svc.id)}`)).data;
      out.replaceChildren(adviceView(r));
      if (ident.typeId === 'Router') {
        out.prepend(h('p', { id: 'why-router-of' }, `${ident.name} is the tunneler of edge router `,
          h('a', { href: `#/r/edge-routers/${encodeURIComponent(ident.id)}` }, ident.name), '.'));
      }
    } catch (ex) {
      out.replaceChildren(errorBox(ex));
    }
  } }, idIn, names('identities', 'why-identities'), svcIn, names('services', 'why-services'), h('button', { type: 'submit', id: 'why-go' }, 'Why?'));
  show(h('h2', {}, 'Why: may this identity use this service?'), form, out);
  if (idIn.value && svcIn.value) form.requestSubmit();
}

async function resolve(path, v) {
  if (!v) throw new Error(`pick ${path === 'identities' ? 'an identity' : 'a service'}`);
  const rec = await lookup(path, v);
  if (!rec) throw new Error(`no ${path === 'identities' ? 'identity' : 'service'} named ${v}`);
  return rec;
}

// lookup finds the record of the resource at path whose name or id is v, or null.
async function lookup(path, v) {
  const r = await api('GET', `/${path}?limit=1&filter=${encodeURIComponent(`name = ${JSON.stringify(v)} or id = ${JSON.stringify(v)}`)}`);
  return r.data[0] || null;
}

// routerRefs lists policy advice's common routers with their state; a
// grant no online router can carry is said so.
function routerRefs(list) {
  if (!list.length) return h('p', { class: 'muted' }, 'none');
  const online = list.some((x) => x.isOnline);
  return h('div', { id: 'why-routers' },
    h('ul', {}, ...list.map((x) => h('li', { class: x.isOnline ? 'pass' : 'fail' },
      h('a', { href: `#/r/edge-routers/${encodeURIComponent(x.id)}` }, x.name || x.id), ` ${routerState(x)}`))),
    online ? null : h('p', { class: 'fail', id: 'why-no-router' }, 'None of these edge routers is online: the grant cannot be used until one is enrolled and running.'));
}

function adviceView(r) {
  const verdict = (ok, what) => h('div', { class: ok ? 'verdict yes' : 'verdict no', id: `why-${what.toLowerCase()}` }, `${what}: ${ok ? 'allowed' : 'not allowed'}`);
  const refs = (list, path) => (list && list.length ? h('ul', {}, ...list.map((x) => h('li', {}, h('a', { href: `#/r/${path}/${encodeURIComponent(x.id)}` }, x.name || x.id)))) : h('p', { class: 'muted' }, 'none'));
  // Each check of a granting policy, judged for every API session of the identity.
  const checks = (r.postureChecks || []).map((c) => {
    const sessions = c.apiSessions || [];
    const passing = sessions.some((x) => x.passed);
    return h('li', { class: passing ? 'pass' : 'fail' },
      `${c.name || c.id} (${c.policyType || ''} policy ${c.policyId || ''}): `,
      sessions.length ? sessions.map((x) => `session ${x.apiSessionId} ${x.passed ? 'passes' : `fails (expected ${fmt(x.expected)}, actual ${fmt(x.actual)})`}`).join('; ')
        : 'no API session to judge');
  });
  return h('div', { class: 'advice' },
    verdict(r.isDialAllowed, 'Dial'), verdict(r.isBindAllowed, 'Bind'),
    h('h3', {}, 'Dial policies'), refs(r.dialPolicies, 'service-policies'),
    h('h3', {}, 'Bind policies'), refs(r.bindPolicies, 'service-policies'),
    h('h3', {}, `Edge routers both may use (${(r.commonRouters || []).length}; the identity may use ${r.identityRouterCount}, the service ${r.serviceRouterCount})`),
    routerRefs(r.commonRouters || []),
    h('h3', {}, 'Posture checks'), checks.length ? h('ul', { id: 'why-checks' }, ...checks) : h('p', { class: 'muted' }, 'none'));
}

// ---------- events ----------

let streamAbort = null;
function stopStream() {
  if (streamAbort) streamAbort.abort();
  streamAbort = null;
}

// eventsTable is a table of events, said as the resource lists say theirs
// (headings in words, times relative with the exact time on hover); the
// live view prepends rows to its body.
function eventsTable(rows, id, bodyId) {
  return h('table', { class: 'events', id },
    h('thead', {}, h('tr', {}, ...['id', 'at', 'namespace', 'action', 'entityType', 'entityName', 'actor', 'changedFields'].map((c) => h('th', {}, label(c))))),
    h('tbody', { id: bodyId }, ...rows.map(eventRow)));
}

function eventRow(e) {
  return h('tr', { 'data-event-id': e.id }, h('td', {}, e.id), h('td', {}, cellOf(e.at)), h('td', {}, e.namespace), h('td', {}, e.action),
    h('td', {}, e.entityType || ''), h('td', {}, e.entityName || e.entityId || ''),
    h('td', {}, (e.actor && (e.actor.identityName || e.actor.nodeId)) || ''), h('td', {}, fmt(e.changedFields)));
}

function eventsView() {
  const p = hashParams();
  const filter = h('input', { id: 'events-filter', name: 'filter', value: p.get('filter') || '', placeholder: 'namespace = "entity" and entityType = "identities"', size: 60 });
  const status = h('span', { id: 'stream-status', class: 'muted' }, 'connecting…');
  const t = eventsTable([], 'events', 'events-body');
  const body = t.querySelector('tbody');
  show(h('h2', {}, 'Events'),
    h('form', { class: 'toolbar', onsubmit: (e) => { e.preventDefault(); go(`#/events?filter=${encodeURIComponent(filter.value)}`); } },
      filter, h('button', { type: 'submit' }, 'Apply'), status), t);
  stream(filter.value, body, status);
}

// stream reads /events/stream with fetch (EventSource cannot send the
// session header), from the last 50 events on, and resumes after a drop.
async function stream(filter, body, status) {
  stopStream();
  const ctl = new AbortController();
  streamAbort = ctl;
  let last = null;
  try {
    const recent = await api('GET', '/events?filter=' + encodeURIComponent((filter ? `(${filter}) ` : '') + 'sort by id desc') + '&limit=50');
    for (const e of (recent.data || []).reverse()) body.prepend(eventRow(e));
    last = recent.data && recent.data.length ? recent.data[recent.data.length - 1].id : null;
  } catch (ex) {
    status.replaceChildren(errorBox(ex));
    return;
  }
  while (!ctl.signal.aborted) {
    try {
      const qs = new URLSearchParams();
      if (filter) qs.set('filter', filter);
      const headers = { 'svc-session': sessionStorage.getItem(TOKEN) || '', Accept: 'text/event-stream' };
      if (last !== null) headers['Last-Event-ID'] = String(last);
      const resp = await fetch(`${MGMT}/events/stream?${qs}`, { headers, signal: ctl.signal, cache: 'no-store', credentials: 'omit' });
      if (resp.status === 401) { toLogin('Your session has ended; log in again.'); return; }
      if (!resp.ok) {
        const b = await resp.json().catch(() => null);
        status.replaceChildren(errorBox(new APIError(resp.status, b)));
        return;
      }
      status.replaceChildren('live');
      status.className = 'live';
      const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const chunk = buf.slice(0, i);
          buf = buf.slice(i + 2);
          let data = '';
          let ev = 'message';
          for (const line of chunk.split('\n')) {
            if (line.startsWith('data:')) data += line.slice(5).trim();
            else if (line.startsWith('event:')) ev = line.slice(6).trim();
          }
          if (!data || ev !== 'message') continue;
          let parsed;
          try { parsed = JSON.parse(data); } catch { continue; }
          for (const e of Array.isArray(parsed) ? parsed : (parsed.events || [parsed])) {
            if (e && e.id !== undefined) {
              body.prepend(eventRow(e));
              last = e.id;
            }
          }
          while (body.children.length > 500) body.lastChild.remove();
        }
      }
    } catch (ex) {
      if (ctl.signal.aborted) return;
    }
    status.replaceChildren('reconnecting…');
    status.className = 'muted';
    await new Promise((r) => setTimeout(r, 1000));
  }
}

// ---------- routing ----------

// resourcesError says the resources could not be loaded, with a Retry that
// loads them again and draws the page and the navigation.
function resourcesError(ex) {
  const retry = h('button', { type: 'button', id: 'retry', onclick: () => { retry.disabled = true; route(); } }, 'Retry');
  return h('section', { id: 'resources-error' }, h('h2', {}, 'The resources could not be loaded'),
    h('p', {}, 'The console builds its resource pages from the API description this node serves (',
      h('code', {}, `GET ${MGMT}/specs/edge-management/spec`), '), and it did not load:'),
    errorBox(ex), retry);
}

async function route() {
  const hash = location.hash || '#/';
  const path = hash.slice(1).split('?')[0];
  if (!path.startsWith('/events')) stopStream();
  stopLive();
  if (path === '/login') return loginView();
  if (!sessionStorage.getItem(TOKEN)) return toLogin('');
  document.body.classList.remove('anon');
  nav();
  if (!resources.length) { // once: the resources come from the served API document
    try {
      await loadResources(async () => (await api('GET', '/specs/edge-management/spec')).data);
    } catch (ex) {
      if (ex.status !== 401) show(resourcesError(ex));
      return;
    }
    nav();
  }
  document.querySelectorAll('#nav a').forEach((a) => a.classList.toggle('active', hash.startsWith(a.getAttribute('href')) && a.getAttribute('href') !== '#/' || (hash === '#/' && a.getAttribute('href') === '#/')));
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  try {
    if (parts.length === 0) return await overview();
    if (parts[0] === 'why') return await whyView();
    if (parts[0] === 'events') return eventsView();
    if (parts[0] === 'network') return await networkView();
    if (parts[0] === 'circuits' && parts.length === 1) return await circuitsView();
    if (parts[0] === 'topology') return await topologyView();
    if (parts[0] === 'router' && parts[1]) return await routerView(parts[1]);
    if (parts[0] === 'r' && byPath[parts[1]]) {
      const res = byPath[parts[1]];
      current = { res };
      if (parts.length === 2) return await listView(res);
      if (parts[2] === 'new') return formView(res, null);
      if (parts[3] === 'edit') {
        const r = await api('GET', `/${res.path}/${encodeURIComponent(parts[2])}`);
        return formView(res, r.data);
      }
      return await detailView(res, parts[2]);
    }
    show(h('h2', {}, 'Not found'), h('p', {}, `Nothing at ${hash}.`));
  } catch (ex) {
    if (ex.status !== 401) show(errorBox(ex));
  }
}

window.addEventListener('hashchange', route);
route();

// What the data plane's pages (dataplane.js) share with the others.
export { h, api, show, errorBox, cellOf, barChart };
