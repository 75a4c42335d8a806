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
