import { api, explain, readOnlyText, session } from '../api.js';
import { h, plural, time } from '../dom.js';
import { activeBadge, button, chips, DISABLED_REASONS, failingBadge, note, secretDialog, spinner, title, toast } from '../ui.js';
import { endpointDialog } from './endpoint-form.js';

export const RATE_WINDOW = 50;

/**
 * Success rate of the latest finished deliveries (pending ones have no outcome yet).
 * @param {import('../api.js').Delivery[]} deliveries
 */
export function successRate(deliveries) {
  const finished = deliveries.filter((delivery) => delivery.status !== 'pending');
  const succeeded = finished.filter((delivery) => delivery.status === 'succeeded').length;
  return { finished: finished.length, succeeded, rate: finished.length ? succeeded / finished.length : null };
}

/**
 * Whether an active endpoint is failing: of its latest deliveries made since it was last changed
 * (a change, such as a new URL or a re-activation, is usually the fix), the newest that ended
 * failed and fewer than half succeeded. Active alone would say nothing is wrong.
 * @param {import('../api.js').Webhook} webhook
 * @param {import('../api.js').Delivery[]} deliveries
 * @returns {{ failed: number, finished: number } | null} The counts when failing, null when not.
 */
export function failingHealth(webhook, deliveries) {
  if (!webhook.isActive) return null;
  const since = Date.parse(webhook.updatedAt);
  const finished = deliveries
    .filter((delivery) => delivery.status !== 'pending' && Date.parse(delivery.createdAt) >= since)
    .sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt));
  if (finished.length === 0 || finished[0].status !== 'failed') return null;
  const failed = finished.filter((delivery) => delivery.status === 'failed').length;
  return failed * 2 > finished.length ? { failed, finished: finished.length } : null;
}

/** @param {ReturnType<typeof successRate>} stats */
export function rateView({ finished, succeeded, rate }) {
  if (rate === null) return h('span', { class: 'muted small' }, 'No deliveries yet');
  const percent = Math.round(rate * 1000) / 10;
  const fill = h('span', { class: 'rate-fill' });
  fill.style.width = `${percent}%`;
  const level = rate >= 0.95 ? 'good' : rate >= 0.8 ? 'fair' : 'poor';
  return h(
    'span',
    { class: ['rate', `rate-${level}`] },
    h('strong', {}, `${percent}%`),
    h('span', { class: 'rate-bar', 'aria-hidden': 'true' }, fill),
    h(
      'span',
      { class: 'muted small', title: `${succeeded} of the latest ${finished} finished deliveries succeeded` },
      `${succeeded} of ${finished}`,
    ),
  );
}

/**
 * Runs `tasks` a few at a time: one request per endpoint must not flood the server.
 * @param {(() => Promise<void>)[]} tasks
 * @param {number} [width]
 */
async function limited(tasks, width = 6) {
  const queue = [...tasks];
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (queue.length) await /** @type {() => Promise<void>} */ (queue.shift())();
    }),
  );
}

/** @type {import('../app.js').View} */
export async function endpointsView(root, { signal, navigate }) {
  const { read, write, portal } = session.caps;
  // A portal session limited to some endpoints may not add one.
  const canCreate = write && !portal?.webhookIds;
  const create = canCreate
    ? button(
        'New endpoint',
        async () => {
          const created = await endpointDialog().catch((failure) =>
            toast(explain(failure, 'load the event catalogue', 'webhooks:read'), 'error'),
          );
          if (!created) return;
          await secretDialog({ heading: 'Endpoint created', webhook: created });
          navigate(`#/endpoints/${created.id}`);
        },
        { kind: 'primary', id: 'new-endpoint' },
      )
    : null;
  root.append(title('Endpoints', create));
  if (!write) root.append(note('info', readOnlyText('create, change or delete endpoints, send test events, or retry deliveries')));
  if (!read) {
    root.append(note('warn', 'This key cannot list endpoints (needs webhooks:read).'));
    return;
  }

  const body = h('tbody');
  const more = button('Load more', () => load(cursor), { class: 'btn btn-secondary' });
  const footer = h('div', { class: 'list-footer' });
  const list = h(
    'div',
    { class: 'card table-card' },
    h(
      'table',
      { class: 'table endpoints' },
      h('caption', { class: 'visually-hidden' }, 'Webhook endpoints'),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { scope: 'col' }, 'Endpoint'),
          h('th', { scope: 'col' }, 'Events'),
          h('th', { scope: 'col' }, 'State'),
          h('th', { scope: 'col', title: `Of the latest ${RATE_WINDOW} deliveries that have ended` }, 'Success rate'),
          h('th', { scope: 'col' }, 'Created'),
        ),
      ),
      body,
    ),
    footer,
  );
  const status = h('div', { 'aria-live': 'polite' }, spinner('Loading endpoints'));
  root.append(status, list);
  list.hidden = true;
  /** @type {string | null} */
  let cursor = null;

  /** @param {string | null} after */
  async function load(after) {
    try {
      const page = await api.listWebhooks({ limit: 50, cursor: after }, signal);
      status.replaceChildren();
      cursor = page.nextCursor;
      if (!after && page.data.length === 0) {
        status.append(
          h(
            'div',
            { class: 'empty card' },
            h('h2', {}, 'No endpoints yet'),
            h(
              'p',
              { class: 'muted' },
              write
                ? 'Create one to start receiving signed webhooks for the events you choose.'
                : 'Nothing to show: this store has no webhook endpoints.',
            ),
          ),
        );
        return;
      }
      list.hidden = false;
      const rows = page.data.map((webhook) => {
        const rate = h('td', { 'data-label': 'Success rate' }, h('span', { class: 'muted small' }, '…'));
        const badge = activeBadge(webhook.isActive);
        const row = h(
          'tr',
          {
            dataset: { id: webhook.id },
            class: 'clickable',
            onclick: (/** @type {MouseEvent & { target: Element }} */ event) => {
              if (!event.target.closest('a, button')) navigate(`#/endpoints/${webhook.id}`);
            },
          },
          h(
            'td',
            { 'data-label': 'Endpoint' },
            h('a', { href: `#/endpoints/${webhook.id}`, class: 'row-link' }, webhook.name),
            h('div', { class: 'mono small muted url' }, webhook.url),
          ),
          h('td', { 'data-label': 'Events' }, chips(webhook.events, { max: 3 })),
          h(
            'td',
            { 'data-label': 'State' },
            badge,
            !webhook.isActive && webhook.disabledReason && DISABLED_REASONS[webhook.disabledReason]
              ? h(
                  'div',
                  { class: 'muted small disabled-reason' },
                  DISABLED_REASONS[webhook.disabledReason].short,
                  webhook.disabledAt ? [', since ', time(webhook.disabledAt)] : null,
                )
              : null,
          ),
          rate,
          h('td', { 'data-label': 'Created' }, time(webhook.createdAt)),
        );
        return { webhook, row, rate, badge };
      });
      body.append(...rows.map((entry) => entry.row));
      footer.replaceChildren(cursor ? more : h('span', { class: 'muted small' }, plural(body.children.length, 'endpoint')));
      await limited(
        rows.map(({ webhook, rate, badge }) => async () => {
          const recent = await api.listDeliveries(webhook.id, { limit: RATE_WINDOW }, signal).catch(() => null);
          rate.replaceChildren(recent ? rateView(successRate(recent.data)) : h('span', { class: 'muted small' }, 'unavailable'));
          const failing = recent && failingHealth(webhook, recent.data);
          if (failing) badge.replaceWith(failingBadge(failing));
        }),
      );
    } catch (failure) {
      status.replaceChildren(note('error', explain(failure, 'list endpoints', 'webhooks:read')));
    }
  }
  await load(null);
}
