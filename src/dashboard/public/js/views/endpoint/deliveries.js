// The endpoint page's deliveries: a live, filtered, paged table. Filters live in the address (so
// back/forward and links keep them), the page's cursors in memory.
import { api, explain, isAbort } from '../../api.js';
import { duration, h, time } from '../../dom.js';
import { button, note, poll, statusBadge } from '../../ui.js';
import { RATE_WINDOW } from '../endpoints.js';
import { retryFailedDialog } from './dialogs.js';
import { deliveries as count, showQueued } from './queued.js';

/** @typedef {import('../../api.js').Delivery} Delivery */

const PAGE_SIZE = 25;
const RESPONSE_TIME_HINT = 'How long the last attempt took: until the receiver answered, or until the error that ended it';
export const REFRESH_MS = 2500;

/**
 * The deliveries section. Nothing is requested until `start`.
 * @param {import('./index.js').EndpointView} view
 * @param {{ write: boolean, query: Record<string, string>, signal: AbortSignal, navigate: (hash: string) => void, showRate: (recent: Delivery[]) => void }} options
 *   `showRate` gets the latest deliveries, whatever the filters, at each refresh.
 */
export function endpointDeliveries(view, { write, query, signal, navigate, showRate }) {
  const typeFilter = h('select', { id: 'filter-event' });
  /** @type {string[]} */
  let catalogueOrder = [];

  /**
   * The types this endpoint's log can hold: those it subscribes to (in the catalogue's order) and
   * webhook.test, the test event. A type chosen before (in the address, or before an edit dropped
   * it) stays.
   */
  function fillTypeFilter() {
    const chosen = typeFilter.options.length ? typeFilter.value : (query.eventType ?? '');
    const values = [
      ...catalogueOrder.filter((type) => view.webhook.events.includes(type)),
      ...view.webhook.events.filter((type) => !catalogueOrder.includes(type)),
      'webhook.test',
    ];
    if (chosen && !values.includes(chosen)) values.push(chosen);
    typeFilter.replaceChildren(
      h('option', { value: '' }, 'All event types'),
      ...values.map((value) => h('option', { value, selected: value === chosen }, value)),
    );
  }

  const statusFilter = h(
    'select',
    { id: 'filter-status' },
    h('option', { value: '' }, 'All statuses'),
    ['pending', 'succeeded', 'failed'].map((value) =>
      h('option', { value, selected: query.status === value }, value[0].toUpperCase() + value.slice(1)),
    ),
  );
  const live = h(
    'span',
    { class: 'live', title: `Refreshes every ${REFRESH_MS / 1000} s` },
    h('span', { class: 'live-dot', 'aria-hidden': 'true' }),
    'Live',
  );
  const retryAll = write ? button('Retry all failed…', () => retryFailed(), { id: 'retry-failed' }) : null;
  const retryResult = h('output', { class: 'test-result', 'aria-live': 'polite' });
  const rows = h('tbody');
  const table = h(
    'table',
    { class: 'table deliveries', 'aria-busy': 'true' },
    h('caption', { class: 'visually-hidden' }, 'Deliveries, newest first'),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', { scope: 'col' }, 'Status'),
        h('th', { scope: 'col' }, 'Event'),
        h('th', { scope: 'col' }, 'Created'),
        h('th', { scope: 'col', class: 'num' }, 'Attempts'),
        h('th', { scope: 'col' }, 'Last result'),
        h('th', { scope: 'col', class: 'num', title: RESPONSE_TIME_HINT }, 'Response time'),
      ),
    ),
    rows,
  );
  const empty = h('p', { class: 'empty-row muted' }, 'Loading deliveries…');
  const listError = h('div');
  const newer = button('← Newer', () => turn(-1), { class: 'btn btn-secondary btn-small' });
  const older = button('Older →', () => turn(1), { class: 'btn btn-secondary btn-small' });
  const pageLabel = h('span', { class: 'muted small' });
  /** @type {(string | null)[]} */
  let cursors = [null];
  let signature = '';

  const element = h(
    'section',
    { class: 'deliveries-section', 'aria-labelledby': 'deliveries-title' },
    h('div', { class: 'section-head' }, h('h2', { id: 'deliveries-title' }, 'Deliveries'), live, retryAll),
    retryResult,
    h(
      'div',
      { class: 'filters' },
      h('div', { class: 'field inline' }, h('label', { for: 'filter-status' }, 'Status'), statusFilter),
      h('div', { class: 'field inline' }, h('label', { for: 'filter-event' }, 'Event type'), typeFilter),
    ),
    listError,
    h('div', { class: 'card table-card' }, table, empty, h('div', { class: 'pager' }, newer, pageLabel, older)),
  );

  function filters() {
    return { status: statusFilter.value || undefined, eventType: typeFilter.value || undefined };
  }

  function onFilter() {
    const params = new URLSearchParams(/** @type {[string, string][]} */ (Object.entries(filters()).filter(([, value]) => value)));
    history.replaceState(null, '', `#/endpoints/${view.webhook.id}${params.size ? `?${params}` : ''}`);
    cursors = [null];
    signature = '';
    // The answer of the filters before must not land after this one's: it is cancelled, and the
    // rows it showed go until the new ones come.
    inFlight?.abort();
    rows.replaceChildren();
    empty.textContent = 'Loading deliveries…';
    empty.hidden = false;
    table.setAttribute('aria-busy', 'true');
    void view.refreshNow();
  }
  statusFilter.addEventListener('change', onFilter);
  typeFilter.addEventListener('change', onFilter);

  /** @param {number} step 1 for the older page, -1 for the newer. */
  function turn(step) {
    if (step > 0) cursors.push(olderCursor);
    else cursors.pop();
    signature = '';
    void view.refreshNow().then(() => rows.querySelector('a')?.focus());
  }

  /** @type {string | null} */
  let olderCursor = null;
  /** @type {AbortController | undefined} The refresh under way, cancelled when the filters change. */
  let inFlight;
  async function refresh() {
    const unfiltered = !filters().status && !filters().eventType;
    const cursor = cursors.at(-1);
    const before = view.shown;
    const mine = new AbortController();
    inFlight = mine;
    const requests = AbortSignal.any([signal, mine.signal]);
    try {
      // The endpoint too: a 410 answer disables it, and a rotation's overlap ends, while the page is open.
      const [page, recent, fresh] = await Promise.all([
        api.listDeliveries(view.webhook.id, { ...filters(), limit: PAGE_SIZE, cursor }, requests),
        api.listDeliveries(view.webhook.id, { limit: RATE_WINDOW }, requests),
        api.getWebhook(view.webhook.id, requests),
      ]);
      if (mine.signal.aborted) return;
      table.removeAttribute('aria-busy');
      if (view.shown === before && JSON.stringify(fresh) !== view.shownJson) view.show(fresh);
      listError.replaceChildren();
      live.classList.remove('live-paused');
      showRate(recent.data);
      olderCursor = page.nextCursor;
      newer.disabled = cursors.length === 1;
      older.disabled = !page.nextCursor;
      pageLabel.textContent = `Page ${cursors.length}`;
      const next = JSON.stringify(page.data);
      if (next === signature) return;
      signature = next;
      renderRows(page.data);
      empty.textContent = page.data.length
        ? ''
        : unfiltered && cursors.length === 1
          ? 'No deliveries yet. Publish an event this endpoint subscribes to, or send a test event.'
          : 'No deliveries match these filters.';
      empty.hidden = page.data.length > 0;
    } catch (failure) {
      if (isAbort(failure)) return;
      live.classList.add('live-paused');
      table.removeAttribute('aria-busy');
      if (!signature) empty.hidden = true;
      listError.replaceChildren(note('error', explain(failure, 'read deliveries', 'webhooks:read')));
    }
  }

  /** @param {Delivery[]} deliveries */
  function renderRows(deliveries) {
    const focused = document.activeElement?.closest?.('tr')?.dataset.id;
    rows.replaceChildren(
      ...deliveries.map((delivery) =>
        h(
          'tr',
          {
            dataset: { id: delivery.id, status: delivery.status },
            class: 'clickable',
            onclick: (/** @type {MouseEvent & { target: Element }} */ event) => {
              if (!event.target.closest('a, button')) navigate(`#/deliveries/${delivery.id}`);
            },
          },
          h('td', { 'data-label': 'Status' }, deliveryBadge(delivery)),
          h(
            'td',
            { 'data-label': 'Event' },
            h('a', { href: `#/deliveries/${delivery.id}`, class: 'row-link' }, delivery.eventType),
            h('div', { class: 'mono small muted' }, delivery.eventId),
          ),
          h('td', { 'data-label': 'Created' }, time(delivery.createdAt)),
          h(
            'td',
            { 'data-label': 'Attempts', class: 'num' },
            // The column's heading names the number on a wide screen; the stacked phone layout hides it.
            h('span', { class: 'cell-count' }, String(delivery.attemptCount)),
            h('span', { class: 'cell-unit' }, delivery.attemptCount === 1 ? ' attempt' : ' attempts'),
          ),
          h('td', { 'data-label': 'Last result' }, lastResult(delivery)),
          h(
            'td',
            { 'data-label': 'Response time', class: 'num', title: RESPONSE_TIME_HINT },
            delivery.lastDurationMs === null ? h('span', { class: 'muted' }, '—') : duration(delivery.lastDurationMs),
          ),
        ),
      ),
    );
    if (focused) /** @type {HTMLElement | null} */ (rows.querySelector(`tr[data-id="${CSS.escape(focused)}"] a`))?.focus();
  }

  async function retryFailed() {
    const answer = await retryFailedDialog(view.webhook);
    if (answer === undefined) return;
    showQueued(retryResult, answer.batch, {
      more: (since) => api.retryFailed(view.webhook.id, since),
      text: (queued, done) =>
        !done
          ? `${count(queued, 'failed')} queued for a new attempt so far; more remain.`
          : queued === 0
            ? 'No failed deliveries to retry.'
            : `${count(queued, 'failed')} queued for a new attempt.`,
      rest: 'Continue retries the rest, from the failed deliveries of events published at',
      action: 'retry deliveries',
      onQueued: () => void view.refreshNow(),
    });
  }

  /**
   * Lists the event types in the filter as the catalogue orders them.
   * @param {string[]} order The catalogue's types.
   */
  function orderTypes(order) {
    catalogueOrder = order;
    fillTypeFilter();
  }

  /** Shows the first page, then refreshes it every REFRESH_MS while the view lives. */
  async function start() {
    view.refreshNow = poll(signal, REFRESH_MS, refresh);
    await refresh();
  }

  return { element, show: fillTypeFilter, orderTypes, start };
}

/**
 * A delivery's status. One that waited past MAX_DELIVERY_AGE ended failed without a last attempt
 * (its `lastError` starts `expired:`): it reads Expired, and is failed for filters and Retry.
 * @param {Delivery} delivery
 */
export function deliveryBadge(delivery) {
  if (delivery.status !== 'failed' || !delivery.lastError?.startsWith('expired:')) return statusBadge(delivery.status);
  return h(
    'span',
    {
      class: 'badge badge-failed badge-expired',
      dataset: { status: 'failed', expired: 'true' },
      title: 'It waited longer than a delivery may wait here without succeeding, so it ended failed. Retry sends it again.',
    },
    'Expired',
  );
}

/**
 * How the latest attempt of a delivery ended, and when the next one is due.
 * @param {Delivery} delivery
 */
export function lastResult(delivery) {
  /** @type {HTMLElement[]} */
  const parts = [];
  if (delivery.lastStatusCode) parts.push(h('span', { class: 'code' }, `HTTP ${delivery.lastStatusCode}`));
  if (delivery.lastError && delivery.lastError !== `HTTP ${delivery.lastStatusCode}`)
    parts.push(h('span', { class: 'error-text' }, delivery.lastError));
  if (delivery.status === 'pending') {
    parts.push(
      h('span', { class: 'muted small' }, delivery.nextAttemptAt ? ['next attempt ', time(delivery.nextAttemptAt)] : 'attempting now…'),
    );
  }
  return parts.length ? h('div', { class: 'last-result' }, parts) : h('span', { class: 'muted' }, '—');
}
