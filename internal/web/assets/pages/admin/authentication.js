// Administration: authentication (authentication.get/update), only what
// Peregrine uses: internal authentication and its password policy
// (minimum length, the character classes, not the user's names). LDAP,
// HTTP and SAML authentication are not in Peregrine: the page says so
// instead of offering switches that would be refused.
import { call } from '../../api.js';
import { h, clear } from '../../dom.js';
import { subnav, fld, showErrorAt, numVal } from '../../crud.js';

const RULES = [[1, 'an uppercase and a lowercase Latin letter'], [2, 'a digit'], [4, 'a special character'], [8, 'not the user’s names (or easy to guess)']];

export async function render(main) {
  const box = h('section', { class: 'card config-form', id: 'authentication-form' });
  main.append(subnav('admin', '/admin/authentication'), h('div', { class: 'toolbar' }, h('h1', {}, 'Authentication')), box);
  const load = async () => {
    const cur = await call('authentication.get', { output: ['authentication_type', 'passwd_min_length', 'passwd_check_rules'] });
    clear(box);
    const len = h('input', { type: 'text', inputmode: 'numeric', id: 'authentication-passwd-min-length', dataset: { key: 'passwd_min_length' }, maxlength: 2, value: cur.passwd_min_length });
    const bits = RULES.map(([b, text]) => [b, h('input', { type: 'checkbox', id: `authentication-rule-${b}`, checked: (Number(cur.passwd_check_rules) & b) !== 0 }), text]);
    const err = h('p', { class: 'error', id: 'authentication-error', role: 'alert', hidden: true });
    const saved = h('span', { class: 'muted', id: 'authentication-saved' });
    const form = h('form', { id: 'authentication-edit', onsubmit: async (ev) => {
      ev.preventDefault();
      err.hidden = true;
      try {
        const rules = bits.reduce((a, [b, c]) => a | (c.checked ? b : 0), 0);
        await call('authentication.update', { passwd_min_length: numVal(len), passwd_check_rules: rules });
        saved.textContent = 'Saved.';
      } catch (e) {
        showErrorAt(form, err, e);
      }
    } },
    h('p', {}, 'Default authentication: internal (Peregrine’s own users and passwords).'),
    h('div', { class: 'form-grid' }, fld('Minimum password length', len), h('div', { dataset: { key: 'passwd_check_rules' } }, h('span', { class: 'field-label' }, 'Password must contain'),
      bits.map(([, c, text]) => h('label', { class: 'check' }, c, ` ${text}`)))),
    err, h('div', { class: 'form-buttons' }, h('button', { type: 'submit', id: 'authentication-save' }, 'Update'), saved),
    h('p', { class: 'muted' }, 'Not in Peregrine: LDAP, HTTP (web server) and SAML authentication, and Zabbix’s list of common passwords. ',
      'Enabling them through the API is refused. Login attempts and blocking are in General settings.'));
    box.append(form);
  };
  await load();
}
