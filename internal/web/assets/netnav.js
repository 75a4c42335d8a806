// The network pages' places in the section menus (crud.js subnav) and
// the field named by an error of 6.0's legacy APIs (drule.*), which
// say 'Incorrect value for field "iprange": ...', 'Field "name" is
// mandatory.' or 'Incorrect value "9" for "status" field.' rather than
// the validator's '"/1/name"'.
export const NET_SUBNAV = {
  config: [['/config/drules', 'Network discovery'], ['/config/webscenarios', 'Web scenarios']],
  admin: [['/config/proxies', 'Proxies'], ['/admin/autoreg', 'Autoregistration']],
};

export function errorField(msg) {
  const m = /[Ff]ield "([a-z_]+)"/.exec(msg) || /"([a-z_]+)" field/.exec(msg);
  if (m) return m[1];
  // Whole-rule and check messages of drule.* name no field.
  if (/^Incorrect port range|SNMP community|SNMP OID|^Invalid key/.test(msg)) return 'dchecks';
  if (/checks/i.test(msg)) return 'dchecks';
  return null;
}

// keyParam quotes an item key parameter as the server does
// (catalog.quoteKeyParam): as is when it can be, else in quotes with
// its quotes escaped.
export function keyParam(s) {
  if (!/[,\]"]/.test(s) && !s.startsWith(' ') && !s.startsWith('[')) return s;
  return `"${s.replace(/"/g, '\\"')}"`;
}

// WEB_KEYS are the keys of the items the server keeps per web scenario
// and step (catalog.WebItemKey's, in its kinds' order).
export const WEB_KEYS = [
  (s) => `web.test.in[${keyParam(s)},,bps]`,
  (s) => `web.test.fail[${keyParam(s)}]`,
  (s) => `web.test.error[${keyParam(s)}]`,
  (s, st) => `web.test.in[${keyParam(s)},${keyParam(st)},bps]`,
  (s, st) => `web.test.time[${keyParam(s)},${keyParam(st)},resp]`,
  (s, st) => `web.test.rspcode[${keyParam(s)},${keyParam(st)}]`,
];
