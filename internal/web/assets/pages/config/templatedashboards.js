// A template's dashboards (templatedashboard.*;
// /config/templatedashboards?templateid=), as 6.0's template
// Dashboards tab: the list (create with name, page display period and
// slideshow start, clone with its pages and widgets, delete) and, with
// &id=, the dashboard editor of dashboards.js on templatedashboard.*:
// pages, widgets of the types 6.0 allows on a template, each item field
// one of the template's items. Hosts linked to the template show these
// dashboards with their own data (/hostdashboards).
import { call } from '../../api.js';
import { h } from '../../dom.js';
import { crudPage, input, fld, subnav } from '../../crud.js';
import { view } from '../dashboards.js';

const N = 'tdash';
const PERIODS = [[10, '10 seconds'], [30, '30 seconds'], [60, '1 minute'], [120, '2 minutes'], [600, '10 minutes'], [1800, '30 minutes'], [3600, '1 hour']];

// stripPage is a page without its ids (a clone's).
const stripPage = (p) => ({ name: p.name, display_period: Number(p.display_period), widgets: (p.widgets || []).map((w) => ({
  type: w.type, name: w.name, x: Number(w.x), y: Number(w.y), width: Number(w.width), height: Number(w.height), view_mode: Number(w.view_mode),
  fields: w.fields.map((f) => ({ type: Number(f.type), name: f.name, value: f.value })) })) });

export async function render(main, params) {
  const templateid = params.get('templateid') || '';
  const templates = await call('template.get', { output: ['templateid', 'name'], sortfield: 'name' });
  const t = templates.find((x) => x.templateid === templateid);
  const sel = h('select', { id: 'tdash-template', 'aria-label': 'Template', onchange: () => {
    history.replaceState(null, '', sel.value ? `/config/templatedashboards?templateid=${encodeURIComponent(sel.value)}` : '/config/templatedashboards');
    dispatchEvent(new PopStateEvent('popstate'));
  } }, h('option', { value: '' }, 'Choose a template…'), templates.map((x) => h('option', { value: x.templateid, selected: x.templateid === templateid }, x.name)));
  if (!t) {
    main.append(subnav('config', '/config/templates'), h('div', { class: 'toolbar' }, h('h1', {}, 'Template dashboards'), sel),
      h('p', { class: 'muted' }, 'Choose the template whose dashboards to show.'));
    return null;
  }
  const here = `/config/templatedashboards?templateid=${encodeURIComponent(templateid)}`;
  if (params.get('id')) {
    return view(main, params.get('id'), false, { api: 'templatedashboard', templateid, back: [here, `Dashboards of ${t.name}`] });
  }
  await crudPage(main, {
    api: 'templatedashboard', id: 'dashboardid', ids: 'dashboardids', noun: N, label: 'dashboard', title: `Dashboards of ${t.name}`, section: 'config',
    path: '/config/templates', params: { templateids: [templateid] },
    sort: [['name', 'Name'], ['dashboardid', 'ID']],
    search: { field: 'name', label: 'Search name' },
    rowParams: { output: ['dashboardid', 'name', 'display_period', 'auto_start'], selectPages: ['dashboard_pageid', 'widgets'] },
    columns: [
      { label: 'Name', sort: 'name', cell: (d) => d.name },
      { label: 'Edit', cell: (d) => h('a', { href: `${here}&id=${encodeURIComponent(d.dashboardid)}`, class: 'tdash-open' }, 'Pages and widgets') },
      { label: 'Pages', cell: (d) => String((d.pages || []).length) },
      { label: 'Widgets', cell: (d) => String((d.pages || []).reduce((n, p) => n + (p.widgets || []).length, 0)) },
    ],
    editable: true,
    editParams: { selectPages: 'extend' },
    newObject: { display_period: '30', auto_start: '1', pages: [] },
    clone: (d) => ({ ...d, name: `${d.name} (copy)`, uuid: undefined, pages: (d.pages || []).map(stripPage) }),
    form: (d, _l, isNew) => {
      const f = {
        name: input.text(N, 'name', d.name, { maxlength: 255 }),
        display_period: input.select(N, 'display_period', PERIODS, d.display_period),
        auto_start: input.check(N, 'auto_start', d.auto_start),
      };
      return {
        body: [h('div', { class: 'form-grid' }, fld('Name', f.name), fld('Default page display period', f.display_period), fld('Start slideshow automatically', f.auto_start)),
          isNew ? null : h('p', { class: 'muted' }, `${(d.pages || []).length} page(s): edit them with "Pages and widgets".`)],
        read: () => {
          const o = { name: f.name.value, display_period: Number(f.display_period.value), auto_start: f.auto_start.checked ? 1 : 0 };
          if (isNew) {
            o.templateid = templateid;
            o.pages = d.pages && d.pages.length ? d.pages : [{}];
          }
          return o;
        },
      };
    },
  });
  main.querySelector('.toolbar h1').after(sel);
  return null;
}
