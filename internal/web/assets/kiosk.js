// Kiosk mode of a dashboard (6.0's): /dashboards?id=N&kiosk=1 shows the
// widgets alone, without the header, menus and the dashboard's toolbar
// (style.css body.kiosk), with one small "Normal view" button to come
// back. The URL carries the mode, so a wall screen's bookmark opens in
// it; it is a view only: the server checks every request as before.
import { h } from './dom.js';

function go(url) {
  history.pushState(null, '', url);
  dispatchEvent(new PopStateEvent('popstate'));
}

// kioskButton is the toolbar's button that enters kiosk mode.
export function kioskButton(id) {
  return h('button', { type: 'button', id: 'dashboard-kiosk', title: 'Kiosk mode: the widgets alone, full screen',
    onclick: () => go(`/dashboards?id=${encodeURIComponent(id)}&kiosk=1`) }, 'Kiosk mode');
}

// enterKiosk hides the page's frame; the returned function restores it
// (the page's cleanup, on any page change).
export function enterKiosk(id) {
  document.body.classList.add('kiosk');
  const exit = h('button', { type: 'button', id: 'kiosk-exit', class: 'kiosk-exit', title: 'Leave kiosk mode',
    onclick: () => go(`/dashboards?id=${encodeURIComponent(id)}`) }, 'Normal view');
  document.body.append(exit);
  return () => {
    document.body.classList.remove('kiosk');
    exit.remove();
  };
}
