// The UI's only data path: JSON-RPC calls to the API through /ui/api,
// where the server attaches this session's credentials (the session
// cookie is HttpOnly: no script here can read it). Every call carries the
// CSRF token that /ui/session hands out.

let session = null;

export class APIError extends Error {
  constructor(method, e) {
    super(`${method}: ${e.message} ${e.data || ''}`.trim());
    this.code = e.code;
    this.data = e.data || '';
  }
}

// loadSession fetches who is logged in and the CSRF token; without a
// session the server answers 401 and the app goes to the login page.
export async function loadSession() {
  // The page carries them (meta elements, no round trip); /ui/session
  // is the fallback.
  const meta = (n) => document.querySelector(`meta[name="${n}"]`)?.content;
  if (meta('peregrine-csrf')) {
    session = { username: meta('peregrine-user'), csrf: meta('peregrine-csrf') };
    return session;
  }
  const r = await fetch('/ui/session', { credentials: 'same-origin', cache: 'no-store' });
  if (r.status === 401) {
    location.assign('/login');
    throw new Error('not logged in');
  }
  if (!r.ok) throw new Error(`/ui/session: HTTP ${r.status}`);
  session = await r.json();
  return session;
}

export function currentSession() { return session; }

// mayOpen tells whether the server lets this user open a page (the
// paths it listed in the document; without the list, every page).
export function mayOpen(path) {
  const m = document.querySelector('meta[name="peregrine-pages"]');
  if (!m) return true;
  return m.content.split(' ').includes(path);
}

// mayDo tells whether the user's role allows an action rule the server
// lists (manage_api_tokens, manage_sla; without the list, every one):
// a page hides what the API would refuse.
export function mayDo(action) {
  const m = document.querySelector('meta[name="peregrine-actions"]');
  if (!m) return true;
  return m.content.split(' ').includes(action);
}

// userType is the user's type (1 User, 2 Admin, 3 Super admin; 3
// without the page's meta).
export function userType() {
  const m = document.querySelector('meta[name="peregrine-type"]');
  return m ? Number(m.content) || 3 : 3;
}

let nextID = 1;

// post sends one JSON-RPC body. opts (optional): signal (an
// AbortSignal: a superseded request is dropped, its answer never
// parsed) and timing (an object filled with sent, answered — page
// clock, ms — and server: the API's own time from the Server-Timing
// header, for the page's measurements).
async function post(body, opts = {}) {
  const t = opts.timing;
  if (t) t.sent = performance.now();
  const r = await fetch('/ui/api', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json-rpc', 'X-CSRF-Token': session.csrf },
    body: JSON.stringify(body),
    signal: opts.signal,
  });
  if (r.status === 401) {
    location.assign('/login');
    throw new Error('session ended');
  }
  if (!r.ok) throw new Error(`API: HTTP ${r.status}: ${(await r.text()).trim()}`);
  const res = await r.json();
  if (t) {
    t.answered = performance.now();
    const m = /api;dur=([0-9.]+)/.exec(r.headers.get('Server-Timing') || '');
    t.server = m ? Number(m[1]) : -1;
  }
  return res;
}

// call runs one API method and returns its result or throws APIError
// (an AbortError when opts.signal aborted it; see post for opts).
export async function call(method, params, opts) {
  const res = await post({ jsonrpc: '2.0', method, params, id: nextID++ }, opts);
  if (res.error) {
    if (/re-login|Not authorized/.test(res.error.data || '')) location.assign('/login');
    throw new APIError(method, res.error);
  }
  return res.result;
}

// batch runs several calls in one request (a JSON-RPC batch) and returns
// one entry per call: {result} or {error: APIError}, in order (opts as
// for call).
export async function batch(calls, opts) {
  const base = nextID;
  nextID += calls.length;
  const res = await post(calls.map((c, i) => ({ jsonrpc: '2.0', method: c[0], params: c[1], id: base + i })), opts);
  const byID = new Map(res.map((r) => [r.id, r]));
  return calls.map((c, i) => {
    const r = byID.get(base + i);
    if (!r) return { error: new APIError(c[0], { message: 'no answer', data: '' }) };
    return r.error ? { error: new APIError(c[0], r.error) } : { result: r.result };
  });
}

// hasMethod tells whether the server knows an API method (problem.get
// comes with the trigger engine): "Incorrect API"/"Incorrect method" is
// code -32601.
export async function hasMethod(method, params) {
  try {
    await call(method, params);
    return true;
  } catch (e) {
    if (e instanceof APIError && e.code === -32601) return false;
    throw e;
  }
}
