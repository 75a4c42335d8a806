// Units: a numeric value with its item's units as Zabbix 6.0 shows it,
// the same rules as the server's internal/zbx/units (recorded from the
// real Zabbix 6.0.14; units_test.go in internal/web checks that both
// give the same text for a table of cases):
//   - no units: the value as it is;
//   - "s": years (365 d), months (30 d, "M"), days, hours, minutes,
//     seconds, milliseconds; at most three units from the largest that is
//     not zero, zero ones left out; "0s", "< 1ms", a minus sign;
//   - "uptime": "HH:MM:SS", after "N days, " from a day on;
//   - "unixtime": "2006.01.02 15:04:05" (here: the browser's zone);
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
  switch (units) {
    case 's': return duration(f);
    case 'uptime': return uptime(f);
    case 'unixtime': return unixtime(f, zone);
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
