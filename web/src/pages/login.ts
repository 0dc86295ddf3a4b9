import { api, storeKey } from '../api';
import { errorText, h } from '../dom';
import type { WhoAmI } from '../types';

export function loginPage(message: string | null, done: () => void): HTMLElement {
  const key = h('input', {
    type: 'password',
    name: 'key',
    id: 'key',
    placeholder: 'allot_…',
    autocomplete: 'off',
    spellcheck: 'false',
    required: true,
    'data-testid': 'key-input',
  });
  const remember = h('input', { type: 'checkbox', id: 'remember', checked: true });
  const error = h('div', { class: 'error', role: 'alert', hidden: !message, 'data-testid': 'signin-error' }, message ?? '');
  const button = h('button', { class: 'btn btn-primary', type: 'submit', 'data-testid': 'sign-in' }, 'Sign in');
  const form = h(
    'form',
    {
      class: 'login-card',
      onsubmit: async (event: Event) => {
        event.preventDefault();
        const value = key.value.trim();
        error.hidden = true;
        button.disabled = true;
        try {
          await api<WhoAmI>('/v1/whoami', { key: value });
          storeKey(value, remember.checked);
          done();
        } catch (e) {
          error.textContent = errorText(e);
          error.hidden = false;
        } finally {
          button.disabled = false;
        }
      },
    },
    h('div', { class: 'brand brand-big' }, h('span', { class: 'logo' }, '◆'), 'Allot'),
    h('p', { class: 'muted' }, 'Sign in to the GPU cloud console with an API key.'),
    h('label', { for: 'key' }, 'API key'),
    key,
    h('label', { class: 'check' }, remember, ' Remember on this browser'),
    error,
    button,
    h('p', { class: 'hint' }, 'Operators: the admin key allotd printed at its first start. Everyone else: ', h('code', null, 'allot keys create NAME'), '.'),
  );
  setTimeout(() => key.focus(), 0);
  return h('div', { class: 'login' }, form);
}
