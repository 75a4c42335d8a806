// A worker (module) that reads the problems page's whole id list off the
// page's main thread: problem.get with short output for up to 100,000
// problems is megabytes of JSON, and parsing it, sorting it and
// collecting the garbage on the main thread held clicks and frames for
// tens of milliseconds on a shared core, a filter clicked meanwhile
// waited for it. Here the fetch, the parse and the sort run beside the
// page; the page gets four typed arrays (moved, not copied) and builds
// its rows from them.
//
// Messages in: {seq, params, csrf, order} (a request; order 'severity'
// sorts by severity, clock, id, newest first, else the server's order is
// kept) and {abort: seq} (a superseded request: its fetch is cancelled,
// its answer never parsed). Out: {seq, eventid, objectid, severity,
// clock, timing} or {seq, error: {status, message, code, data}}.
// Timing is on the epoch clock (timeOrigin + now): a worker's
// performance.now() starts at the worker's own origin.

const running = new Map(); // seq -> AbortController

const epoch = () => performance.timeOrigin + performance.now();

self.onmessage = (ev) => {
  const m = ev.data;
  if (m.abort !== undefined) {
    const ac = running.get(m.abort);
    if (ac) ac.abort();
    running.delete(m.abort);
    return;
  }
  read(m).catch((e) => {
    if (e.name !== 'AbortError') self.postMessage({ seq: m.seq, error: { message: String(e.message || e) } });
  }).finally(() => running.delete(m.seq));
};

async function read(m) {
  const ac = new AbortController();
  running.set(m.seq, ac);
  const timing = { sent: epoch() };
  const r = await fetch('/ui/api', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json-rpc', 'X-CSRF-Token': m.csrf },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'problem.get', params: m.params, id: m.seq }),
    signal: ac.signal,
  });
  if (!r.ok) {
    self.postMessage({ seq: m.seq, error: { status: r.status, message: `API: HTTP ${r.status}: ${(await r.text()).trim()}` } });
    return;
  }
  const res = await r.json();
  if (ac.signal.aborted) return;
  if (res.error) {
    self.postMessage({ seq: m.seq, error: res.error });
    return;
  }
  const list = res.result;
  const n = list.length;
  let out = {
    seq: m.seq,
    eventid: new Float64Array(n), objectid: new Float64Array(n),
    severity: new Uint8Array(n), clock: new Float64Array(n),
  };
  for (let k = 0; k < n; k++) {
    const x = list[k];
    out.eventid[k] = Number(x.eventid);
    out.objectid[k] = Number(x.objectid);
    out.severity[k] = Number(x.severity);
    out.clock[k] = Number(x.clock);
  }
  if (m.order === 'severity') {
    const { eventid: id, severity: sev, clock: clk } = out;
    const order = new Uint32Array(n);
    for (let i = 0; i < n; i++) order[i] = i;
    order.sort((a, b) => sev[b] - sev[a] || clk[b] - clk[a] || id[b] - id[a]);
    const by = { seq: m.seq, eventid: new Float64Array(n), objectid: new Float64Array(n), severity: new Uint8Array(n), clock: new Float64Array(n) };
    for (let k = 0; k < n; k++) {
      const i = order[k];
      by.eventid[k] = id[i];
      by.objectid[k] = out.objectid[i];
      by.severity[k] = sev[i];
      by.clock[k] = clk[i];
    }
    out = by;
  }
  const st = /api;dur=([0-9.]+)/.exec(r.headers.get('Server-Timing') || '');
  timing.answered = epoch();
  timing.server = st ? Number(st[1]) : -1;
  out.timing = timing;
  self.postMessage(out, [out.eventid.buffer, out.objectid.buffer, out.severity.buffer, out.clock.buffer]);
}
