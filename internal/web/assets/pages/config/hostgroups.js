// Configuration: host groups (hostgroup.*): the list with how many hosts
// and templates each holds (selectHosts and selectTemplates "count", so
// the list never reads the members), filtered by name and sorted by the
// server; create, rename, clone and delete (mass delete too), and as in
// 6.0 "Enable hosts" / "Disable hosts" of the checked groups (one
// host.massupdate of their hosts the user may change). A group
// the user may only read (hostgroup.get editable) opens read-only.
// Creating a group needs a Super admin, as in 6.0: an Admin gets the
// API's refusal under the form.
import { call } from '../../api.js';
import { h } from '../../dom.js';
import { crudPage, input, fld } from '../../crud.js';

const N = 'hostgroup';

export async function render(main) {
  await crudPage(main, {
    api: 'hostgroup', id: 'groupid', ids: 'groupids', noun: N, label: 'host group', title: 'Host groups', section: 'config', path: '/config/hostgroups',
    sort: [['name', 'Name']],
    search: { field: 'name', label: 'Search name' },
    editable: true,
    rowParams: { output: ['groupid', 'name', 'internal', 'flags'], selectHosts: 'count', selectTemplates: 'count' },
    columns: [
      { label: 'Name', sort: 'name', cell: (g) => g.name },
      { label: 'Hosts', cell: (g) => h('span', { class: 'hostgroup-hosts' }, String(g.hosts ?? '')) },
      { label: 'Templates', cell: (g) => h('span', { class: 'hostgroup-templates' }, String(g.templates ?? '')) },
      { label: 'Info', cell: (g) => [g.internal === '1' ? 'internal' : '', g.flags === '4' ? 'discovered' : ''].filter(Boolean).join(', ') },
    ],
    mass: [['enable-hosts', 'Enable hosts', 0], ['disable-hosts', 'Disable hosts', 1]].map(([id, label, status]) => ({ id, label, confirm: true,
      run: async (sel) => {
        const hosts = await call('host.get', { groupids: sel, output: ['hostid'], editable: true });
        if (hosts.length) await call('host.massupdate', { hosts: hosts.map(({ hostid }) => ({ hostid })), status });
      } })),
    newObject: { name: '' },
    clone: (g) => ({ name: `${g.name} (copy)` }),
    form: (g) => {
      const name = input.text(N, 'name', g.name, { maxlength: 255 });
      return { body: [h('div', { class: 'form-grid' }, fld('Group name', name))], read: () => ({ name: name.value }) };
    },
  });
}
