// Theme: the user's choice (localStorage) over the system's
// (prefers-color-scheme, handled in style.css). Loaded on every page,
// the login page included, as a module: the CSP allows no inline script.
const KEY = 'peregrine.theme';

export function currentTheme() {
  const t = localStorage.getItem(KEY);
  if (t === 'dark' || t === 'light') return t;
  return matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

export function applyTheme(t) {
  document.documentElement.dataset.theme = t;
}

export function toggleTheme() {
  const t = currentTheme() === 'dark' ? 'light' : 'dark';
  localStorage.setItem(KEY, t);
  applyTheme(t);
  document.dispatchEvent(new CustomEvent('themechange', { detail: t }));
}

applyTheme(currentTheme());
