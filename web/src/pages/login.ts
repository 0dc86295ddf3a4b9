import { api, learnReplicas, parseServers, storedServers, storeKey, storeServers } from '../api';
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
  const servers = h('input', {
    type: 'text',
    name: 'servers',
    id: 'servers',
    value: storedServers().join(', '),
    placeholder: 'https://allot-a:8080, https://allot-b:8080',
    autocomplete: 'off',
    spellcheck: 'false',
    'data-testid': 'servers-input',
  });
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
          storeServers(parseServers(servers.value));
          await api<WhoAmI>('/v1/whoami', { key: value });
          storeKey(value, remember.checked);
          await learnReplicas();
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
    h(
      'details',
      { class: 'servers', open: storedServers().length > 0 },
      h('summary', null, 'allotd replicas'),
      h('label', { for: 'servers' }, 'Server URLs, comma-separated'),
      servers,
      h('p', { class: 'hint' }, 'Where allotd runs as replicas, the console calls the one that leads and follows a failover. It learns the replicas from this server; list them here to reach them when this one is down.'),
    ),
    error,
    button,
    h('p', { class: 'hint' }, 'Operators: the admin key allotd printed at its first start. Everyone else: ', h('code', null, 'allot keys create NAME'), '.'),
  );
  setTimeout(() => key.focus(), 0);
  return h('div', { class: 'login' }, form);
}
