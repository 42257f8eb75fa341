// Pieces every view uses: badges, notes, buttons, dialogs, toasts, JSON blocks, polling.
import { copyText, h, jsonNodes } from './dom.js';

/** @typedef {import('./dom.js').Child} Child */

/** @type {Record<string, string>} */
const STATUS_LABELS = { succeeded: 'Succeeded', failed: 'Failed', pending: 'Pending' };

/** @param {string} status */
export function statusBadge(status) {
  return h('span', { class: ['badge', `badge-${status}`], dataset: { status } }, STATUS_LABELS[status] ?? status);
}

/** @param {boolean} isActive */
export function activeBadge(isActive) {
  return h('span', { class: ['badge', isActive ? 'badge-active' : 'badge-inactive'] }, isActive ? 'Active' : 'Inactive');
}

/**
 * An active endpoint whose latest deliveries fail: a warning, not the green of a healthy one.
 * @param {{ failed: number, finished: number }} counts
 */
export function failingBadge({ failed, finished }) {
  const text = `${failed} of its latest ${finished} finished deliveries failed`;
  return h(
    'span',
    { class: 'badge badge-failing', title: `Active, but ${text}` },
    'Failing',
    h('span', { class: 'visually-hidden' }, `: ${text}`),
  );
}

/**
 * Why an inactive endpoint is inactive (the API's `disabledReason`): a sentence, and a word or two for a table.
 * @type {Record<import('./api.js').DisabledReason, { text: string, short: string }>}
 */
export const DISABLED_REASONS = {
  manual: { text: 'Disabled by hand', short: 'by hand' },
  gone: { text: 'Disabled: its server said this address is gone for good', short: 'address gone' },
  failing: { text: 'Disabled: failing for too long', short: 'failing' },
};

/**
 * A note in the flow of the page: `kind` info, warn, error (the last is announced).
 * @param {string} kind
 * @param {...Child} content
 */
export function note(kind, ...content) {
  return h('div', { class: ['note', `note-${kind}`], role: kind === 'error' ? 'alert' : null }, ...content);
}

/** @typedef {(event: MouseEvent & { currentTarget: HTMLButtonElement }) => unknown} ClickHandler */

/**
 * @param {string} label
 * @param {ClickHandler | null} onclick
 * @param {{ kind?: string, type?: string } & import('./dom.js').Props} [options] `kind` styles it; the rest are `h` props.
 */
export function button(label, onclick, { kind = 'secondary', type = 'button', ...props } = {}) {
  return h('button', { type, class: ['btn', `btn-${kind}`], onclick, ...props }, label);
}

/**
 * Runs `action` with the button disabled and showing it is busy.
 * @template T
 * @param {HTMLButtonElement} btn
 * @param {() => Promise<T>} action
 * @returns {Promise<T>}
 */
export async function busy(btn, action) {
  btn.disabled = true;
  btn.setAttribute('aria-busy', 'true');
  try {
    return await action();
  } finally {
    btn.disabled = false;
    btn.removeAttribute('aria-busy');
  }
}

/**
 * @param {() => string} getText
 * @param {string} [label]
 */
export function copyButton(getText, label = 'Copy') {
  const btn = button(
    label,
    async () => {
      const copied = await copyText(getText());
      btn.textContent = copied ? 'Copied' : 'Press Ctrl+C';
      setTimeout(() => (btn.textContent = label), 1600);
    },
    { kind: 'quiet', class: 'btn btn-quiet btn-small' },
  );
  return btn;
}

/**
 * @param {unknown} value
 * @param {string} label
 */
export function jsonBlock(value, label) {
  const pre = h('pre', { class: 'json', tabindex: '0', 'aria-label': label }, h('code', {}, jsonNodes(value)));
  return h(
    'div',
    { class: 'json-wrap' },
    copyButton(() => JSON.stringify(value, null, 2), 'Copy JSON'),
    pre,
  );
}

/**
 * @param {string[]} values
 * @param {{ max?: number }} [options]
 */
export function chips(values, { max = Infinity } = {}) {
  const shown = values.slice(0, max);
  const rest = values.length - shown.length;
  return h(
    'ul',
    { class: 'chips', 'aria-label': 'Events' },
    shown.map((value) => h('li', { class: 'chip' }, value)),
    rest > 0 ? h('li', { class: 'chip chip-more', title: values.slice(max).join(', ') }, `+${rest} more`) : null,
  );
}

/** @param {...[label: string, href?: string]} items */
export function breadcrumbs(...items) {
  return h(
    'nav',
    { class: 'crumbs', 'aria-label': 'Breadcrumb' },
    h(
      'ol',
      {},
      items.map(([label, href], i) =>
        h('li', {}, href && i < items.length - 1 ? h('a', { href }, label) : h('span', { 'aria-current': 'page' }, label)),
      ),
    ),
  );
}

/**
 * The view's heading; it takes the focus after a route change so a screen reader reads it.
 * @param {string} text
 * @param {...Child} extra
 */
export function title(text, ...extra) {
  return h('div', { class: 'title-row' }, h('h1', { tabindex: '-1', class: 'view-title' }, text), ...extra);
}

/**
 * A modal <dialog> (focus is trapped and Escape closes it; focus returns to the opener). `build`
 * gets a `close(value)` function and returns the dialog's content; resolves with that value.
 * @template T
 * `onDismiss`, when given, makes the dialog stay open on Escape or a click outside it (it is called
 * instead): for a dialog whose content is lost once it closes.
 * @param {(close: (value?: T) => void) => Node | Node[]} build
 * @param {{ wide?: boolean, label?: string, onDismiss?: () => void }} [options]
 * @returns {Promise<T | undefined>}
 */
export function openDialog(build, { wide = false, label, onDismiss } = {}) {
  return new Promise((resolve) => {
    /** @type {T | undefined} */
    let result;
    let closing = false;
    /** @param {T} [value] */
    const close = (value) => {
      result = value;
      closing = true;
      dialog.close();
    };
    const dialog = h('dialog', { class: ['dialog', wide && 'dialog-wide'], 'aria-label': label });
    dialog.append(...[build(close)].flat());
    dialog.addEventListener('cancel', (event) => {
      if (onDismiss) {
        event.preventDefault();
        onDismiss();
      }
    });
    dialog.addEventListener('close', () => {
      // Chromium lets a second Escape in a row close a dialog whatever `cancel` says: shown again.
      if (onDismiss && !closing) {
        dialog.showModal();
        onDismiss();
        return;
      }
      dialog.remove();
      resolve(result);
    });
    // A click on the backdrop (the dialog element itself, outside its content) closes it.
    dialog.addEventListener('click', (event) => {
      if (event.target !== dialog) return;
      if (onDismiss) onDismiss();
      else dialog.close();
    });
    document.body.append(dialog);
    dialog.showModal();
    // Without this, Chromium may focus the scrollable body of a long dialog rather than its first field.
    if (!dialog.querySelector('[autofocus]'))
      /** @type {HTMLElement | null} */ (dialog.querySelector('input, select, textarea, button'))?.focus();
  });
}

/**
 * Asks before doing something that cannot be undone; resolves true when confirmed.
 * @param {{ heading: string, body: Child, confirm: string, danger?: boolean }} options
 */
export function confirmDialog({ heading, body, confirm, danger = false }) {
  return openDialog(
    (/** @type {(value?: boolean) => void} */ close) => [
      h('h2', { class: 'dialog-title' }, heading),
      h('div', { class: 'dialog-body' }, [body].flat()),
      h(
        'div',
        { class: 'dialog-actions' },
        button('Cancel', () => close(false), { autofocus: true }),
        button(confirm, () => close(true), { kind: danger ? 'danger' : 'primary' }),
      ),
    ],
    { label: heading },
  );
}

/**
 * The signing secret, once: with a copy button and a plain warning.
 * @param {{ heading: string, webhook: import('./api.js').WebhookWithSecret }} options
 */
export function secretDialog({ heading, webhook }) {
  const reminder = h('p', { class: 'form-error dialog-alert', role: 'alert' });
  const confirm = button('I have saved it', () => close(), { kind: 'primary' });
  /** @type {() => void} */
  let close = () => undefined;
  return openDialog(
    (done) => {
      close = done;
      return [
        h('h2', { class: 'dialog-title' }, heading),
        h(
          'div',
          { class: 'dialog-body' },
          h('label', { for: 'signing-secret', class: 'secret-label' }, 'Signing secret of ', h('strong', {}, webhook.name)),
          h(
            'div',
            { class: 'secret-row' },
            // Shown whole and wrapped, not in an input: an input scrolls to its end when focused,
            // hiding the `whsec_` that tells a reader what the string is. One click selects it all.
            h('output', { id: 'signing-secret', class: 'mono secret' }, webhook.secret),
            copyButton(() => webhook.secret, 'Copy secret'),
          ),
          note(
            'warn',
            h('strong', {}, 'Copy it now: it will not be shown again. '),
            'Hookline keeps it encrypted and never displays it after this. If it is lost, rotate the secret.',
          ),
          h(
            'p',
            { class: 'muted small' },
            'Receivers check each request with it: ',
            h('code', {}, 'X-Webhook-Signature'),
            ' is ',
            h('code', {}, 'sha256='),
            ' + the hex HMAC-SHA256 of ',
            h('code', {}, '<X-Webhook-Timestamp>.<body>'),
            ', keyed with this whole string.',
          ),
        ),
        reminder,
        h('div', { class: 'dialog-actions' }, confirm),
      ];
    },
    {
      label: heading,
      // Escape or a click beside it must not lose the secret: only the button closes it.
      onDismiss: () => {
        reminder.textContent = 'The secret is shown only here. Copy it, then choose “I have saved it” to close.';
        confirm.focus();
      },
    },
  );
}

/**
 * @param {string} message
 * @param {'ok' | 'error'} [kind]
 */
export function toast(message, kind = 'ok') {
  const region = /** @type {HTMLElement} */ (document.getElementById('toasts'));
  const item = h('div', { class: ['toast', `toast-${kind}`] }, message);
  region.append(item);
  setTimeout(() => item.remove(), kind === 'error' ? 8000 : 4000);
}

/**
 * Calls `tick` every `intervalMs` while the view lives (until `signal` aborts), waiting for each
 * call to finish, pausing while the tab is hidden and catching up at once when it is shown.
 * Returns a function that runs a tick now (after an action whose outcome should show at once);
 * asked while a tick runs, it runs another as soon as that one ends, so a change made meanwhile
 * (a filter) is never left for the next interval.
 * @param {AbortSignal} signal
 * @param {number} intervalMs
 * @param {() => Promise<unknown>} tick
 * @returns {() => Promise<void>}
 */
export function poll(signal, intervalMs, tick) {
  /** @type {number | undefined} */
  let timer;
  /** @type {Promise<void> | null} */
  let running = null;
  /** @type {Promise<void> | null} */
  let queued = null;
  /** @returns {Promise<void>} */
  const run = () => {
    if (running) return (queued ??= running.then(() => ((queued = null), run())));
    clearTimeout(timer);
    if (signal.aborted) return Promise.resolve();
    running = (async () => {
      try {
        if (!document.hidden) await tick().catch(() => undefined);
      } finally {
        running = null;
      }
      if (!signal.aborted && !queued) timer = setTimeout(run, intervalMs);
    })();
    return running;
  };
  timer = setTimeout(run, intervalMs);
  document.addEventListener('visibilitychange', () => !document.hidden && run(), { signal });
  signal.addEventListener('abort', () => clearTimeout(timer));
  return run;
}

/** @param {string} [label] */
export function spinner(label = 'Loading') {
  return h('span', { class: 'spinner', role: 'status' }, h('span', { class: 'visually-hidden' }, label));
}
