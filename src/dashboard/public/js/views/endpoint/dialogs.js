// What the endpoint page asks before it acts: each dialog resolves with the answer, or undefined
// when cancelled. Those that send their request themselves keep their errors in the dialog.
import { api, explainQueuing } from '../../api.js';
import { h } from '../../dom.js';
import { busy, button, confirmDialog, note, openDialog } from '../../ui.js';

/** @typedef {import('../../api.js').Webhook} Webhook */
/** @typedef {import('../../api.js').QueuedBatch} QueuedBatch */

/** @param {Webhook} webhook */
export function confirmDeactivate(webhook) {
  return confirmDialog({
    heading: `Deactivate ${webhook.name}?`,
    body: h('p', {}, 'It gets no new deliveries, and its pending ones end failed. You can retry them once it is active again.'),
    confirm: 'Deactivate',
  });
}

/** @param {Webhook} webhook */
export function confirmDelete(webhook) {
  return confirmDialog({
    heading: `Delete ${webhook.name}?`,
    body: h('p', {}, 'Nothing more is delivered to it, pending retries included. This cannot be undone.'),
    confirm: 'Delete endpoint',
    danger: true,
  });
}

/**
 * Asks from when to retry the failed deliveries and sends it; resolves with the answer and the
 * `since` sent, or undefined when cancelled.
 * @param {Webhook} webhook
 */
export function retryFailedDialog(webhook) {
  return openDialog(
    (/** @type {(answer?: { batch: QueuedBatch, since?: string }) => void} */ close) => {
      const since = h('input', { id: 'retry-since', type: 'datetime-local', step: '1', 'aria-describedby': 'retry-since-help' });
      const error = h('div', { class: 'form-error', role: 'alert' });
      const submit = button('Retry failed deliveries', null, { kind: 'primary', type: 'submit' });
      return h(
        'form',
        {
          class: 'dialog-form',
          onsubmit: async (/** @type {SubmitEvent} */ event) => {
            event.preventDefault();
            error.textContent = '';
            try {
              const from = since.value ? new Date(since.value).toISOString() : undefined;
              close({ batch: await busy(submit, () => api.retryFailed(webhook.id, from)), since: from });
            } catch (failure) {
              error.textContent =
                failure instanceof RangeError ? 'Choose a valid date and time.' : explainQueuing(failure, 'retry deliveries');
            }
          },
        },
        h('h2', { class: 'dialog-title' }, 'Retry failed deliveries'),
        h(
          'div',
          { class: 'dialog-body stack' },
          h(
            'p',
            {},
            'Every failed delivery of ',
            h('strong', {}, webhook.name),
            ' starts a new cycle of attempts, with the same event id and body.',
          ),
          h(
            'div',
            { class: 'field' },
            h('label', { for: 'retry-since' }, 'Only those of events published since (optional)'),
            since,
            h(
              'p',
              { class: 'hint', id: 'retry-since-help' },
              'Your local time. Leave empty to retry all of them, oldest event first. ',
              'A delivery that has already had as many attempts as a delivery may have stays failed.',
            ),
          ),
          error,
        ),
        h(
          'div',
          { class: 'dialog-actions' },
          button('Cancel', () => close()),
          submit,
        ),
      );
    },
    { label: 'Retry failed deliveries' },
  );
}

/**
 * `iso` as a datetime-local input shows it: local time, to the second (rounded down, so the window starts no later).
 * @param {string} iso
 */
function localInputValue(iso) {
  const date = new Date(iso);
  const pad = (/** @type {number} */ n) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

/**
 * Asks for the window of a replay and sends it; resolves with the answer and the window sent, or
 * undefined when cancelled.
 * @param {Webhook} webhook
 * @param {string | null} [since]
 */
export function replayDialog(webhook, since) {
  return openDialog(
    (/** @type {(answer?: { batch: QueuedBatch, window: { since: string, until?: string } }) => void} */ close) => {
      const from = h('input', {
        id: 'replay-since',
        type: 'datetime-local',
        step: '1',
        required: true,
        value: since ? localInputValue(since) : '',
        'aria-describedby': 'replay-help',
      });
      const until = h('input', { id: 'replay-until', type: 'datetime-local', step: '1' });
      const error = h('div', { class: 'form-error', role: 'alert' });
      const submit = button('Replay events', null, { kind: 'primary', type: 'submit' });
      return h(
        'form',
        {
          class: 'dialog-form',
          onsubmit: async (/** @type {SubmitEvent} */ event) => {
            event.preventDefault();
            error.textContent = '';
            try {
              /** @type {{ since: string, until?: string }} */
              const window = { since: new Date(from.value).toISOString() };
              if (until.value) window.until = new Date(until.value).toISOString();
              close({ batch: await busy(submit, () => api.replay(webhook.id, window)), window });
            } catch (failure) {
              error.textContent =
                failure instanceof RangeError ? 'Choose a valid date and time.' : explainQueuing(failure, 'replay events');
            }
          },
        },
        h('h2', { class: 'dialog-title' }, 'Replay missed events'),
        h(
          'div',
          { class: 'dialog-body stack' },
          h(
            'p',
            {},
            'Every event of the window that ',
            h('strong', {}, webhook.name),
            ' subscribes to and has no delivery of yet (such as those published while it was disabled) is delivered to it, signed as usual.',
          ),
          h('div', { class: 'field' }, h('label', { for: 'replay-since' }, 'Events published since'), from),
          h('div', { class: 'field' }, h('label', { for: 'replay-until' }, 'Until (optional)'), until),
          h(
            'p',
            { class: 'hint', id: 'replay-help' },
            'Your local time; leave Until empty for now. Events older than the time they are kept for are gone and cannot be replayed.',
          ),
          error,
        ),
        h(
          'div',
          { class: 'dialog-actions' },
          button('Cancel', () => close()),
          submit,
        ),
      );
    },
    { label: 'Replay missed events' },
  );
}

/** How long the current secret may keep signing after a rotation, in seconds (the API allows up to 7 days). */
const OVERLAPS = [
  [0, 'None: it stops at once'],
  [3_600, '1 hour'],
  [86_400, '24 hours'],
  [604_800, '7 days'],
];
/** Long enough for a receiver's deploy, the usual choice of Svix-like services. */
const DEFAULT_OVERLAP = 86_400;

/**
 * Asks for the overlap of a rotation; resolves with it in seconds, or undefined when cancelled.
 * @param {Webhook} webhook
 */
export function rotateDialog(webhook) {
  return openDialog(
    (/** @type {(seconds?: number) => void} */ close) => {
      const choices = OVERLAPS.map(([seconds, label]) =>
        h(
          'label',
          { class: 'check' },
          h('input', {
            type: 'radio',
            name: 'overlap',
            value: String(seconds),
            checked: seconds === DEFAULT_OVERLAP,
            autofocus: seconds === DEFAULT_OVERLAP,
          }),
          h('span', {}, label),
        ),
      );
      return h(
        'form',
        {
          class: 'dialog-form',
          onsubmit: (/** @type {SubmitEvent & { currentTarget: HTMLFormElement }} */ event) => {
            event.preventDefault();
            close(Number(new FormData(event.currentTarget).get('overlap')));
          },
        },
        h('h2', { class: 'dialog-title' }, 'Rotate the signing secret?'),
        h(
          'div',
          { class: 'dialog-body stack' },
          h(
            'p',
            {},
            'A new secret is made and shown once. Keep the current one signing beside it for a while, so receivers can switch without a failed attempt.',
          ),
          h('fieldset', { class: 'choice-field' }, h('legend', {}, 'Keep the current secret valid for'), choices),
          h(
            'p',
            { class: 'hint' },
            'Meanwhile ',
            h('code', {}, 'webhook-signature'),
            ' carries both signatures and ',
            h('code', {}, 'X-Webhook-Signature'),
            ' keeps the current secret; then only the new one signs.',
          ),
          webhook.secretRotation
            ? note('warn', 'The previous rotation’s overlap is still running: rotating again stops its oldest secret now.')
            : null,
        ),
        h(
          'div',
          { class: 'dialog-actions' },
          button('Cancel', () => close()),
          button('Rotate secret', null, { kind: 'primary', type: 'submit' }),
        ),
      );
    },
    { label: 'Rotate the signing secret' },
  );
}
