// API access: every call goes through request(), which sends the API key kept for this browser session
// and turns problem+json bodies into ApiError values.

const KEY = 'guard.apiKey';

export class ApiError extends Error {
  constructor(status, body) {
    super((body && (body.detail || body.title)) || `HTTP ${status}`);
    this.status = status;
    this.code = body && body.error_code;
    this.problems = (body && body.errors) || [];
  }
}

export const session = {
  get key() { return sessionStorage.getItem(KEY) || ''; },
  set key(v) { if (v) sessionStorage.setItem(KEY, v); else sessionStorage.removeItem(KEY); },
  readOnly: false,
  // canApprove: the key may decide approval requests (an admin key, or a key with the approve permission).
  canApprove: true,
  onAuthNeeded: null,
};

export async function request(method, path, body) {
  const headers = { 'Accept': 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (session.key) headers['X-API-Key'] = session.key;
  const res = await fetch('/api/v1' + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  let data = null;
  const text = await res.text();
  if (text) { try { data = JSON.parse(text); } catch { data = null; } }
  if (!res.ok) {
    const err = new ApiError(res.status, data);
    if (res.status === 401 && session.onAuthNeeded) session.onAuthNeeded(err);
    throw err;
  }
  return data;
}

export const api = {
  get: (p) => request('GET', p),
  post: (p, b) => request('POST', p, b === undefined ? {} : b),
  put: (p, b) => request('PUT', p, b),
  patch: (p, b) => request('PATCH', p, b),
  del: (p) => request('DELETE', p),
};

export function qs(params) {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') u.set(k, v);
  const s = u.toString();
  return s ? '?' + s : '';
}

// probeAccess finds out what the key may do from GET /access (admin: change controls, links, agents;
// approve: decide approval requests, an admin key or a key with the approve permission). A server
// before that route (404) is probed the old way: POST /controls/validate is an admin route, so a
// regular key gets 403 there while an admin key (or no auth at all) gets a validation answer.
export async function probeAccess() {
  try {
    const a = await api.get('/access');
    session.readOnly = !a.admin;
    session.canApprove = !!a.approve;
    return !session.readOnly;
  } catch (e) {
    if (e.status === 401) throw e;
    if (e.status !== 404) { session.readOnly = true; session.canApprove = false; return false; }
  }
  try {
    await api.post('/controls/validate', { data: {} });
    session.readOnly = false;
  } catch (e) {
    if (e.status === 401) throw e;
    session.readOnly = e.status === 403;
  }
  session.canApprove = !session.readOnly;
  return !session.readOnly;
}

// evaluatorList turns GET /evaluators (a map from evaluator name to its info, the reference's shape) into
// a list sorted by name; it also reads the {"evaluators": [...]} of servers before it.
export function evaluatorList(r) {
  if (r && Array.isArray(r.evaluators)) return r.evaluators;
  return Object.entries(r || {}).map(([name, ev]) => ({ ...ev, name: ev.name || name }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
