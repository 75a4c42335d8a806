// Configuration: templates (template.*). The list is a crud.js page:
// filtered by name, host group and linked template, sorted by the
// server, with counts of each template's items, triggers, graphs,
// discovery rules, web scenarios and dashboards (selects with "count")
// linking to the pages that edit them with the template chosen. Mass
// actions as 6.0 has them: mass update (host groups, linked templates
// or the description, one change and one call per submit:
// template.massadd/massupdate/massremove/update), export to YAML
// (configuration.export), "Delete" (the hosts and templates linked to
// it keep copies of its entities: they are unlinked first, then the
// template is deleted) and "Delete and clear" (template.delete: the
// copies go too). Import (configuration.import) reads a file chosen in
// the page with 6.0's default rules.
//
// The form has 6.0's tabs: the template (technical and visible name,
// host groups, description, linked templates; unlinking keeps their
// copies unless "clear" is ticked: templates_clear), tags, macros (its own,
// and those it inherits from linked templates, read-only) and value
// maps (listed, edited on the value maps page). Clone copies the form;
// "Full clone" exports the template with its items, triggers, graphs,
// discovery rules, value maps and dashboards and imports the document
// under the new name with new UUIDs: one configuration.import, so a
// refused clone leaves nothing behind. Rows the user may only read
// (template.get editable) open read-only.
import { call } from '../../api.js';
import { h, clear } from '../../dom.js';
import { crudPage, input, fld, chosen, rowTable, showErrorAt } from '../../crud.js';
import { tabs, download } from './tabs.js';

const N = 'template';
const MACRO_TYPES = [[0, 'Text'], [1, 'Secret text'], [2, 'Vault secret']];

// newUUID is a 6.0 UUID: 32 lower-case hex digits.
export const newUUID = () => crypto.randomUUID().replace(/-/g, '');

// DEFAULT_RULES are 6.0's import form's defaults: create and update,
// delete nothing.
const DEFAULT_RULES = {
  groups: { createMissing: true }, templates: { createMissing: true, updateExisting: true },
  items: { createMissing: true, updateExisting: true }, triggers: { createMissing: true, updateExisting: true },
  graphs: { createMissing: true, updateExisting: true }, discoveryRules: { createMissing: true, updateExisting: true },
  valueMaps: { createMissing: true, updateExisting: true }, templateLinkage: { createMissing: true },
  templateDashboards: { createMissing: true, updateExisting: true }, httptests: { createMissing: true, updateExisting: true },
};

// renameExport rewrites an exported document (JSON form) so that
// importing it makes a copy of template from under the name to: every
// uuid is new, references to the template's technical name (graph and
// dashboard items' "host", the host part of trigger expressions) name
// the copy.
export function renameExport(doc, from, to, visible) {
  const t = (doc.templates || []).find((x) => x.template === from);
  if (!t) throw new Error(`The export has no template ${from}.`);
  t.template = to;
  t.name = visible || to;
  const ref = `/${from}/`;
  const walk = (o) => {
    if (Array.isArray(o)) {
      o.forEach(walk);
      return;
    }
    if (!o || typeof o !== 'object') return;
    for (const [k, v] of Object.entries(o)) {
      if (k === 'uuid') o[k] = newUUID();
      else if (k === 'host' && v === from) o[k] = to;
      else if ((k === 'expression' || k === 'recovery_expression') && typeof v === 'string') o[k] = v.split(ref).join(`/${to}/`);
      else walk(v);
    }
  };
  walk(doc);
  return doc;
}

export async function render(main) {
  const [groups, templates] = await Promise.all([
    call('hostgroup.get', { output: ['groupid', 'name'], sortfield: 'name' }),
    call('template.get', { output: ['templateid', 'name'], sortfield: 'name' }),
  ]);
  const note = h('p', { class: 'muted', id: 'template-note', role: 'status' });
  const side = h('div', { id: 'template-side' });
  let reload = null;
  const count = (o, k) => (o[k] === undefined ? '' : String(o[k]));
  const link = (href, n, cls) => (n === '0' || n === '' ? h('span', { class: 'muted' }, n || '0') : h('a', { href, class: cls }, n));

  // Import: a file, the rules (6.0's defaults), one call.
  const importBox = () => {
    clear(side);
    const file = h('input', { type: 'file', id: 'template-import-file', accept: '.yaml,.yml,.xml,.json', 'aria-label': 'Import file' });
    const upd = h('input', { type: 'checkbox', id: 'template-import-update', checked: true });
    const err = h('p', { class: 'error', id: 'template-import-error', role: 'alert', hidden: true });
    const form = h('form', { id: 'template-import', class: 'card', onsubmit: async (ev) => {
      ev.preventDefault();
      err.hidden = true;
      const f = file.files[0];
      if (!f) return;
      const ext = f.name.split('.').pop().toLowerCase();
      const format = { yml: 'yaml', yaml: 'yaml', xml: 'xml', json: 'json' }[ext];
      try {
        if (!format) throw new Error('Choose a .yaml, .xml or .json file.');
        const rules = structuredClone(DEFAULT_RULES);
        if (!upd.checked) for (const r of Object.values(rules)) delete r.updateExisting;
        await call('configuration.import', { format, source: await f.text(), rules });
        clear(side);
        note.textContent = `Imported ${f.name}.`;
        if (reload) await reload();
      } catch (e) {
        showErrorAt(form, err, e);
      }
    } }, h('h3', {}, 'Import'), fld('File', file), fld('Update existing', upd), err,
    h('div', { class: 'form-buttons' }, h('button', { type: 'submit', id: 'template-import-save' }, 'Import'),
      h('button', { type: 'button', onclick: () => clear(side) }, 'Cancel')));
    side.append(form);
  };

  // Mass update: one change per submit, one API call, so a refused
  // change leaves every template as it was: host groups added
  // (template.massadd), replaced (massupdate) or removed (massremove),
  // templates linked or the links replaced, or the description
  // (template.update of all of them at once).
  const massUpdate = (sel) => {
    clear(side);
    const WHAT = [['groups-add', 'Add host groups'], ['groups-replace', 'Replace host groups'], ['groups-remove', 'Remove host groups'],
      ['templates-add', 'Link templates'], ['templates-replace', 'Replace linked templates'], ['description', 'Set the description']];
    const what = h('select', { id: 'template-mu-what', 'aria-label': 'Change' }, WHAT.map(([v, t]) => h('option', { value: v }, t)));
    const gSel = input.multi(N, 'mu_groups', groups.map((g) => [g.groupid, g.name]), []);
    const tSel = input.multi(N, 'mu_templates', templates.filter((x) => !sel.includes(x.templateid)).map((x) => [x.templateid, x.name]), []);
    const desc = input.area(N, 'mu_description', '', 2);
    const gF = fld('Host groups', gSel); const tF = fld('Templates', tSel); const dF = fld('Description', desc);
    const show = () => {
      gF.hidden = !what.value.startsWith('groups');
      tF.hidden = !what.value.startsWith('templates');
      dF.hidden = what.value !== 'description';
    };
    what.addEventListener('change', show);
    show();
    const err = h('p', { class: 'error', id: 'template-mu-error', role: 'alert', hidden: true });
    const tids = sel.map((templateid) => ({ templateid }));
    const form = h('form', { id: 'template-massupdate', class: 'card', onsubmit: async (ev) => {
      ev.preventDefault();
      try {
        const g = chosen(gSel).map((groupid) => ({ groupid }));
        const t = chosen(tSel).map((templateid) => ({ templateid }));
        switch (what.value) {
          case 'groups-add': await call('template.massadd', { templates: tids, groups: g }); break;
          case 'groups-replace': await call('template.massupdate', { templates: tids, groups: g }); break;
          case 'groups-remove': await call('template.massremove', { templateids: sel, groupids: chosen(gSel) }); break;
          case 'templates-add': await call('template.massadd', { templates: tids, templates_link: t }); break;
          case 'templates-replace': await call('template.massupdate', { templates: tids, templates_link: t }); break;
          default: await call('template.update', sel.map((templateid) => ({ templateid, description: desc.value })));
        }
        clear(side);
        note.textContent = `Updated ${sel.length} template${sel.length === 1 ? '' : 's'}.`;
        if (reload) await reload();
      } catch (e) {
        showErrorAt(form, err, e);
      }
    } }, h('h3', {}, `Mass update of ${sel.length} template${sel.length === 1 ? '' : 's'}`),
    h('div', { class: 'form-grid' }, fld('Change', what), gF, tF, dF), err,
    h('div', { class: 'form-buttons' }, h('button', { type: 'submit', id: 'template-mu-save' }, 'Update'),
      h('button', { type: 'button', onclick: () => clear(side) }, 'Cancel')));
    side.append(form);
  };

  const exportYAML = async (sel) => {
    const doc = await call('configuration.export', { format: 'yaml', options: { templates: sel } });
    clear(side);
    side.append(h('p', { class: 'card' }, 'Export ready: ', download('template-export-link', 'zbx_export_templates.yaml', doc, 'application/yaml'),
      ' ', h('button', { type: 'button', onclick: () => clear(side) }, 'Close'),
      h('details', {}, h('summary', {}, 'Show the document'), h('pre', { id: 'template-export-text', class: 'export-text' }, doc))));
    side.querySelector('a').click();
  };

  // Delete (6.0's "Delete"): what links the templates keeps copies of
  // their entities (unlinked first), then the templates go.
  const deleteKeep = async (sel) => {
    const ts = await call('template.get', { templateids: sel, output: ['templateid'], selectHosts: ['hostid'], selectTemplates: ['templateid'] });
    const hostids = [...new Set(ts.flatMap((t) => (t.hosts || []).map((x) => x.hostid)))];
    const children = [...new Set(ts.flatMap((t) => (t.templates || []).map((x) => x.templateid)))].filter((x) => !sel.includes(x));
    if (hostids.length) await call('host.massremove', { hostids, templateids: sel });
    if (children.length) await call('template.massremove', { templateids: children, templateids_link: sel });
    await call('template.delete', sel);
  };

  await crudPage(main, {
    api: 'template', id: 'templateid', ids: 'templateids', noun: N, label: 'template', title: 'Templates', section: 'config', path: '/config/templates',
    sort: [['name', 'Name'], ['host', 'Technical name']],
    search: { field: 'name', label: 'Search name' },
    filters: [
      { id: 'group', label: 'Host group', options: groups.map((g) => [g.groupid, g.name]), apply: (p, v) => { p.groupids = [v]; } },
      { id: 'linked', label: 'Linked template', options: templates.map((t) => [t.templateid, t.name]), apply: (p, v) => { p.parentTemplateids = [v]; } },
    ],
    toolbar: [h('button', { type: 'button', id: 'template-import-open', onclick: importBox }, 'Import'), note],
    editable: true,
    rowParams: { output: ['templateid', 'host', 'name'], selectParentTemplates: ['templateid', 'name'], selectItems: 'count', selectTriggers: 'count',
      selectGraphs: 'count', selectDiscoveries: 'count', selectHttpTests: 'count', selectDashboards: 'count', selectHosts: 'count', selectTags: 'extend' },
    columns: [
      { label: 'Name', sort: 'name', cell: (t) => t.name },
      { label: 'Items', cell: (t) => link(`/config/items?hostid=${t.templateid}`, count(t, 'items'), 'template-items') },
      { label: 'Triggers', cell: (t) => link(`/config/triggers?hostid=${t.templateid}`, count(t, 'triggers'), 'template-triggers') },
      { label: 'Graphs', cell: (t) => link(`/config/graphs?hostid=${t.templateid}`, count(t, 'graphs'), 'template-graphs') },
      { label: 'Discovery', cell: (t) => link(`/config/discovery?hostid=${t.templateid}`, count(t, 'discoveries'), 'template-discovery') },
      { label: 'Web', cell: (t) => link(`/config/webscenarios?hostid=${t.templateid}`, count(t, 'httpTests'), 'template-web') },
      { label: 'Dashboards', cell: (t) => link(`/config/templatedashboards?templateid=${t.templateid}`, count(t, 'dashboards'), 'template-dashboards') },
      { label: 'Linked templates', cell: (t) => (t.parentTemplates || []).map((p) => p.name).join(', ') },
      { label: 'Linked to hosts', cell: (t) => count(t, 'hosts') },
      { label: 'Tags', cell: (t) => (t.tags || []).map((x) => h('span', { class: 'tag' }, x.value ? `${x.tag}: ${x.value}` : x.tag)) },
    ],
    mass: [
      { id: 'update', label: 'Mass update', run: massUpdate },
      { id: 'export', label: 'Export', run: exportYAML },
      { id: 'delete-clear', label: 'Delete and clear', confirm: true, delete: true, run: (sel) => call('template.delete', sel) },
    ],
    massDelete: { label: 'Delete', run: deleteKeep },
    afterPage: () => { reload = () => main.querySelector('#template-search').dispatchEvent(new Event('input')); },
    editParams: { selectGroups: ['groupid', 'name'], selectParentTemplates: ['templateid', 'name'], selectTags: 'extend', selectMacros: 'extend',
      selectValueMaps: ['valuemapid', 'name', 'mappings'] },
    prepare: async () => ({ groups, templates: await call('template.get', { output: ['templateid', 'name'], sortfield: 'name' }) }),
    newObject: { host: '', name: '', description: '', groups: [], parentTemplates: [], tags: [], macros: [], valuemaps: [] },
    clone: (t) => {
      // Secret values are never read back: a clone's secret macros
      // start as empty text, as 6.0 resets them.
      const macros = (t.macros || []).map((m) => (m.type === '1' ? { macro: m.macro, value: '', description: m.description, type: '0' } : { macro: m.macro, value: m.value, description: m.description, type: m.type }));
      return { ...t, host: `${t.host} copy`, name: `${t.name || t.host} (copy)`, macros, valuemaps: [] };
    },
    form: (t, lists, isNew) => {
      const f = {
        host: input.text(N, 'host', t.host, { maxlength: 128 }),
        name: input.text(N, 'name', t.name === t.host ? '' : t.name, { maxlength: 128, placeholder: 'same as the technical name' }),
        groups: input.multi(N, 'groups', lists.groups.map((g) => [g.groupid, g.name]), (t.groups || []).map((g) => g.groupid)),
        description: input.area(N, 'description', t.description, 3),
        templates: input.multi(N, 'templates', lists.templates.filter((x) => x.templateid !== t.templateid).map((x) => [x.templateid, x.name]),
          (t.parentTemplates || t.templates || []).map((x) => x.templateid)),
      };
      const clearUnlinked = h('input', { type: 'checkbox', id: 'template-unlink-clear' });
      const tags = rowTable('template-tags', ['Tag', 'Value'], t.tags, (x) => {
        const tag = h('input', { type: 'text', class: 'tag-tag', value: x.tag || '', 'aria-label': 'Tag' });
        const value = h('input', { type: 'text', class: 'tag-value', value: x.value || '', 'aria-label': 'Value' });
        return { cells: [tag, value], read: () => (tag.value.trim() === '' ? null : { tag: tag.value, value: value.value }) };
      }, 'tags');
      const macros = rowTable('template-macros', ['Macro', 'Value', 'Type', 'Description'], t.macros, (m) => {
        const macro = h('input', { type: 'text', class: 'macro-name', value: m.macro || '', placeholder: '{$MACRO}', 'aria-label': 'Macro' });
        const secret = m.type === '1' && m.hostmacroid;
        const value = h('input', { type: m.type === '1' ? 'password' : 'text', class: 'macro-value', value: secret ? '' : (m.value || ''),
          placeholder: secret ? 'unchanged' : 'value', autocomplete: 'new-password', 'aria-label': 'Value' });
        const type = h('select', { class: 'macro-type', 'aria-label': 'Type' }, MACRO_TYPES.map(([v, l]) => h('option', { value: String(v), selected: String(v) === String(m.type || 0) }, l)));
        const description = h('input', { type: 'text', class: 'macro-description', value: m.description || '', 'aria-label': 'Description' });
        return { cells: [macro, value, type, description], read: () => {
          if (macro.value.trim() === '') return null;
          const o = { macro: macro.value.trim(), type: Number(type.value), description: description.value };
          if (m.hostmacroid) o.hostmacroid = m.hostmacroid;
          // An untouched secret keeps its stored value.
          if (!(secret && value.value === '' && type.value === '1')) o.value = value.value;
          return o;
        } };
      }, 'macros');
      const inherited = h('div', { id: 'template-inherited-macros' });
      const parents = (t.parentTemplates || []).map((x) => x.templateid);
      if (parents.length) {
        call('template.get', { templateids: parents, output: ['templateid', 'name'], selectMacros: ['macro', 'value', 'type', 'description'] }).then((ps) => {
          const rows = ps.flatMap((p) => (p.macros || []).map((m) => h('tr', { class: 'inherited-macro' }, h('td', {}, m.macro),
            h('td', {}, m.type === '1' ? '******' : m.value), h('td', {}, m.description || ''), h('td', { class: 'muted' }, p.name))));
          if (rows.length) inherited.append(h('h4', {}, 'Inherited from linked templates'), h('table', { class: 'plain' },
            h('tr', {}, ['Macro', 'Value', 'Description', 'Template'].map((x) => h('th', {}, x))), rows));
        }).catch(() => {});
      }
      const vms = (t.valuemaps || []);
      const valuemaps = h('div', { id: 'template-valuemaps' },
        vms.length ? h('table', { class: 'plain' }, h('tr', {}, h('th', {}, 'Name'), h('th', {}, 'Mappings')),
          vms.map((m) => h('tr', {}, h('td', {}, m.name), h('td', {}, (m.mappings || []).map((x) => `${x.value} ⇒ ${x.newvalue}`).join(', ')))))
          : h('p', { class: 'muted' }, 'No value maps.'),
        t.templateid ? h('p', {}, h('a', { href: `/config/valuemaps?hostid=${t.templateid}`, id: 'template-valuemaps-edit' }, 'Edit the value maps')) : h('p', { class: 'muted' }, 'Value maps are added once the template exists.'));
      const tid = t.templateid;
      // The template's graphs and dashboards, listed (read when the
      // form opens; edited on their own pages).
      const others = h('div', { id: 'template-others' }, tid ? null : h('p', { class: 'muted' }, 'None yet.'));
      if (tid) {
        Promise.all([call('graph.get', { templateids: [tid], output: ['graphid', 'name'], sortfield: 'name' }),
          call('templatedashboard.get', { templateids: [tid], output: ['dashboardid', 'name'] }).catch(() => [])]).then(([gs, ds]) => {
          others.append(h('h4', {}, `Graphs (${gs.length}) `, h('a', { href: `/config/graphs?hostid=${tid}` }, 'edit')), h('ul', { class: 'template-graphs' }, gs.map((g) => h('li', {}, g.name))),
            h('h4', {}, `Dashboards (${ds.length}) `, h('a', { href: `/config/templatedashboards?templateid=${tid}`, id: 'template-dashboards-edit' }, 'edit')), h('ul', { class: 'template-dashboards' }, ds.map((d) => h('li', {}, d.name))));
        }).catch((e) => others.append(h('p', { class: 'error' }, String(e.data || e.message))));
      }
      const lists2 = tid ? h('p', { class: 'template-lists' }, [['Items', `/config/items?hostid=${tid}`], ['Triggers', `/config/triggers?hostid=${tid}`], ['Graphs', `/config/graphs?hostid=${tid}`], ['Dashboards', `/config/templatedashboards?templateid=${tid}`],
        ['Discovery rules', `/config/discovery?hostid=${tid}`], ['Web scenarios', `/config/webscenarios?hostid=${tid}`], ['Value maps', `/config/valuemaps?hostid=${tid}`]]
        .map(([l, href]) => [h('a', { href }, l), ' '])) : null;
      const body = tabs('template-tabs', [
        ['Template', [h('div', { class: 'form-grid' }, fld('Template name', f.host), fld('Visible name', f.name), fld('Host groups', f.groups),
          fld('Linked templates', f.templates), t.templateid ? fld('Unlinking clears what they gave', clearUnlinked) : null), fld('Description', f.description), lists2]],
        ['Tags', [tags.el]],
        ['Macros', [macros.el, inherited]],
        ['Value maps', [valuemaps]],
        ['Graphs and dashboards', [others]],
      ]);
      return {
        body: [body],
        read: () => {
          const o = { host: f.host.value.trim(), name: f.name.value.trim() || f.host.value.trim(), description: f.description.value,
            groups: chosen(f.groups).map((groupid) => ({ groupid })), tags: tags.values(), macros: macros.values() };
          const link = chosen(f.templates).map((templateid) => ({ templateid }));
          // Unlinking on update keeps the copies (templates replaces
          // the links) unless "clear" is ticked (templates_clear: 6.0's
          // "Unlink and clear"); a new template links what is chosen.
          o.templates = link;
          if (t.templateid && clearUnlinked.checked) {
            const gone = (t.parentTemplates || []).map((x) => x.templateid).filter((x) => !link.some((l) => l.templateid === x));
            if (gone.length) o.templates_clear = gone.map((templateid) => ({ templateid }));
          }
          return o;
        },
      };
    },
    formButtons: (t, f, mode, fail, done) => {
      const span = h('span', { id: 'template-fullclone-box' });
      return [h('button', { type: 'button', id: 'template-fullclone', onclick: () => {
        clear(span);
        const host = h('input', { type: 'text', id: 'template-fullclone-host', value: `${t.host} copy`, 'aria-label': 'Technical name of the copy' });
        span.append(' New name: ', host, h('button', { type: 'button', id: 'template-fullclone-yes', onclick: async () => {
          try {
            const exp = JSON.parse(await call('configuration.export', { format: 'json', options: { templates: [t.templateid] } }));
            renameExport(exp.zabbix_export, t.host, host.value.trim(), host.value.trim());
            await call('configuration.import', { format: 'json', source: JSON.stringify(exp), rules: DEFAULT_RULES });
            note.textContent = `Full clone ${host.value.trim()} made.`;
            await done();
          } catch (e) {
            fail(e);
          }
        } }, 'Create full clone'));
        host.focus();
      } }, 'Full clone'), span];
    },
  });
  main.querySelector('.toolbar').after(side);
}
