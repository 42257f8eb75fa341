import { ApiError, explain, identify } from '../api.js';
import { h } from '../dom.js';
import { button } from '../ui.js';

/**
 * Sign-in: the key is checked against the API, then kept in sessionStorage.
 * @param {HTMLElement} root
 * @param {{ onSignedIn: (key: string, caps: import('../api.js').Caps) => void, message?: string }} options
 */
export function signInView(root, { onSignedIn, message }) {
  const error = h('div', { class: 'form-error', role: 'alert', id: 'signin-error' }, message ?? '');
  const input = h('input', {
    id: 'api-key',
    name: 'key',
    type: 'password',
    class: 'mono',
    required: true,
    autocomplete: 'off',
    spellcheck: 'false',
    autocapitalize: 'off',
    'aria-describedby': 'signin-error signin-help',
  });
  const submit = button('Sign in', null, { kind: 'primary', type: 'submit', class: 'btn btn-primary btn-block' });

  const form = h(
    'form',
    {
      class: 'stack',
      onsubmit: async (/** @type {SubmitEvent} */ event) => {
        event.preventDefault();
        const key = input.value.trim();
        if (!key) return;
        error.textContent = '';
        submit.disabled = true;
        submit.textContent = 'Checking…';
        try {
          onSignedIn(key, await identify(key));
        } catch (failure) {
          error.textContent =
            failure instanceof ApiError && failure.status === 401
              ? 'This API key was not accepted: it is unknown or has been revoked. Check it for typos, or ask your store administrator for a new one.'
              : explain(failure, 'check the key', 'webhooks:read');
          input.focus();
          input.select();
        } finally {
          submit.disabled = false;
          submit.textContent = 'Sign in';
        }
      },
    },
    h('div', { class: 'field' }, h('label', { for: 'api-key' }, 'API key'), input),
    submit,
    error,
  );

  root.append(
    h(
      'section',
      { class: 'signin' },
      h(
        'div',
        { class: 'signin-card' },
        h('h1', { class: 'view-title', tabindex: '-1' }, 'Sign in'),
        h('p', { class: 'lead' }, 'Use an API key of your store to see its webhook endpoints, their deliveries, and retry what failed.'),
        form,
        h(
          'p',
          { class: 'muted small', id: 'signin-help' },
          'The key stays in this browser tab (sessionStorage) and is sent only to this Hookline, as ',
          h('code', {}, 'X-API-Key'),
          '. Closing the tab signs you out.',
        ),
      ),
    ),
  );
  input.focus();
}
