import { formatUnitsUI } from './units.js';

// DOM helpers. Every user-provided string reaches the page through
// textContent or an attribute set with setAttribute/properties, never
// through HTML parsing of a string: a host named
// <script>alert(1)</script> is text.

// h builds an element: h('td', {class: 'x', onclick: f}, child, 'text').
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
      else if (k === 'class') el.className = v;
      else if (k === 'dataset') Object.assign(el.dataset, v);
      else if (k === 'value' || k === 'checked' || k === 'selected') el[k] = v;
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

// debounce delays f until calls stop for ms (search boxes).
export function debounce(f, ms) {
  let t = 0;
  return (...a) => {
    clearTimeout(t);
    t = setTimeout(() => f(...a), ms);
  };
}

export const SEVERITIES = ['Not classified', 'Information', 'Warning', 'Average', 'High', 'Disaster'];

export function fmtTime(sec) {
  if (!sec || sec === '0') return '';
  const d = new Date(Number(sec) * 1000);
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

export function fmtAge(sec, now = Date.now() / 1000) {
  if (!sec || sec === '0') return '';
  return fmtDuration(now - Number(sec));
}

// fmtDuration formats seconds as the two largest units ("3d 4h").
export function fmtDuration(sec) {
  let s = Math.max(0, Math.round(Number(sec)));
  const parts = [];
  for (const [u, n] of [['d', 86400], ['h', 3600], ['m', 60]]) {
    if (s >= n) {
      parts.push(Math.floor(s / n) + u);
      s %= n;
    }
  }
  parts.push(s + 's');
  return parts.slice(0, 2).join(' ');
}

// fmtValue formats a value with its units as Zabbix does (units.js,
// the server's rules): numeric values only; text as it is.
export function fmtValue(v, units, valueType) {
  if (v === undefined || v === null || v === '') return '';
  if (valueType !== undefined && !['0', '3'].includes(String(valueType))) return v;
  // Numbers the page computed (graph axes, changes) without units are
  // shown to four decimals at most.
  if (!units && typeof v === 'number') return String(Math.round(v * 10000) / 10000);
  return formatUnitsUI(v, units);
}

// zabbixSeconds parses a Zabbix time value ("90d", "1h", "3600").
export function zabbixSeconds(s) {
  const m = /^(\d+)([smhdw]?)$/.exec(String(s || '').trim());
  if (!m) return 0;
  return Number(m[1]) * ({ '': 1, s: 1, m: 60, h: 3600, d: 86400, w: 604800 })[m[2]];
}
