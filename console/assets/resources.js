// The Management API's resources as the console shows them, read from the
// OpenAPI document the node serves: the resources, their titles, columns,
// related lists and operations from x-edgectl-resources, and each form's
// fields from the request body schemas of the create (POST /path) and the
// edit (PATCH /path/{id}), with their x-edgectl-* keywords (api/describe.go).
// Nothing here is written per resource: a resource the API gains shows up
// here with its forms.
//
// Field types: text, number, bool, select (options), list (strings, one per
// line or comma-separated), roles (a list of role selectors, completed from
// roleSource), attrs (role attributes, completed from attrSource), json (an
// object), pem (a PEM text), password, datetime.

export const resources = [];
export const byPath = {};

let loading = null;

// loadResources fills resources and byPath from the served document, once.
export function loadResources(fetchSpec) {
  if (!loading) {
    loading = fetchSpec().then((doc) => describe(doc)).catch((ex) => { loading = null; throw ex; });
  }
  return loading;
}

function describe(doc) {
  const described = doc['x-edgectl-resources'] || [];
  const attrsOf = Object.fromEntries(described.map((r) => [r.path, r.attrs]));
  const body = (path, method) => {
    const op = (doc.paths[path] || {})[method];
    const content = op && op.requestBody && op.requestBody.content['application/json'];
    return content ? content.schema : null;
  };
  resources.length = 0;
  for (const r of described) {
    if (!r.columns) continue; // not a list people browse (circuits)
    const create = r.create ? body(`/${r.path}`, 'post') : null;
    const edit = r.update ? body(`/${r.path}/{id}`, 'patch') : null;
    const res = {
      path: r.path, title: r.title, one: r.one, columns: r.columns, relations: r.relations || [],
      roles: !!r.attrs, attrSource: r.attrs, enrollment: r.enrollment,
      noCreate: !create, noEdit: !edit, noDelete: !r.delete,
      fields: create ? formFields(create, edit, attrsOf) : edit ? formFields(edit, edit, attrsOf) : [],
    };
    if (r.enrollment === 'identity') enrollmentChoice(res);
    resources.push(res);
    byPath[r.path] = res;
  }
  return resources;
}

// formFields are a create body's fields in the order the API gives them,
// each marked createOnly when the edit does not take it (a resource the API
// changes but does not create, such as links, has the edit's fields).
function formFields(create, edit, attrsOf) {
  const order = create['x-edgectl-order'] || Object.keys(create.properties);
  const required = new Set(create.required || []);
  const editable = new Set(edit ? Object.keys(edit.properties) : []);
  return order.map((name) => {
    const f = formField(name, create.properties[name], required.has(name), attrsOf);
    if (!editable.has(name)) f.createOnly = true;
    return f;
  });
}

function formField(name, sc, required, attrsOf) {
  const f = {
    name, required, label: sc['x-edgectl-label'], help: sc.description, placeholder: sc['x-edgectl-placeholder'],
    ref: sc['x-edgectl-ref'], read: sc['x-edgectl-read'], value: sc['x-edgectl-value'] ?? sc.default,
  };
  const input = sc['x-edgectl-input'];
  if (input) f.type = input;
  else if (sc.enum) {
    f.type = 'select';
    f.options = required ? sc.enum : ['', ...sc.enum];
  } else if (sc.type === 'boolean') f.type = 'bool';
  else if (sc.type === 'integer' || sc.type === 'number') f.type = 'number';
  else if (sc.format === 'date-time') f.type = 'datetime';
  else if (sc.type === 'array') {
    if (sc['x-edgectl-roles']) {
      f.type = 'roles';
      f.roleSource = attrsOf[sc['x-edgectl-roles']];
    } else f.type = name === 'roleAttributes' ? 'attrs' : 'list';
  } else if (sc.type === 'string') f.type = 'text';
  else f.type = 'json';
  if (f.type === 'attrs' && sc['x-edgectl-attrs']) f.attrSource = sc['x-edgectl-attrs'];
  if (f.type === 'select' && f.value === undefined && required) f.value = f.options[0];
  if (f.ref) f.suffix = sc.type === 'array' ? ' (names)' : ' (name)';
  else if (f.type === 'json') f.suffix = sc.type === 'array' ? ' (JSON array)' : ' (JSON)';
  return f;
}

// enrollmentChoice shows an identity create's enrollment object as a choice
// of method, and a username for a password enrollment (shapeBody in app.js
// turns them back into the object).
function enrollmentChoice(res) {
  const i = res.fields.findIndex((f) => f.name === 'enrollment');
  if (i < 0) return;
  const e = res.fields[i];
  res.fields.splice(i, 1,
    { ...e, type: 'select', options: ['ott', 'updb', ''], value: 'ott' },
    { name: 'enrollmentUsername', type: 'text', label: 'Username (updb enrollment)', createOnly: true, virtual: true });
}
