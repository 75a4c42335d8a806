// Dashboards (dashboard.*): the list (crud.js: paginated by the server,
// create, properties, sharing with users and user groups, clone,
// delete) and, with ?id=, one dashboard's pages of widgets on 6.0's
// 24-column grid. Editing places widgets on the grid: add one (type,
// name, its fields), drag it by its title to move it, by its corner to
// resize it, remove it; "Save" sends the pages with their page and
// widget ids, so the server keeps what did not change (dashboard.update).
// Each widget reads its own data with one request per refresh
// (widgets.js); nothing reloads the page.
import { call, currentSession } from '../api.js';
import { h, clear } from '../dom.js';
import { crudPage, input, fld, rowTable } from '../crud.js';
import { WIDGETS, renderWidget, widgetFieldsForm } from './widgets.js';
import { kioskButton, enterKiosk } from '../kiosk.js';

const N = 'dashboard';
const PERIODS = [[10, '10 seconds'], [30, '30 seconds'], [60, '1 minute'], [120, '2 minutes'], [600, '10 minutes'], [1800, '30 minutes'], [3600, '1 hour']];
const COLS = 24;
const ROW_PX = 70;
// The widget types 6.0 allows on a template's dashboard that Peregrine
// draws.
const TEMPLATE_WIDGETS = ['clock', 'graph', 'item', 'plaintext', 'url'];

export async function render(main, params) {
  if (params.get('id')) return view(main, params.get('id'), params.get('kiosk') === '1');
  let users = [];
  await crudPage(main, {
    api: 'dashboard', id: 'dashboardid', ids: 'dashboardids', noun: N, label: 'dashboard', title: 'Dashboards', section: 'dashboards', path: '/dashboards',
    sort: [['name', 'Name'], ['dashboardid', 'ID']],
    search: { field: 'name', label: 'Search name' },
    rowParams: { output: ['dashboardid', 'name', 'userid', 'private'], selectUsers: 'extend', selectUserGroups: 'extend' },
    columns: [
      { label: 'Name', sort: 'name', cell: (d) => d.name },
      { label: 'View', cell: (d) => h('a', { href: `/dashboards?id=${encodeURIComponent(d.dashboardid)}`, class: 'dashboard-open' }, 'Open') },
      { label: 'Owner', cell: (d) => (users.find((u) => u.userid === d.userid) || { username: `#${d.userid}` }).username },
      { label: 'Sharing', cell: (d) => `${d.private === '0' ? 'Public' : 'Private'}${d.users.length + d.userGroups.length ? `, shared with ${d.users.length} users, ${d.userGroups.length} groups` : ''}` },
    ],
    prepare: async () => {
      const [u, g] = await Promise.all([
        call('user.get', { output: ['userid', 'username'], sortfield: 'username' }).catch(() => []),
        call('usergroup.get', { output: ['usrgrpid', 'name'], sortfield: 'name' }).catch(() => []),
      ]);
      users = u;
      return { users: u, groups: g };
    },
    afterPage: async () => {
      if (!users.length) users = await call('user.get', { output: ['userid', 'username'] }).catch(() => []);
    },
    editParams: { selectPages: 'extend', selectUsers: 'extend', selectUserGroups: 'extend' },
    newObject: { private: '1', display_period: '30', auto_start: '1', users: [], userGroups: [] },
    clone: (d) => ({ ...d, name: `${d.name} (copy)`, pages: (d.pages || []).map(stripPage) }),
    form: (d, lists, isNew) => {
      const me = currentSession() || {};
      const f = {
        name: input.text(N, 'name', d.name, { maxlength: 255 }),
        userid: input.select(N, 'userid', lists.users.map((u) => [u.userid, u.username]), d.userid || (lists.users.find((u) => u.username === me.username) || {}).userid),
        private: input.select(N, 'private', [[1, 'Private'], [0, 'Public']], d.private),
        display_period: input.select(N, 'display_period', PERIODS, d.display_period),
        auto_start: input.check(N, 'auto_start', d.auto_start),
      };
      const perm = (key, v) => input.select(N, key, [[2, 'Read-only'], [3, 'Read-write']], v || 2);
      const shareUsers = rowTable('dashboard-users', ['User', 'Permission'], d.users || [], (o) => {
        const u = input.select(N, 'userid', lists.users.map((x) => [x.userid, x.username]), o.userid);
        const p = perm('permission', o.permission);
        return { cells: [u, p], read: () => ({ userid: u.value, permission: Number(p.value) }) };
      }, 'users');
      const shareGroups = rowTable('dashboard-groups', ['User group', 'Permission'], d.userGroups || [], (o) => {
        const g = input.select(N, 'usrgrpid', lists.groups.map((x) => [x.usrgrpid, x.name]), o.usrgrpid);
        const p = perm('permission', o.permission);
        return { cells: [g, p], read: () => ({ usrgrpid: g.value, permission: Number(p.value) }) };
      }, 'userGroups');
      return {
        body: [h('div', { class: 'form-grid' }, fld('Name', f.name), fld('Owner', f.userid), fld('Sharing', f.private),
          fld('Default page display period', f.display_period), fld('Start slideshow automatically', f.auto_start)),
        h('h4', {}, 'Shared with users'), shareUsers.el, h('h4', {}, 'Shared with user groups'), shareGroups.el],
        read: () => {
          const o = { name: f.name.value, private: Number(f.private.value), display_period: Number(f.display_period.value),
            auto_start: f.auto_start.checked ? 1 : 0, users: shareUsers.values(), userGroups: shareGroups.values() };
          if (f.userid.value && f.userid.value !== d.userid) o.userid = f.userid.value;
          if (isNew) o.pages = d.pages && d.pages.length ? d.pages : [{}];
          return o;
        },
      };
    },
  });
  return null;
}

// stripPage is a page without its ids (a clone's).
function stripPage(p) {
  return { name: p.name, display_period: Number(p.display_period), widgets: (p.widgets || []).map((w) => ({
    type: w.type, name: w.name, x: Number(w.x), y: Number(w.y), width: Number(w.width), height: Number(w.height), view_mode: Number(w.view_mode),
    fields: w.fields.map((f) => ({ type: Number(f.type), name: f.name, value: f.value })) })) };
}

// view shows one dashboard; edit mode changes a copy of its pages.
// tpl (template dashboards, templatedashboards.js): {api:
// 'templatedashboard', templateid, back: [href, text]}; its widgets
// are shown as placeholders (a template has no data: hosts linked to
// it show them with theirs), only the types 6.0 allows on a template
// may be added, and an item field chooses among the template's items.
export async function view(main, id, kiosk, tpl) {
  const api = tpl ? tpl.api : 'dashboard';
  const timers = new Set();
  const stopAll = () => { for (const t of timers) t(); timers.clear(); };
  const [d] = await call(`${api}.get`, { output: 'extend', selectPages: 'extend', dashboardids: [id] });
  if (!d) {
    main.append(h('p', { class: 'error', role: 'alert' }, 'No such dashboard, or it is not shared with you.'));
    return null;
  }
  const editable = (await call(`${api}.get`, { output: ['dashboardid'], dashboardids: [id], editable: true })).length === 1;
  const types = tpl ? WIDGETS.filter((x) => TEMPLATE_WIDGETS.includes(x.type)) : WIDGETS;
  let pages = structuredClone(d.pages);
  let pageNo = 0;
  let editing = false;
  const title = h('h1', { id: 'dashboard-title' }, d.name);
  const tabs = h('span', { class: 'dashboard-tabs' });
  const grid = h('div', { class: 'dash-grid', id: 'dashboard-grid' });
  const err = h('p', { class: 'error', id: 'dashboard-error', role: 'alert', hidden: true });
  const tools = h('span', { class: 'toolbar' });
  const widgetForm = h('section', { class: 'card config-form', id: 'widget-form', hidden: true });
  const [backHref, backText] = tpl ? tpl.back : ['/dashboards', 'Dashboards'];
  main.append(h('div', { class: 'toolbar' }, h('a', { href: backHref, id: 'dashboard-back' }, `‹ ${backText}`), title, tabs, tools), err, widgetForm, grid);

  function drawTools() {
    clear(tools);
    if (!editing && !tpl) tools.append(kioskButton(id));
    if (!editable) return;
    if (!editing) {
      tools.append(h('button', { type: 'button', id: 'dashboard-edit', onclick: () => { editing = true; draw(); } }, 'Edit dashboard'));
      return;
    }
    tools.append(
      h('button', { type: 'button', id: 'widget-add', onclick: () => openWidget(null) }, 'Add widget'),
      h('button', { type: 'button', id: 'page-add', onclick: () => { pages.push({ name: `Page ${pages.length + 1}`, display_period: '0', widgets: [] }); pageNo = pages.length - 1; draw(); } }, 'Add page'),
      h('button', { type: 'button', id: 'dashboard-save', onclick: save }, 'Save changes'),
      h('button', { type: 'button', id: 'dashboard-cancel', onclick: () => { pages = structuredClone(d.pages); editing = false; err.hidden = true; draw(); } }, 'Cancel'));
  }

  async function save() {
    err.hidden = true;
    try {
      await call(`${api}.update`, { dashboardid: d.dashboardid, pages: pages.map((p) => {
        const o = { name: p.name, display_period: Number(p.display_period), widgets: p.widgets.map((w) => {
          const x = { type: w.type, name: w.name, x: Number(w.x), y: Number(w.y), width: Number(w.width), height: Number(w.height),
            view_mode: Number(w.view_mode || 0), fields: w.fields.map((f) => ({ type: Number(f.type), name: f.name, value: f.value })) };
          if (w.widgetid) x.widgetid = w.widgetid;
          return x;
        }) };
        if (p.dashboard_pageid) o.dashboard_pageid = p.dashboard_pageid;
        return o;
      }) });
      const [fresh] = await call(`${api}.get`, { output: 'extend', selectPages: 'extend', dashboardids: [id] });
      d.pages = fresh.pages;
      pages = structuredClone(fresh.pages);
      editing = false;
      draw();
    } catch (e) {
      err.hidden = false;
      err.textContent = String(e.data || e.message || e);
    }
  }

  function openWidget(w) {
    clear(widgetForm);
    widgetForm.hidden = false;
    const isNew = !w;
    w = w || { type: 'clock', name: '', x: 0, y: 0, width: 6, height: 3, view_mode: '0', fields: [] };
    // A widget of a type not offered here (a template's widget made
    // through the API) keeps its type: it is an option of its own.
    const offered = types.some((x) => x.type === w.type) ? types : [...types, WIDGETS.find((x) => x.type === w.type) || { type: w.type, label: w.type }];
    const type = input.select('widget', 'type', offered.map((x) => [x.type, x.label]), w.type);
    const name = input.text('widget', 'name', w.name, { maxlength: 255 });
    const fieldsBox = h('div', {});
    const hostid = tpl ? tpl.templateid : undefined;
    let fieldsForm = widgetFieldsForm(w.type, w.fields, hostid);
    fieldsBox.append(fieldsForm.el);
    type.addEventListener('change', () => { fieldsForm = widgetFieldsForm(type.value, [], hostid); clear(fieldsBox).append(fieldsForm.el); });
    widgetForm.append(h('form', { id: 'widget-edit', onsubmit: (ev) => {
      ev.preventDefault();
      const nw = { ...w, type: type.value, name: name.value, fields: fieldsForm.read() };
      const page = pages[pageNo];
      if (isNew) {
        const spot = freeSpot(page.widgets, Number(nw.width), Number(nw.height));
        if (!spot) { err.hidden = false; err.textContent = 'No room left on this page for a widget of that size.'; return; }
        Object.assign(nw, spot);
        page.widgets.push(nw);
      } else {
        page.widgets[page.widgets.indexOf(w)] = nw;
      }
      widgetForm.hidden = true;
      draw();
    } }, h('h3', {}, isNew ? 'New widget' : 'Widget'), h('div', { class: 'form-grid' }, fld('Type', type), fld('Name', name)), fieldsBox,
    h('div', { class: 'form-buttons' }, h('button', { type: 'submit', id: 'widget-apply' }, isNew ? 'Add' : 'Apply'),
      h('button', { type: 'button', onclick: () => { widgetForm.hidden = true; } }, 'Cancel'))));
  }

  function draw() {
    stopAll();
    drawTools();
    clear(tabs);
    if (pages.length > 1 || editing) {
      pages.forEach((p, i) => tabs.append(h('button', { type: 'button', class: i === pageNo ? 'active page-tab' : 'page-tab', onclick: () => { pageNo = i; draw(); } }, p.name || `Page ${i + 1}`)));
    }
    clear(grid);
    grid.classList.toggle('editing', editing);
    const page = pages[pageNo];
    let rows = 8;
    for (const w of page.widgets) rows = Math.max(rows, Number(w.y) + Number(w.height));
    grid.style.height = `${rows * ROW_PX}px`;
    for (const w of page.widgets) {
      const body = h('div', { class: 'widget-body' });
      const head = h('div', { class: 'widget-head' }, h('span', { class: 'widget-title' }, w.name || (WIDGETS.find((x) => x.type === w.type) || { label: w.type }).label));
      const box = h('div', { class: 'widget', dataset: { type: w.type, widgetid: w.widgetid || '' } }, head, body);
      place(box, w);
      if (editing) {
        head.append(h('button', { type: 'button', class: 'widget-edit', 'aria-label': 'Edit widget', onclick: () => openWidget(w) }, '✎'),
          h('button', { type: 'button', class: 'widget-remove', 'aria-label': 'Remove widget', onclick: () => { page.widgets.splice(page.widgets.indexOf(w), 1); draw(); } }, '×'));
        const grip = h('span', { class: 'widget-resize', 'aria-label': 'Resize' });
        box.append(grip);
        drag(head, box, w, page, false);
        drag(grip, box, w, page, true);
        body.append(h('p', { class: 'muted' }, `${w.width}×${w.height} at ${w.x},${w.y}`));
      } else if (tpl) {
        body.append(h('p', { class: 'muted' }, 'Drawn with each linked host\'s data on its dashboards.'),
          h('p', { class: 'muted' }, w.fields.map((f) => `${f.name}: ${f.value}`).join(', ')));
      } else {
        timers.add(renderWidget(w, body));
      }
      grid.append(box);
    }
  }

  // drag moves (or resizes) w by whole grid cells, refusing a place
  // that overlaps another widget or leaves the grid, as the API does.
  function drag(handle, box, w, page, resize) {
    handle.addEventListener('pointerdown', (ev) => {
      if (ev.target.tagName === 'BUTTON') return;
      ev.preventDefault();
      handle.setPointerCapture(ev.pointerId);
      const cell = grid.clientWidth / COLS;
      const x0 = ev.clientX;
      const y0 = ev.clientY;
      const start = { x: Number(w.x), y: Number(w.y), width: Number(w.width), height: Number(w.height) };
      const move = (e) => {
        const dx = Math.round((e.clientX - x0) / cell);
        const dy = Math.round((e.clientY - y0) / ROW_PX);
        const next = resize ? { ...start, width: start.width + dx, height: start.height + dy } : { ...start, x: start.x + dx, y: start.y + dy };
        if (fits(next, page.widgets.filter((o) => o !== w))) {
          Object.assign(w, next);
          place(box, w);
        }
      };
      const up = () => {
        handle.removeEventListener('pointermove', move);
        handle.removeEventListener('pointerup', up);
        draw();
      };
      handle.addEventListener('pointermove', move);
      handle.addEventListener('pointerup', up);
    });
  }

  draw();
  if (!kiosk) return stopAll;
  const leave = enterKiosk(id);
  return () => { stopAll(); leave(); };
}

function place(box, w) {
  box.style.left = `${(Number(w.x) / COLS) * 100}%`;
  box.style.width = `${(Number(w.width) / COLS) * 100}%`;
  box.style.top = `${Number(w.y) * ROW_PX}px`;
  box.style.height = `${Number(w.height) * ROW_PX}px`;
}

// fits reports whether r is on the grid and clear of others.
function fits(r, others) {
  if (r.x < 0 || r.y < 0 || r.width < 1 || r.height < 2 || r.width > 24 || r.height > 32 || r.x + r.width > COLS || r.y + r.height > 64) return false;
  return !others.some((o) => r.x < Number(o.x) + Number(o.width) && Number(o.x) < r.x + r.width && r.y < Number(o.y) + Number(o.height) && Number(o.y) < r.y + r.height);
}

// freeSpot finds the first place for a w×ht widget, row by row.
function freeSpot(widgets, w, ht) {
  for (let y = 0; y + ht <= 64; y++) {
    for (let x = 0; x + w <= COLS; x++) {
      if (fits({ x, y, width: w, height: ht }, widgets)) return { x, y, width: w, height: ht };
    }
  }
  return null;
}
