// Services (service.*): the services tree as a paginated list (top
// level first by default; "Parent" narrows to one service's children)
// with each service's status (its severity, or OK) and root cause (the
// problems that set it, selectProblemEvents), and the form: name,
// parents and children, problem tags (a service has tags or children),
// status calculation (algorithm), status rules, propagation, weight,
// sort order, tags, description.
import { call, userType } from '../api.js';
import { h } from '../dom.js';
import { crudPage, input, fld, rowTable, numVal } from '../crud.js';

const N = 'service';
const SEV = [[-1, 'OK'], [0, 'Not classified'], [1, 'Information'], [2, 'Warning'], [3, 'Average'], [4, 'High'], [5, 'Disaster']];
const ALGO = [[0, 'Set status to OK'], [1, 'Most critical if all children have problems'], [2, 'Most critical of child services']];
const PROP = [[0, 'As is'], [1, 'Increase by'], [2, 'Decrease by'], [3, 'Ignore this service'], [4, 'Fixed status']];
const RULE = [[0, 'If at least N child services have status or above'], [1, 'If at least N% of child services have status or above'],
  [2, 'If less than N child services have status or below'], [3, 'If less than N% of child services have status or below'],
  [4, 'If at least W of child services weight is in status or above'], [5, 'If at least N% of child services weight is in status or above'],
  [6, 'If less than W of child services weight is in status or below'], [7, 'If less than N% of child services weight is in status or below']];
const OPS = [[0, 'Equals'], [2, 'Contains']];
const label = (list, v) => (list.find(([x]) => String(x) === String(v)) || [0, v])[1];

export async function render(main) {
  let all = [];
  await crudPage(main, {
    // Services are changed by Admins and Super admins (a User reads
    // them: no create, the forms read-only).
    editable: true, readOnly: userType() < 2,
    api: 'service', id: 'serviceid', ids: 'serviceids', noun: N, label: 'service', title: 'Services', section: 'services', path: '/services',
    sort: [['name', 'Name'], ['status', 'Status']],
    search: { field: 'name', label: 'Search name' },
    filters: [{ id: 'parent', label: 'Parent', options: [[0, 'Top level only']], apply: (p, v) => { p.parentids = [v]; } }],
    rowParams: { output: ['serviceid', 'name', 'status', 'algorithm', 'weight'], selectParents: ['name'], selectChildren: ['serviceid'],
      selectProblemEvents: ['name', 'severity'], selectTags: ['tag', 'value'] },
    columns: [
      { label: 'Name', sort: 'name', cell: (s) => s.name },
      { label: 'Status', sort: 'status', cell: (s) => h('span', { class: `badge sev-${s.status}` }, label(SEV, s.status)) },
      { label: 'Root cause', cell: (s) => (s.problem_events || []).map((e) => e.name).join(', ') },
      { label: 'Parents', cell: (s) => s.parents.map((p) => p.name).join(', ') },
      { label: 'Children', cell: (s) => String(s.children.length) },
      { label: 'Tags', cell: (s) => s.tags.map((t) => h('span', { class: 'tag' }, t.value ? `${t.tag}: ${t.value}` : t.tag)) },
    ],
    prepare: async () => {
      all = await call('service.get', { output: ['serviceid', 'name'], sortfield: 'name' });
      return { all };
    },
    editParams: { selectParents: ['serviceid'], selectChildren: ['serviceid'], selectProblemTags: 'extend', selectStatusRules: 'extend', selectTags: 'extend' },
    newObject: { algorithm: '2', sortorder: '0', weight: '0', propagation_rule: '0', propagation_value: '0', parents: [], children: [], problem_tags: [], status_rules: [], tags: [] },
    clone: (s) => ({ ...s, name: `${s.name} (copy)`, children: [] }),
    form: (s, { all: list }) => {
      const others = list.filter((o) => o.serviceid !== s.serviceid).map((o) => [o.serviceid, o.name]);
      const f = {
        name: input.text(N, 'name', s.name, { maxlength: 128 }),
        parents: input.multi(N, 'parents', others, (s.parents || []).map((p) => p.serviceid)),
        children: input.multi(N, 'children', others, (s.children || []).map((p) => p.serviceid)),
        algorithm: input.select(N, 'algorithm', ALGO, s.algorithm),
        sortorder: input.num(N, 'sortorder', s.sortorder), weight: input.num(N, 'weight', s.weight),
        propagation_rule: input.select(N, 'propagation_rule', PROP, s.propagation_rule),
        propagation_value: input.num(N, 'propagation_value', s.propagation_value),
        description: input.area(N, 'description', s.description, 2),
      };
      const ptags = rowTable('service-problem-tags', ['Tag', 'Operator', 'Value'], s.problem_tags, (o) => {
        const t = input.text(N, 'tag', o.tag); const op = input.select(N, 'operator', OPS, o.operator || 0); const v = input.text(N, 'value', o.value);
        return { cells: [t, op, v], read: () => (t.value ? { tag: t.value, operator: Number(op.value), value: v.value } : null) };
      }, 'problem_tags');
      const rules = rowTable('service-status-rules', ['Condition', 'N / W', 'Status', 'Set status to'], s.status_rules, (o) => {
        const ty = input.select(N, 'type', RULE, o.type || 0); const lv = input.num(N, 'limit_value', o.limit_value ?? 1);
        const ls = input.select(N, 'limit_status', SEV.slice(1), o.limit_status ?? 2); const ns = input.select(N, 'new_status', SEV.slice(1), o.new_status ?? 4);
        return { cells: [ty, lv, ls, ns], read: () => ({ type: Number(ty.value), limit_value: numVal(lv), limit_status: Number(ls.value), new_status: Number(ns.value) }) };
      }, 'status_rules');
      const tags = rowTable('service-tags', ['Tag', 'Value'], s.tags, (o) => {
        const t = input.text(N, 'tag', o.tag); const v = input.text(N, 'value', o.value);
        return { cells: [t, v], read: () => (t.value ? { tag: t.value, value: v.value } : null) };
      }, 'tags');
      const ids = (sel) => [...sel.selectedOptions].map((o) => ({ serviceid: o.value }));
      return {
        body: [h('div', { class: 'form-grid' }, fld('Name', f.name), fld('Parent services', f.parents), fld('Child services', f.children),
          fld('Status calculation rule', f.algorithm), fld('Sort order', f.sortorder), fld('Weight', f.weight),
          fld('Status propagation rule', f.propagation_rule), fld('Propagation value', f.propagation_value)),
        h('h4', {}, 'Problem tags (a service has problem tags or children, not both)'), ptags.el,
        h('h4', {}, 'Additional status rules'), rules.el, h('h4', {}, 'Tags'), tags.el, fld('Description', f.description)],
        read: () => ({ name: f.name.value, parents: ids(f.parents), children: ids(f.children), algorithm: Number(f.algorithm.value),
          sortorder: numVal(f.sortorder), weight: numVal(f.weight), propagation_rule: Number(f.propagation_rule.value),
          propagation_value: numVal(f.propagation_value), problem_tags: ptags.values(), status_rules: rules.values(), tags: tags.values(),
          description: f.description.value }),
      };
    },
  });
}
