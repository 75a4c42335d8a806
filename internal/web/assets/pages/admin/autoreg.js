// Administration → General → Autoregistration (autoregistration.get and
// .update): which connections registering agents may use (no
// encryption, PSK, or both) and the PSK. The API never returns the
// identity or the key: the fields start empty; with PSK already on,
// empty fields keep them ("Change PSK" in 6.0), and turning PSK on
// needs both. Only what changed is sent.
import { call } from '../../api.js';
import { h, clear } from '../../dom.js';
import { subnav, fld, showErrorAt } from '../../crud.js';

export async function render(main) {
  const box = h('section', { class: 'card config-form', id: 'autoreg-form' });
  main.append(subnav('admin', '/admin/autoreg'), h('div', { class: 'toolbar' }, h('h1', {}, 'Autoregistration')), box);
  const load = async (savedText) => {
    const cur = await call('autoregistration.get', { output: 'extend' });
    const acc = Number(cur.tls_accept);
    clear(box);
    const none = h('input', { type: 'checkbox', id: 'autoreg-accept-none', checked: (acc & 1) !== 0 });
    const psk = h('input', { type: 'checkbox', id: 'autoreg-accept-psk', checked: (acc & 2) !== 0 });
    const ident = h('input', { type: 'text', id: 'autoreg-tls-psk-identity', dataset: { key: 'tls_psk_identity' }, autocomplete: 'off', maxlength: 128 });
    const key = h('input', { type: 'password', id: 'autoreg-tls-psk', dataset: { key: 'tls_psk' }, autocomplete: 'new-password', maxlength: 512 });
    const hadPSK = (acc & 2) !== 0;
    const pskBox = h('div', { id: 'autoreg-psk' },
      h('p', { class: 'muted' }, hadPSK ? 'A PSK is stored and never shown. Leave both fields empty to keep it; type both to replace it.'
        : 'Type the PSK identity and the key (32 to 512 hexadecimal digits).'),
      h('div', { class: 'form-grid' }, fld('PSK identity', ident), fld('PSK', key)));
    const show = () => { pskBox.hidden = !psk.checked; };
    psk.addEventListener('change', show);
    show();
    const err = h('p', { class: 'error', id: 'autoreg-error', role: 'alert', hidden: true });
    const saved = h('span', { class: 'muted', id: 'autoreg-saved' }, savedText || '');
    const form = h('form', { id: 'autoreg-edit', onsubmit: async (ev) => {
      ev.preventDefault();
      saved.textContent = '';
      const next = (none.checked ? 1 : 0) | (psk.checked ? 2 : 0);
      const o = {};
      if (next !== acc) o.tls_accept = next;
      if (next & 2) {
        if (ident.value !== '' || !hadPSK) o.tls_psk_identity = ident.value;
        if (key.value !== '' || !hadPSK) o.tls_psk = key.value;
      }
      if (!Object.keys(o).length) {
        saved.textContent = 'Nothing changed.';
        return;
      }
      try {
        await call('autoregistration.update', o);
        await load(`Saved: ${Object.keys(o).join(', ')}.`);
      } catch (e) {
        showErrorAt(form, err, e);
      }
    } },
    h('div', { class: 'field', dataset: { key: 'tls_accept' } }, h('span', { class: 'field-label' }, 'Encryption level'),
      h('div', { class: 'checks' }, h('label', { class: 'check' }, none, 'No encryption'), h('label', { class: 'check' }, psk, 'PSK'))),
    pskBox, err, h('div', { class: 'form-buttons' }, h('button', { type: 'submit', id: 'autoreg-save' }, 'Update'), saved));
    box.append(form);
  };
  await load();
}
