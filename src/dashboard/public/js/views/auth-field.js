// How Hookline authenticates to an endpoint's receiver: the sentences the endpoint page shows, and
// the edit form's part for basic and bearer auth (OAuth2 and client certificates are set with the API).
import { h, time } from '../dom.js';

/** @typedef {import('../api.js').Webhook} Webhook */
/** @typedef {import('../api.js').ReceiverAuth} ReceiverAuth */

/**
 * The endpoint's auth in a sentence: the method and its non-secret part.
 * @param {Webhook['auth']} auth
 */
export function authText(auth) {
  if (!auth) return 'None';
  if (auth.type === 'basic') return `HTTP Basic (user ${auth.username})`;
  if (auth.type === 'bearer') return 'Bearer token';
  const scope = auth.scope ? `, scope ${auth.scope}` : '';
  return `OAuth2 client credentials (client id ${auth.clientId}${scope}), token from ${hostOf(auth.tokenUrl)}`;
}

/** @param {string} url */
function hostOf(url) {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/**
 * Mutual TLS in a sentence: whose certificate is presented, until when, and which authority the receiver must have.
 * @param {Webhook['tls']} tls
 * @returns {Array<Node | string> | string}
 */
export function tlsText(tls) {
  if (!tls) return 'None';
  const { subject, validTo } = tls.clientCertificate;
  const expired = Date.parse(validTo) <= Date.now();
  return [
    `Client certificate ${subject}, `,
    expired ? h('strong', {}, 'expired ', time(validTo)) : h('span', {}, 'expires ', time(validTo)),
    tls.ca ? h('span', { class: 'muted small' }, ` · trusts only ${tls.ca.map((ca) => ca.subject).join('; ')}`) : '',
  ];
}

const METHODS = /** @type {const} */ ([
  ['none', 'None'],
  ['basic', 'HTTP Basic'],
  ['bearer', 'Bearer token'],
]);

/**
 * The form's authentication: None, HTTP Basic or a bearer token. Secrets are never shown, so a
 * stored one is kept unless the method changes or one is typed. An endpoint with OAuth2 keeps it
 * unless another choice is made. `read()` answers {auth} (undefined: unchanged) or {error, field}.
 * @param {Webhook | undefined} webhook
 */
export function authField(webhook) {
  const current = webhook?.auth ?? null;
  const method = h(
    'select',
    { id: 'ep-auth', name: 'auth', 'aria-describedby': 'ep-auth-help' },
    current?.type === 'oauth2' ? h('option', { value: 'oauth2' }, 'OAuth2 client credentials (kept as set)') : null,
    METHODS.map(([value, label]) => h('option', { value }, label)),
  );
  method.value = current?.type ?? 'none';
  const stored = (/** @type {string} */ type) => current?.type === type;
  const username = h('input', {
    id: 'ep-auth-username',
    autocomplete: 'off',
    maxlength: '256',
    value: current?.type === 'basic' ? current.username : '',
  });
  const password = h('input', {
    id: 'ep-auth-password',
    type: 'password',
    autocomplete: 'new-password',
    maxlength: '4096',
    placeholder: stored('basic') ? 'Set – leave empty to keep' : '',
  });
  const token = h('input', {
    id: 'ep-auth-token',
    type: 'password',
    class: 'mono',
    autocomplete: 'off',
    maxlength: '4096',
    placeholder: stored('bearer') ? 'Set – leave empty to keep' : '',
  });
  const basicFields = h(
    'div',
    { class: 'auth-fields' },
    h('div', { class: 'field' }, h('label', { for: 'ep-auth-username' }, 'User name'), username),
    h('div', { class: 'field' }, h('label', { for: 'ep-auth-password' }, 'Password'), password),
  );
  const bearerFields = h('div', { class: 'field' }, h('label', { for: 'ep-auth-token' }, 'Token'), token);
  const showFields = () => {
    basicFields.hidden = method.value !== 'basic';
    bearerFields.hidden = method.value !== 'bearer';
  };
  method.addEventListener('change', showFields);
  showFields();

  /** @returns {{ auth: ReceiverAuth | null | undefined } | { error: string, field: HTMLElement }} */
  function read() {
    const chosen = method.value;
    if (chosen === 'oauth2') return { auth: undefined };
    if (chosen === 'none') return { auth: current ? null : undefined };
    if (chosen === 'bearer') {
      if (!token.value) return stored('bearer') ? { auth: undefined } : { error: 'Authentication: give the bearer token.', field: token };
      return { auth: { type: 'bearer', token: token.value } };
    }
    const name = username.value.trim();
    if (!name) return { error: 'Authentication: give the user name.', field: username };
    if (!password.value) {
      const unchanged = current?.type === 'basic' && current.username === name;
      if (unchanged) return { auth: undefined };
      return {
        error: 'Authentication: give the password (it is never shown, so a changed user name needs it typed again).',
        field: password,
      };
    }
    return { auth: { type: 'basic', username: name, password: password.value } };
  }

  const field = h(
    'fieldset',
    { class: 'choice-field auth-field' },
    h('legend', {}, 'Authentication'),
    h('div', { class: 'field' }, h('label', { for: 'ep-auth' }, 'How Hookline proves itself to your receiver'), method),
    basicFields,
    bearerFields,
    h(
      'p',
      { class: 'hint', id: 'ep-auth-help' },
      'Sent as the Authorization header of every attempt. Passwords and tokens are stored encrypted and never shown again. ',
      'OAuth2 client credentials and client certificates (mutual TLS) are set through the API.',
    ),
  );
  return { field, read };
}
