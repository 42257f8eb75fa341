import { api, ApiError, explain, readOnlyText, session } from '../api.js';
import { duration, fullTime, h, time } from '../dom.js';
import { breadcrumbs, busy, button, confirmDialog, jsonBlock, note, poll, title, toast } from '../ui.js';
import { deliveryBadge, lastResult } from './endpoint/deliveries.js';

const REFRESH_MS = 2000;

/**
 * One delivery: its envelope, every attempt, and Retry. Refreshes while it is on screen.
 * @type {import('../app.js').View}
 */
export async function deliveryView(root, { params, signal }) {
  const { write } = session.caps;
  /** @type {import('../api.js').DeliveryDetail} */
  let delivery;
  try {
    delivery = await api.getDelivery(params.id, signal);
  } catch (failure) {
    root.append(
      breadcrumbs(['Endpoints', '#/'], [params.id]),
      title('Delivery'),
      note('error', explain(failure, 'read deliveries', 'webhooks:read')),
    );
    return;
  }
  const webhook = await api.getWebhook(delivery.webhookId, signal).catch(() => null);

  const status = h('span');
  const facts = h('dl', { class: 'facts' });
  const attempts = h('ol', { class: 'attempts', 'aria-label': 'Attempts' });
  const attemptsHeading = h('h2', { id: 'attempts-title' });
  const retryMessage = h('div', { 'aria-live': 'polite' });
  const retry = write ? button('Retry delivery', () => retryNow(), { kind: 'primary', id: 'retry' }) : null;
  const pendingHint = h('span', { class: 'muted small pending-hint' });
  let attemptsSignature = '';

  /** @param {import('../api.js').DeliveryDetail} next */
  function show(next) {
    delivery = next;
    status.replaceChildren(deliveryBadge(delivery));
    facts.replaceChildren(
      fact('Event', h('span', { class: 'mono' }, delivery.eventId)),
      fact('Delivery', h('span', { class: 'mono' }, delivery.id)),
      fact('Created', time(delivery.createdAt)),
      fact('Updated', time(delivery.updatedAt)),
      fact('Attempts', String(delivery.attemptCount)),
      fact('Last result', lastResult(delivery)),
    );
    if (retry) retry.hidden = delivery.status === 'pending';
    pendingHint.textContent = delivery.status === 'pending' ? 'Being delivered: Retry is offered once it has succeeded or failed.' : '';
    const signature = JSON.stringify(delivery.attempts);
    if (signature !== attemptsSignature) {
      attemptsSignature = signature;
      // A body the reader opened or closed stays so when the list is redrawn.
      const open = new Map([...attempts.querySelectorAll('details')].map((details) => [details.dataset.number, details.open]));
      attemptsHeading.textContent = `Attempts (${delivery.attempts.length})`;
      attempts.replaceChildren(...delivery.attempts.map((attempt) => attemptItem(attempt, open)));
      if (!delivery.attempts.length) attempts.append(h('li', { class: 'muted' }, 'No attempt yet.'));
    }
  }

  async function retryNow() {
    retryMessage.replaceChildren();
    if (delivery.status === 'succeeded' && !(await confirmResend())) return;
    try {
      await busy(/** @type {HTMLButtonElement} */ (retry), () => api.retryDelivery(delivery.id));
      toast('Retry started: a new cycle of attempts, same event id and body.');
      await refreshNow();
    } catch (failure) {
      retryMessage.replaceChildren(
        note(
          'error',
          failure instanceof ApiError && failure.status === 409
            ? `It cannot be retried right now: it is still pending, so Hookline is already attempting it. Retry is possible once it has succeeded or failed. (${failure.message})`
            : explain(failure, 'retry deliveries', 'webhooks:write'),
        ),
      );
      await refreshNow();
    }
  }

  /** @type {[string, string]} */
  const endpointCrumb = webhook ? [webhook.name, `#/endpoints/${webhook.id}`] : [delivery.webhookId, `#/endpoints/${delivery.webhookId}`];
  root.append(
    breadcrumbs(['Endpoints', '#/'], endpointCrumb, ['Delivery']),
    h(
      'header',
      { class: 'card endpoint-head' },
      h('div', { class: 'endpoint-title' }, title(delivery.eventType), status),
      webhook
        ? h(
            'p',
            { class: 'muted' },
            'To ',
            h('a', { href: `#/endpoints/${webhook.id}` }, webhook.name),
            ' · ',
            h('span', { class: 'mono small' }, webhook.url),
          )
        : null,
      facts,
      h('div', { class: 'toolbar' }, retry, pendingHint),
      write ? retryMessage : note('info', readOnlyText('retry deliveries')),
    ),
    h(
      'div',
      { class: 'detail-grid' },
      h('section', { 'aria-labelledby': 'attempts-title' }, attemptsHeading, attempts),
      h(
        'section',
        { 'aria-labelledby': 'envelope-title' },
        h('h2', { id: 'envelope-title' }, 'Envelope'),
        h('p', { class: 'muted small' }, 'The body of every attempt, byte for byte. ', h('code', {}, 'X-Webhook-ID'), ' is the event id.'),
        jsonBlock(delivery.event, 'Envelope JSON'),
      ),
    ),
  );
  show(delivery);

  const refreshNow = poll(signal, REFRESH_MS, async () => show(await api.getDelivery(delivery.id, signal)));
}

/** A delivery that succeeded reached its receiver: sending it again is a duplicate, said before it is sent. */
function confirmResend() {
  return confirmDialog({
    heading: 'Send this delivery again?',
    body: [
      h('p', {}, 'It has already succeeded: the receiver got this event and answered that it took it.'),
      h(
        'p',
        {},
        'Sending it again delivers the same event, with the same event id, a second time. ',
        'A receiver that does not skip an event id it has already handled will act on it twice (for example, create the order twice).',
      ),
    ],
    confirm: 'Send it again',
  });
}

/**
 * @param {string} label
 * @param {import('../dom.js').Child} value
 */
function fact(label, value) {
  return h('div', {}, h('dt', {}, label), h('dd', {}, value));
}

/**
 * One attempt. A retry by hand starts a new cycle whose first attempt is `manual`: it is marked
 * and set apart from the attempts before it, which the schedule made.
 * @param {import('../api.js').Attempt} attempt
 * @param {Map<string | undefined, boolean>} open Whether the reader opened each attempt's body, by number.
 */
function attemptItem(attempt, open) {
  const ok = attempt.statusCode !== null && attempt.statusCode >= 200 && attempt.statusCode < 300 && !attempt.error;
  const manual = attempt.trigger === 'manual';
  return h(
    'li',
    {
      class: ['attempt', ok ? 'attempt-ok' : 'attempt-bad', manual && 'attempt-manual'],
      dataset: { number: String(attempt.number), trigger: attempt.trigger ?? 'scheduled' },
    },
    h(
      'div',
      { class: 'attempt-head' },
      h('span', { class: 'attempt-number' }, `#${attempt.number}`),
      manual
        ? h(
            'span',
            { class: 'badge badge-manual', title: 'Someone retried the delivery: this began a new cycle of attempts' },
            'Manual retry',
          )
        : null,
      h('span', { class: 'code' }, attempt.statusCode ? `HTTP ${attempt.statusCode}` : 'No response'),
      h('span', { class: 'muted' }, duration(attempt.durationMs)),
      h('span', { class: 'muted', title: fullTime(attempt.startedAt) }, time(attempt.startedAt)),
    ),
    attempt.error && attempt.error !== `HTTP ${attempt.statusCode}` ? h('p', { class: 'error-text' }, attempt.error) : null,
    attempt.responseBody
      ? h(
          'details',
          // A failed attempt's answer is usually why it failed: shown at once, the others on demand.
          { dataset: { number: String(attempt.number) }, open: open.get(String(attempt.number)) ?? !ok },
          h(
            'summary',
            {},
            `Response body (${attempt.responseBody.length} characters${attempt.responseBody.length >= 4096 ? ', cut at 4 KiB' : ''})`,
          ),
          h('pre', { class: 'response' }, attempt.responseBody),
        )
      : h('p', { class: 'muted small' }, 'Empty response body.'),
  );
}
