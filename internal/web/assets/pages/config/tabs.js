// Small helpers of the template and discovery forms: tabs (6.0's forms
// are tabbed) and a download link for a document made in the page.
import { h } from '../../dom.js';

// tabs lays out [label, [elements]] as a tab bar over panels; every
// panel stays in the form (hidden ones too), so one submit reads all.
export function tabs(id, list) {
  const bar = h('div', { class: 'tab-bar', role: 'tablist', id });
  const panels = list.map(([label, els], i) => h('div', { class: 'tab-panel', role: 'tabpanel', id: `${id}-panel-${i}`, hidden: i !== 0 }, els));
  list.forEach(([label], i) => {
    bar.append(h('button', { type: 'button', role: 'tab', class: i === 0 ? 'tab active' : 'tab', id: `${id}-${i}`, dataset: { tab: label },
      onclick: () => {
        panels.forEach((p, j) => { p.hidden = j !== i; });
        [...bar.children].forEach((b, j) => b.classList.toggle('active', j === i));
      } }, label));
  });
  return h('div', { class: 'tabs' }, bar, panels);
}

// download is a link that saves text as a file (a blob: URL, no server
// round trip).
export function download(id, name, text, type) {
  return h('a', { id, href: URL.createObjectURL(new Blob([text], { type })), download: name }, name);
}
