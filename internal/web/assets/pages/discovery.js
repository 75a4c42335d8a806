// Monitoring → Discovery (6.0's "Status of discovery"): per discovery
// rule, its discovered devices (dhost.get with their services), each
// with its address and DNS name, the monitored host with that address
// (hostinterface.get), how long it has been up or down, and one column
// per service the rule found (check type and port), up or down with
// the time of the change. Read every 30 s; a rule filter narrows it.
import { call } from '../api.js';
import { h, clear, fmtAge, fmtTime } from '../dom.js';
import { checkName } from './config/drules.js';

const TYPE = { 0: 'SSH', 1: 'LDAP', 2: 'SMTP', 3: 'FTP', 4: 'HTTP', 5: 'POP', 6: 'NNTP', 7: 'IMAP', 8: 'TCP', 9: 'Zabbix agent',
  10: 'SNMPv1 agent', 11: 'SNMPv2 agent', 12: 'ICMP ping', 13: 'SNMPv3 agent', 14: 'HTTPS', 15: 'Telnet' };

export async function render(main, params) {
  const ruleSel = h('select', { id: 'discovery-rule', 'aria-label': 'Discovery rule' }, h('option', { value: '' }, 'All rules'));
  const out = h('div', { id: 'discovery-status', class: 'scroll' });
  const err = h('p', { class: 'error', role: 'alert', hidden: true });
  main.append(h('div', { class: 'toolbar' }, h('h1', {}, 'Status of discovery'), ruleSel), err, out);
  const rules = await call('drule.get', { output: ['druleid', 'name', 'status'], sortfield: 'name' });
  for (const r of rules) ruleSel.append(h('option', { value: r.druleid, selected: r.druleid === params.get('druleid') }, r.name));

  async function load() {
    try {
      const ids = ruleSel.value ? [ruleSel.value] : rules.filter((r) => r.status === '0').map((r) => r.druleid);
      const [rs, dhosts] = await Promise.all([
        call('drule.get', { druleids: ids, output: ['druleid', 'name'], selectDChecks: ['dcheckid', 'type', 'ports', 'key_'] }),
        call('dhost.get', { druleids: ids, output: 'extend', selectDServices: 'extend' }),
      ]);
      const ips = [...new Set(dhosts.flatMap((d) => d.dservices.map((s) => s.ip)))];
      const ifaces = ips.length ? await call('hostinterface.get', { output: ['ip', 'hostid'], filter: { ip: ips }, selectHosts: ['name'] }).catch(() => []) : [];
      const hostAt = new Map();
      for (const i of ifaces) if (i.hosts && i.hosts[0] && !hostAt.has(i.ip)) hostAt.set(i.ip, i.hosts[0].name);
      err.hidden = true;
      clear(out).append(...rs.sort((a, b) => a.name.localeCompare(b.name)).map((r) => ruleTable(r, dhosts.filter((d) => d.druleid === r.druleid), hostAt)));
      if (!rs.length) out.append(h('p', { class: 'muted' }, 'No enabled discovery rules.'));
    } catch (e) {
      err.hidden = false;
      err.textContent = String(e.data || e.message || e);
    }
  }

  ruleSel.addEventListener('change', () => {
    history.replaceState(null, '', ruleSel.value ? `/discovery?druleid=${encodeURIComponent(ruleSel.value)}` : '/discovery');
    load();
  });
  await load();
  const timer = setInterval(load, 30000);
  return () => clearInterval(timer);
}

// ruleTable is one rule's devices, a column per service found.
function ruleTable(rule, dhosts, hostAt) {
  const checks = new Map((rule.dchecks || []).map((c) => [c.dcheckid, c]));
  const cols = new Map();
  for (const d of dhosts) {
    for (const s of d.dservices) {
      const c = checks.get(s.dcheckid);
      const k = `${c ? c.type : '?'}:${s.port}`;
      if (!cols.has(k)) cols.set(k, c ? `${TYPE[c.type] || c.type}${c.type === '12' ? '' : ` (${s.port})`}` : `port ${s.port}`);
    }
  }
  const colKeys = [...cols.keys()].sort();
  const rows = dhosts.map((d) => {
    const ip = (d.dservices[0] || {}).ip || '';
    const dns = (d.dservices.find((s) => s.dns) || {}).dns || '';
    const up = d.status === '0';
    const since = up ? d.lastup : d.lastdown;
    const byCol = new Map();
    for (const s of d.dservices) {
      const c = checks.get(s.dcheckid);
      byCol.set(`${c ? c.type : '?'}:${s.port}`, s);
    }
    return h('tr', { class: 'dhost-row', dataset: { ip } },
      h('td', { class: 'dhost-ip' }, dns && dns !== ip ? `${ip} (${dns})` : ip),
      h('td', { class: 'dhost-host' }, hostAt.get(ip) || ''),
      h('td', { class: up ? 'ack-yes dhost-status' : 'ack-no dhost-status', title: fmtTime(since) }, `${up ? 'Up' : 'Down'} ${fmtAge(since)}`),
      colKeys.map((k) => {
        const s = byCol.get(k);
        if (!s) return h('td', {});
        const sUp = s.status === '0';
        return h('td', { class: `dservice ${sUp ? 'dservice-up' : 'dservice-down'}`, title: `${sUp ? 'Up since' : 'Down since'} ${fmtTime(sUp ? s.lastup : s.lastdown)}${s.value ? `, value: ${s.value}` : ''}` },
          sUp ? 'Up' : 'Down');
      }));
  });
  return h('section', { class: 'card discovery-rule', dataset: { id: rule.druleid } },
    h('h2', {}, rule.name, h('span', { class: 'muted' }, ` — ${(rule.dchecks || []).map(checkName).join(', ')}`)),
    h('table', { class: 'plain' },
      h('thead', {}, h('tr', {}, h('th', {}, 'Discovered device'), h('th', {}, 'Monitored host'), h('th', {}, 'Uptime/Downtime'),
        colKeys.map((k) => h('th', {}, cols.get(k))))),
      h('tbody', {}, rows.length ? rows : h('tr', {}, h('td', { colspan: 3 + colKeys.length, class: 'muted' }, 'Nothing discovered yet.')))));
}
