// Value maps in the page: values shown as Zabbix shows them, "Up (1)".
// The maps come from valuemap.get, by ID, once per page and only for
// the maps of the items on screen; a server without valuemap.get shows
// plain values. mapValue follows Zabbix 6.0's rules as the server's
// catalog.ValueMap.Map does: mappings in order, the first match wins,
// the default only when none matches.
import { call, APIError } from './api.js';
import { fmtValue } from './dom.js';

export function mapValue(value, mappings) {
  const s = String(value);
  const n = Number(s.trim());
  const isNum = s.trim() !== '' && Number.isFinite(n);
  let def = null;
  for (const m of mappings || []) {
    const t = Number(m.type || 0);
    if (t === 0 && (m.value === s || (isNum && m.value.trim() !== '' && Number(m.value) === n))) return m.newvalue;
    if (t === 1 && isNum && n >= Number(m.value)) return m.newvalue;
    if (t === 2 && isNum && n <= Number(m.value)) return m.newvalue;
    if (t === 3 && isNum && inRanges(m.value, n)) return m.newvalue;
    if (t === 4) {
      try {
        if (new RegExp(m.value).test(s)) return m.newvalue;
      } catch (e) { /* refused by the server on save; ignore here */ }
    }
    if (t === 5) def = m.newvalue;
  }
  return def;
}

function inRanges(spec, n) {
  for (const r of String(spec).split(',')) {
    const m = /^\s*(-?[\d.]+(?:[eE][-+]?\d+)?)\s*(?:-\s*(-?[\d.]+(?:[eE][-+]?\d+)?))?\s*$/.exec(r);
    if (!m) continue;
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    if (n >= lo && n <= hi) return true;
  }
  return false;
}

// ValueMaps caches maps by ID for one page.
export class ValueMaps {
  constructor() {
    this.maps = new Map(); // valuemapid -> mappings
    this.unavailable = false;
  }

  // load fetches the maps of items (their valuemapid) not yet known.
  async load(items) {
    if (this.unavailable) return;
    const want = [...new Set(items.map((it) => it.valuemapid).filter((id) => id && id !== '0' && !this.maps.has(id)))];
    if (!want.length) return;
    try {
      const res = await call('valuemap.get', { output: ['valuemapid'], selectMappings: 'extend', valuemapids: want });
      for (const id of want) this.maps.set(id, null);
      for (const m of res) this.maps.set(m.valuemapid, m.mappings || []);
    } catch (e) {
      if (e instanceof APIError && e.code === -32601) this.unavailable = true;
      else throw e;
    }
  }

  // fmt formats an item's value with its units, through its value map if
  // one applies: "Up (1)".
  fmt(value, it) {
    const plain = fmtValue(value, it.units, it.value_type);
    const mappings = this.maps.get(it.valuemapid);
    if (!mappings) return plain;
    const mapped = mapValue(value, mappings);
    return mapped === null ? plain : `${mapped} (${plain})`;
  }
}
