// The app shell: loads the session, wires the header (logout form with
// its CSRF token, theme switch), and routes between pages with the
// History API. Pages are real server paths (/hosts, /latest, ...), so a
// reload or a shared link goes through the server's session check.
import { loadSession, mayOpen } from './api.js';
import { clear, h } from './dom.js';
import { toggleTheme } from './theme.js';

const pages = {
  overview: () => import('./pages/overview.js'),
  problems: () => import('./pages/problems.js'),
  hosts: () => import('./pages/hosts.js'),
  latest: () => import('./pages/latest.js'),
  graph: () => import('./pages/graph.js'),
  graphs: () => import('./pages/graphs.js'),
  hostdashboards: () => import('./pages/hostdashboards.js'),
  'config/hosts': () => import('./pages/config/hosts.js'),
  'config/items': () => import('./pages/config/items.js'),
  'config/triggers': () => import('./pages/config/triggers.js'),
  'config/valuemaps': () => import('./pages/config/valuemaps.js'),
  'config/actions': () => import('./pages/config/actions.js'),
  'config/maintenance': () => import('./pages/config/maintenance.js'),
  'config/templates': () => import('./pages/config/templates.js'),
  'config/hostgroups': () => import('./pages/config/hostgroups.js'),
  'config/discovery': () => import('./pages/config/discovery.js'),
  'config/prototypes': () => import('./pages/config/prototypes.js'),
  'admin/users': () => import('./pages/admin/users.js'),
  'admin/usergroups': () => import('./pages/admin/usergroups.js'),
  'admin/roles': () => import('./pages/admin/roles.js'),
  'admin/mediatypes': () => import('./pages/admin/mediatypes.js'),
  'admin/scripts': () => import('./pages/admin/scripts.js'),
  'admin/settings': () => import('./pages/admin/settings.js'),
  'admin/housekeeping': () => import('./pages/admin/settings.js'),
  'admin/auditlog': () => import('./pages/admin/auditlog.js'),
  'admin/queue': () => import('./pages/admin/queue.js'),
  'admin/authentication': () => import('./pages/admin/authentication.js'),
  'admin/sysinfo': () => import('./pages/admin/sysinfo.js'),
  dashboards: () => import('./pages/dashboards.js'),
  services: () => import('./pages/services.js'),
  'services/sla': () => import('./pages/sla.js'),
  'user/tokens': () => import('./pages/tokens.js'),
  'config/proxies': () => import('./pages/config/proxies.js'),
  'config/drules': () => import('./pages/config/drules.js'),
  'config/webscenarios': () => import('./pages/config/webscenarios.js'),
  'admin/autoreg': () => import('./pages/admin/autoreg.js'),
  discovery: () => import('./pages/discovery.js'),
  web: () => import('./pages/web.js'),
  'config/graphs': () => import('./pages/config/graphs.js'),
  'config/templatedashboards': () => import('./pages/config/templatedashboards.js'),
  'config/correlation': () => import('./pages/config/correlation.js'),
};

let cleanup = null;
let seq = 0;

async function show() {
  const name = location.pathname.replace(/^\//, '') || 'overview';
  const load = pages[name] || pages.overview;
  const main = document.getElementById('main');
  // "config" marks every configuration page (config/hosts, ...).
  // Proxies keep 6.0's place under Administration at /config/proxies.
  const menu = name === 'config/proxies' ? 'admin/proxies' : name;
  for (const a of document.querySelectorAll('#nav a')) a.classList.toggle('active', a.dataset.page === menu || menu.startsWith(a.dataset.page + '/'));
  if (cleanup) {
    try { cleanup(); } catch (e) { console.error(e); }
    cleanup = null;
  }
  const my = ++seq;
  clear(main);
  document.title = `Peregrine: ${name.replace('/', ': ')}`;
  try {
    const mod = await load();
    if (my !== seq) return;
    cleanup = (await mod.render(main, new URLSearchParams(location.search), name)) || null;
  } catch (e) {
    console.error(e);
    if (my === seq) main.appendChild(h('p', { class: 'error', role: 'alert' }, String(e.message || e)));
  }
}

// navigate moves to a page of the app without reloading it.
export function navigate(url) {
  history.pushState(null, '', url);
  show();
}

async function start() {
  const s = await loadSession();
  const who = document.getElementById('whoami');
  who.textContent = s.username;
  // The API tokens page needs the role's manage_api_tokens.
  if (!mayOpen('/user/tokens')) who.removeAttribute('href');
  document.getElementById('logout-csrf').value = s.csrf;
  // The menu shows what the server lets this user open (it refuses
  // the rest itself: hiding a link is not the check).
  for (const a of document.querySelectorAll('#nav a')) {
    const first = { config: ['/config/hosts', '/config/templates', '/config/hostgroups', '/config/actions', '/config/maintenance'], admin: ['/admin/users', '/admin/usergroups', '/admin/roles', '/admin/mediatypes', '/admin/scripts', '/admin/settings', '/admin/auditlog', '/admin/queue', '/admin/authentication'],
      dashboards: ['/dashboards'], services: ['/services', '/services/sla'],
      web: ['/web'], discovery: ['/discovery'] }[a.dataset.page];
    if (!first) continue;
    const to = first.find(mayOpen);
    a.hidden = !to;
    if (to) a.href = to;
  }
  document.getElementById('theme-toggle').addEventListener('click', toggleTheme);
  document.addEventListener('click', (ev) => {
    const a = ev.target.closest && ev.target.closest('a');
    // A link whose own handler took the click (the configuration
    // pages' "edit" links) is not a page change.
    if (!a || ev.defaultPrevented || a.target || ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.button !== 0) return;
    const u = new URL(a.href, location.href);
    if (u.origin !== location.origin || !(u.pathname.slice(1) in pages)) return;
    ev.preventDefault();
    navigate(u.pathname + u.search);
  });
  addEventListener('popstate', show);
  await show();
}

start();
