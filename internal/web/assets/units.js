// Units: a numeric value with its item's units as Zabbix 6.0 shows it,
// the same rules as the server's internal/zbx/units (recorded from the
// real Zabbix 6.0.14; units_test.go in internal/web checks that both
// give the same text for a table of cases):
//   - no units: the value as it is;
//   - "s": years (365 d), months (30 d, "M"), days, hours, minutes,
//     seconds, milliseconds; at most three units from the largest that is
//     not zero, zero ones left out; "0s", "< 1ms", a minus sign;
//   - "uptime": "HH:MM:SS", after "N days, " from a day on;
//   - "unixtime": "2006.01.02 15:04:05" (here: the browser's zone), from
//     a whole second after the epoch on ("0 unixtime" before);
//   - units starting with "!": no conversion, the "!" dropped;
//   - "%", "ms", "rpm", "RPM": no prefix;
//   - anything else: K, M, G, T (1024-based for "B" and "Bps"), two
//     decimals at most, trailing zeros dropped ("1.4 GB").
// No DOM here: the module runs in workers and in tests under node too.

const NO_PREFIX = new Set(['%', 'ms', 'rpm', 'RPM']);

// number prints f as Zabbix does after scaling: an integer as it is,
// anything else with two decimals, rounded half to even as Go's
// strconv does on exact ties (x.125, x.375, ...), trailing zeros dropped.
function number(f) {
  if (f === Math.round(f)) return f.toFixed(0);
  let s;
  if (Number.isInteger(f * 8) && !Number.isInteger(f * 4)) {
    const lo = Math.floor(f * 100);
    s = ((lo % 2 === 0 ? lo : lo + 1) / 100).toFixed(2);
  } else {
    s = f.toFixed(2);
  }
  return s.replace(/0+$/, '').replace(/\.$/, '');
}

const DURATION = [[365 * 86400000, 'y'], [30 * 86400000, 'M'], [86400000, 'd'], [3600000, 'h'], [60000, 'm'], [1000, 's'], [1, 'ms']];

function duration(f) {
  if (f === 0) return '0s';
  let minus = '';
  if (f < 0) { minus = '-'; f = -f; }
  let ms = Math.round(f * 1000);
  if (ms === 0) return `${minus}< 1ms`;
  const parts = [];
  let first = -1;
  for (let i = 0; i < DURATION.length; i++) {
    const [size, name] = DURATION[i];
    const n = Math.floor(ms / size);
    ms -= n * size;
    if (first < 0) {
      if (n === 0) continue;
      first = i;
    }
    if (i > first + 2) break;
    if (n > 0) parts.push(`${n}${name}`);
  }
  return minus + parts.join(' ');
}

const pad2 = (n) => String(n).padStart(2, '0');

function uptime(f) {
  let secs = Math.trunc(f);
  let minus = '';
  if (secs < 0) { minus = '-'; secs = -secs; }
  const days = Math.floor(secs / 86400);
  secs %= 86400;
  const hms = `${pad2(Math.floor(secs / 3600))}:${pad2(Math.floor(secs % 3600 / 60))}:${pad2(secs % 60)}`;
  if (days === 0) return minus + hms;
  return `${minus}${days} ${days === 1 ? 'day' : 'days'}, ${hms}`;
}

// civil turns days since 1970-01-01 into [year, month, day] (proleptic
// Gregorian, any range: JavaScript's Date stops at year 275760, Go's
// time does not).
function civil(days) {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d];
}

// unixtime formats seconds in zone: 'UTC' or undefined (the browser's).
function unixtime(f, zone) {
  let secs = Math.trunc(f);
  if (zone !== 'UTC') secs -= new Date(secs * 1000).getTimezoneOffset() * 60 || 0;
  const days = Math.floor(secs / 86400);
  const rest = secs - days * 86400;
  const [y, m, d] = civil(days);
  return `${y}.${pad2(m)}.${pad2(d)} ${pad2(Math.floor(rest / 3600))}:${pad2(Math.floor(rest % 3600 / 60))}:${pad2(rest % 60)}`;
}

// formatUnits returns v (a value as history keeps it) with units
// applied; a value that is not a number is returned as it is. zone:
// 'UTC' or undefined (the browser's zone) for unixtime.
export function formatUnits(v, units, zone) {
  v = String(v ?? '');
  if (!units) return v;
  const t = v.trim();
  // Go's ParseFloat: a decimal or hex number, "inf"/"nan" are refused
  // below; JS Number('') is 0, which Go refuses.
  if (t === '' || !/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t)) return v;
  let f = Number(t);
  if (!Number.isFinite(f)) return v;
  if (units.startsWith('!')) return `${f < 0 ? '-' : ''}${number(Math.abs(f))} ${units.slice(1)}`;
  switch (units) {
    case 's': return duration(f);
    case 'uptime': return uptime(f);
    case 'unixtime': if (Math.trunc(f) > 0) return unixtime(f, zone); break;
  }
  let minus = '';
  if (f < 0) { minus = '-'; f = -f; }
  let prefix = '';
  if (!NO_PREFIX.has(units)) {
    const base = units === 'B' || units === 'Bps' ? 1024 : 1000;
    for (const p of ['K', 'M', 'G', 'T']) {
      if (f < base) break;
      f /= base;
      prefix = p;
    }
  }
  return `${minus}${number(f)} ${prefix}${units}`;
}

// The Zabbix 6.0 frontend's rules (latest data, graphs, widgets: what
// its pages format themselves; problem names and operational data come
// formatted by the server, formatUnits above). Recorded from 6.0.14's
// frontend (testdata/frontend-units.json, units_test.go):
//   - numbers keep up to 4 decimals unscaled ("12.3457 %"), 4
//     significant digits under 1 ("0.001235 W"), 2 decimals once scaled;
//     15 significant digits at most, beyond them exponent notation;
//   - no prefix for "%", "ms", "rpm", "RPM", units starting with "!"
//     (the "!" dropped), values under 1 and no units; else K, M, G, T,
//     P, E, Z, Y (1024-based for "B" and "Bps"), none on a zero result;
//   - "unixtime": "2006-01-02 15:04:05" in the browser's zone;
//   - "uptime": rounded to the second; "s": "0" for zero and
//     milliseconds with decimals ("0.4ms").

const P = 15;
const expOf = (n) => Number(n.toExponential(P - 1).split('e')[1]);
const sigDigits = (n) => Math.max(1, n.toExponential(P - 1).split('e')[0].replace(/[-.]/g, '').replace(/0+$/, '').length);
// roundTo rounds half away from zero to d decimals (d may be negative).
function roundTo(v, d) {
  const s = Math.sign(v);
  const a = Math.abs(v);
  if (d >= 0) {
    const [m, ex] = a.toExponential().split('e');
    return s * Number(`${Math.round(Number(`${m}e${Number(ex) + d}`))}e-${d}`);
  }
  const f = 10 ** -d;
  return s * Math.round(a / f) * f;
}
const expText = (n, d) => n.toExponential(d).toUpperCase().replace(/E([+-])(\d)$/, 'E$1$2');

// uiNumber prints x with up to d decimals as the frontend does.
function uiNumber(x, d) {
  if (x === 0) return '0';
  const e = expOf(x);
  let n;
  let digits;
  if (e < 0) {
    for (let i = 1; i >= 0; i--) {
      const t = roundTo(x, d - e - i);
      n = Number(t.toExponential(P - 1));
      digits = sigDigits(t);
      if (digits - e <= P) break;
    }
  } else {
    n = x;
    if (e >= P) {
      if (e >= P || roundTo(x, P - e - 1) !== x) n = roundTo(x, d - e);
    } else {
      n = roundTo(x, Math.min(d, P - e - 1));
    }
    n = Number(n.toExponential(P - 1));
    digits = sigDigits(n);
  }
  if (n === 0) return '0';
  const e2 = expOf(n);
  if (e2 < 0) return digits - e2 <= P ? n.toFixed(digits - e2 - 1) : expText(n, Math.min(digits - 1, d));
  if (e2 >= P) return expText(n, Math.min(digits - 1, d));
  return n.toFixed(Math.max(0, Math.min(digits - e2 - 1, d)));
}

function uiDuration(f) {
  const abs = Math.abs(f);
  let secs = Math.floor(abs);
  const parts = [];
  let start = null;
  const sizes = [[31536000, 'y'], [2592000, 'M'], [86400, 'd'], [3600, 'h'], [60, 'm']];
  for (let level = 0; level < sizes.length; level++) {
    const [size, name] = sizes[level];
    const v = Math.floor(secs / size);
    if (v > 0) {
      parts.push(`${uiNumber(v, 2)}${name}`);
      secs -= v * size;
      if (start === null) start = level;
    }
    if (start !== null && level - start >= 2) break;
  }
  if (start === null || start >= 3) {
    if (secs > 0) parts.push(`${uiNumber(secs, 2)}s`);
    if (start === null || start >= 4) {
      const ms = (abs % 1) * 1000;
      if (ms > 0) parts.push(`${uiNumber(Number(uiNumber(ms, 2)), 2)}ms`);
    }
  }
  return parts.length ? (f < 0 ? '-' : '') + parts.join(' ') : '0';
}

// formatUnitsUI returns v with units as the Zabbix 6.0 frontend shows
// it; zone 'UTC' or undefined (the browser's) for unixtime.
export function formatUnitsUI(v, units, zone) {
  v = String(v ?? '');
  const t = v.trim();
  if (t === '' || !/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t)) return v;
  const f = Number(t);
  if (!Number.isFinite(f)) return v;
  units = units || '';
  if (units === 'unixtime') return unixtime(f, zone).replace(/^(-?\d+)\.(\d\d)\.(\d\d)/, '$1-$2-$3');
  if (units === 'uptime') return uptime(Math.round(f));
  if (units === 's') return uiDuration(f);
  const plain = new Set(NO_PREFIX);
  let u = units;
  if (u.startsWith('!')) {
    u = u.slice(1);
    plain.add(u);
  }
  if (plain.has(u) || u === '' || Math.abs(f) < 1) {
    const r = uiNumber(f, 4);
    return u === '' ? r : `${r} ${u}`;
  }
  const base = u === 'B' || u === 'Bps' ? 1024 : 1000;
  let r = '';
  let prefix = '';
  for (const [p, pre] of ['', 'K', 'M', 'G', 'T', 'P', 'E', 'Z', 'Y'].entries()) {
    r = uiNumber(f / base ** p, pre === '' ? 4 : 2);
    prefix = pre;
    if (Math.abs(Number(r)) < base) break;
  }
  return `${r} ${Number(r) === 0 ? '' : prefix}${u}`;
}
