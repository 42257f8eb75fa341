import { api, explain, isAbort, session } from '../api.js';
import { duration, h, plural, time } from '../dom.js';
import {
  activeBadge,
  breadcrumbs,
  busy,
  button,
  chips,
  confirmDialog,
  DISABLED_REASONS,
  note,
  openDialog,
  poll,
  secretDialog,
  spinner,
  statusBadge,
  title,
  toast,
} from '../ui.js';
import { endpointDialog, sortedHeaders } from './endpoint-form.js';
import { RATE_WINDOW, rateView, successRate } from './endpoints.js';
import { scheduleText } from '../schedule.js';

/** @typedef {import('../api.js').Webhook} Webhook */
/** @typedef {import('../api.js').Delivery} Delivery */

const PAGE_SIZE = 25;
export const REFRESH_MS = 2500;

/**
 * One endpoint: what it is, what can be done to it, and its deliveries (live).
 * @type {import('../app.js').View}
 */
export async function endpointView(root, { params, query, signal, navigate }) {
  const { write } = session.caps;
  /** @type {Webhook} */
  let webhook;
  try {
    webhook = await api.getWebhook(params.id, signal);
  } catch (failure) {
    root.append(
      breadcrumbs(['Endpoints', '#/'], [params.id]),
      title('Endpoint'),
      note('error', explain(failure, 'read endpoints', 'webhooks:read')),
    );
    return;
  }

  // The header: kept as stable elements and updated in place, so focus stays where it was.
  const heading = title(webhook.name);
  const state = h('span');
  const url = h('p', { class: 'mono url-line' });
  const events = h('div');
  const disabled = h('div');
  const rotation = h('div');
  const headers = h('dd');
  const schedule = h('dd');
  const flow = h('dd');
  const rate = h('dd', {}, h('span', { class: 'muted small' }, '…'));
  const created = h('dd');
  const updated = h('dd');
  const toggle = button('', () => toggleActive(), { id: 'toggle-active' });
  const replayButton = button('Replay…', () => replay(), { id: 'replay' });
  const testResult = h('output', { class: 'test-result', 'aria-live': 'polite' });
  const replayResult = h('output', { class: 'test-result', 'aria-live': 'polite' });
  // Set when this page re-enables the endpoint: what it missed starts when it was disabled.
  /** @type {string | null} */
  let missedSince = null;
  const missed = h('div');
  const typeFilter = h('select', { id: 'filter-event' });
  /** @type {string[]} */
  let catalogueOrder = [];
  // Counts the answers shown; a poll's answer that an action's answer overtook is dropped.
  let shown = 0;
  let shownJson = '';

  /** @param {Webhook} next */
  function show(next) {
    webhook = next;
    shown += 1;
    shownJson = JSON.stringify(next);
    /** @type {HTMLHeadingElement} */ (heading.querySelector('h1')).textContent = webhook.name;
    state.replaceChildren(activeBadge(webhook.isActive));
    url.textContent = webhook.url;
    events.replaceChildren(chips(webhook.events));
    const reason = !webhook.isActive && webhook.disabledReason && DISABLED_REASONS[webhook.disabledReason];
    disabled.replaceChildren(
      reason
        ? note(
            'warn',
            h('strong', {}, reason.text),
            webhook.disabledAt ? [' since ', time(webhook.disabledAt)] : null,
            '. It gets no deliveries until it is activated again; then Replay sends it the events it missed.',
          )
        : '',
    );
    disabled.hidden = !reason;
    if (!webhook.isActive) missedSince = null;
    const offerReplay = Boolean(missedSince && session.caps.write);
    missed.replaceChildren(
      offerReplay
        ? note(
            'info',
            'Events published while it was disabled (since ',
            time(missedSince),
            ') were not delivered to it. ',
            button('Replay them…', () => replay(missedSince), { id: 'replay-missed', class: 'btn btn-secondary btn-small' }),
          )
        : '',
    );
    missed.hidden = !offerReplay;
    replayButton.disabled = !webhook.isActive;
    replayButton.title = webhook.isActive ? 'Send it the events of a time window it has no delivery of' : 'Activate it first';
    const until = webhook.secretRotation?.oldSecretExpiresAt;
    rotation.replaceChildren(
      until
        ? note(
            'info',
            h('strong', {}, 'Previous secret valid until ', time(until)),
            '. Deliveries carry a signature with each secret until then (',
            h('code', {}, 'X-Webhook-Signature'),
            ' keeps the previous one).',
          )
        : '',
    );
    rotation.hidden = !until;
    headers.replaceChildren(headerList(webhook.headers));
    const delays = scheduleText(webhook.retrySchedule);
    schedule.replaceChildren(
      ...(delays
        ? [
            h('span', { class: 'mono' }, delays),
            h('span', { class: 'muted small' }, ` (${plural(/** @type {number[]} */ (webhook.retrySchedule).length, 'attempt')})`),
          ]
        : [h('span', {}, 'Deployment default', h('span', { class: 'muted small' }, ' (RETRY_SCHEDULE_MS)'))]),
    );
    flow.replaceChildren(
      webhook.rateLimitPerSecond ? `At most ${plural(webhook.rateLimitPerSecond, 'attempt')} a second` : 'No rate limit',
      webhook.ordered ? ' · ordered, one at a time' : '',
    );
    created.replaceChildren(time(webhook.createdAt));
    updated.replaceChildren(time(webhook.updatedAt));
    toggle.textContent = webhook.isActive ? 'Deactivate' : 'Activate';
    fillTypeFilter();
  }

  /**
   * The types this endpoint's log can hold: those it subscribes to (in the catalogue's order) and
   * test deliveries. A type chosen before (in the address, or before an edit dropped it) stays.
   */
  function fillTypeFilter() {
    const chosen = typeFilter.options.length ? typeFilter.value : (query.eventType ?? '');
    const values = [
      ...catalogueOrder.filter((type) => webhook.events.includes(type)),
      ...webhook.events.filter((type) => !catalogueOrder.includes(type)),
      'webhook.test',
    ];
    if (chosen && !values.includes(chosen)) values.push(chosen);
    typeFilter.replaceChildren(
      h('option', { value: '' }, 'All event types'),
      ...values.map((value) => h('option', { value, selected: value === chosen }, value)),
    );
  }

  /** @param {HTMLButtonElement} btn */
  async function sendTest(btn) {
    testResult.replaceChildren(spinner('Sending a test delivery'), ' Sending a webhook.test delivery…');
    try {
      const result = await busy(btn, () => api.testWebhook(webhook.id));
      testResult.replaceChildren(
        h(
          'div',
          { class: ['test-card', result.success ? 'test-ok' : 'test-bad'] },
          h('strong', {}, result.success ? 'Test delivered' : 'Test failed'),
          h('span', {}, result.statusCode ? `HTTP ${result.statusCode}` : 'no HTTP response'),
          h('span', {}, duration(result.durationMs)),
          result.error ? h('span', { class: 'test-error' }, result.error) : null,
          h('a', { href: `#/deliveries/${result.deliveryId}` }, 'View delivery'),
        ),
      );
      refreshNow();
    } catch (failure) {
      testResult.replaceChildren(note('error', explain(failure, 'send test deliveries', 'webhooks:write')));
    }
  }

  async function edit() {
    try {
      const saved = await endpointDialog({ webhook });
      if (saved) {
        show(saved);
        toast('Endpoint saved.');
      }
    } catch (failure) {
      toast(explain(failure, 'load the event catalogue', 'webhooks:read'), 'error');
    }
  }

  async function toggleActive() {
    const activate = !webhook.isActive;
    if (
      !activate &&
      !(await confirmDialog({
        heading: `Deactivate ${webhook.name}?`,
        body: h('p', {}, 'It gets no new deliveries, and its pending ones end failed. You can retry them once it is active again.'),
        confirm: 'Deactivate',
      }))
    )
      return;
    const disabledAt = webhook.disabledAt;
    try {
      const updated = await busy(toggle, () => api.updateWebhook(webhook.id, { isActive: activate }));
      missedSince = activate ? disabledAt : null;
      show(updated);
      toast(activate ? 'Endpoint activated.' : 'Endpoint deactivated.');
      refreshNow();
    } catch (failure) {
      toast(explain(failure, 'change endpoints', 'webhooks:write'), 'error');
    }
  }

  /**
   * Asks for a window and queues what the endpoint has no delivery of in it (POST /webhooks/:id/replay).
   * @param {string | null} [since] Where the window starts, by default.
   */
  async function replay(since) {
    const queued = await replayDialog(webhook, since);
    if (queued === undefined) return;
    missedSince = null;
    show(webhook);
    const text =
      queued === 0
        ? 'Replay queued 0 deliveries: it has a delivery of every event of that window.'
        : `Replay queued ${plural(queued, 'delivery', 'deliveries')}.`;
    replayResult.replaceChildren(note(queued === 0 ? 'info' : 'ok', text));
    toast(text);
    void refreshNow();
  }

  /** @param {HTMLButtonElement} btn */
  async function rotate(btn) {
    const overlap = await rotateDialog(webhook);
    if (overlap === undefined) return;
    try {
      const rotated = await busy(btn, () => api.rotateSecret(webhook.id, overlap));
      show(rotated);
      await secretDialog({ heading: 'New signing secret', webhook: rotated });
    } catch (failure) {
      toast(explain(failure, 'rotate secrets', 'webhooks:write'), 'error');
    }
  }

  async function remove() {
    if (
      !(await confirmDialog({
        heading: `Delete ${webhook.name}?`,
        body: h('p', {}, 'Nothing more is delivered to it, pending retries included. This cannot be undone.'),
        confirm: 'Delete endpoint',
        danger: true,
      }))
    )
      return;
    try {
      await api.deleteWebhook(webhook.id);
      toast(`Deleted ${webhook.name}.`);
      navigate('#/');
    } catch (failure) {
      toast(explain(failure, 'delete endpoints', 'webhooks:write'), 'error');
    }
  }

  const actions = write
    ? h(
        'div',
        { class: 'toolbar', role: 'group', 'aria-label': 'Endpoint actions' },
        button('Send test', (e) => sendTest(e.currentTarget), { kind: 'primary', id: 'send-test' }),
        button('Edit', () => edit()),
        toggle,
        replayButton,
        button('Rotate secret', (e) => rotate(e.currentTarget)),
        button('Delete', () => remove(), { kind: 'danger-quiet' }),
      )
    : note('info', 'This key can only read: it cannot edit, test or delete this endpoint, or retry its deliveries (needs webhooks:write).');

  root.append(
    breadcrumbs(['Endpoints', '#/'], [webhook.name]),
    h(
      'header',
      { class: 'card endpoint-head' },
      h('div', { class: 'endpoint-title' }, heading, state),
      url,
      events,
      disabled,
      missed,
      rotation,
      h(
        'dl',
        { class: 'facts' },
        h('div', {}, h('dt', {}, `Success rate (last ${RATE_WINDOW})`), rate),
        h('div', {}, h('dt', {}, 'Created'), created),
        h('div', {}, h('dt', {}, 'Updated'), updated),
        h('div', {}, h('dt', {}, 'Id'), h('dd', { class: 'mono small' }, webhook.id)),
      ),
      h(
        'dl',
        { class: 'facts settings', 'aria-label': 'Delivery settings' },
        h('div', {}, h('dt', {}, 'Custom headers'), headers),
        h('div', {}, h('dt', { title: 'Delay before each attempt of a cycle' }, 'Retry schedule'), schedule),
        h('div', {}, h('dt', { title: 'Rate limit and order of deliveries' }, 'Delivery pace'), flow),
      ),
      actions,
      testResult,
      replayResult,
    ),
  );
  show(webhook);

  // Deliveries: filters live in the address (so back/forward and links keep them), the page's
  // cursors in memory.
  catalogueOrder = (await api.eventTypes().catch(() => [])).map((type) => type.type);
  fillTypeFilter();
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
  const rows = h('tbody');
  const table = h(
    'table',
    { class: 'table deliveries' },
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
      ),
    ),
    rows,
  );
  const empty = h('p', { class: 'empty-row muted' });
  const listError = h('div');
  const newer = button('← Newer', () => turn(-1), { class: 'btn btn-secondary btn-small' });
  const older = button('Older →', () => turn(1), { class: 'btn btn-secondary btn-small' });
  const pageLabel = h('span', { class: 'muted small' });
  /** @type {(string | null)[]} */
  let cursors = [null];
  let signature = '';

  root.append(
    h(
      'section',
      { class: 'deliveries-section', 'aria-labelledby': 'deliveries-title' },
      h('div', { class: 'section-head' }, h('h2', { id: 'deliveries-title' }, 'Deliveries'), live, retryAll),
      h(
        'div',
        { class: 'filters' },
        h('div', { class: 'field inline' }, h('label', { for: 'filter-status' }, 'Status'), statusFilter),
        h('div', { class: 'field inline' }, h('label', { for: 'filter-event' }, 'Event type'), typeFilter),
      ),
      listError,
      h('div', { class: 'card table-card' }, table, empty, h('div', { class: 'pager' }, newer, pageLabel, older)),
    ),
  );

  function filters() {
    return { status: statusFilter.value || undefined, eventType: typeFilter.value || undefined };
  }

  function onFilter() {
    const params = new URLSearchParams(/** @type {[string, string][]} */ (Object.entries(filters()).filter(([, value]) => value)));
    history.replaceState(null, '', `#/endpoints/${webhook.id}${params.size ? `?${params}` : ''}`);
    cursors = [null];
    signature = '';
    void refreshNow();
  }
  statusFilter.addEventListener('change', onFilter);
  typeFilter.addEventListener('change', onFilter);

  /** @param {number} step 1 for the older page, -1 for the newer. */
  function turn(step) {
    if (step > 0) cursors.push(olderCursor);
    else cursors.pop();
    signature = '';
    void refreshNow().then(() => rows.querySelector('a')?.focus());
  }

  /** @type {string | null} */
  let olderCursor = null;
  async function refresh() {
    const unfiltered = !filters().status && !filters().eventType;
    const cursor = cursors.at(-1);
    const before = shown;
    try {
      // The endpoint too: a 410 answer disables it, and a rotation's overlap ends, while the page is open.
      const [page, recent, fresh] = await Promise.all([
        api.listDeliveries(webhook.id, { ...filters(), limit: PAGE_SIZE, cursor }, signal),
        api.listDeliveries(webhook.id, { limit: RATE_WINDOW }, signal),
        api.getWebhook(webhook.id, signal),
      ]);
      if (shown === before && JSON.stringify(fresh) !== shownJson) show(fresh);
      listError.replaceChildren();
      live.classList.remove('live-paused');
      rate.replaceChildren(rateView(successRate(recent.data)));
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
          ? 'No deliveries yet. Publish an event this endpoint subscribes to, or send a test.'
          : 'No deliveries match these filters.';
      empty.hidden = page.data.length > 0;
    } catch (failure) {
      if (isAbort(failure)) return;
      live.classList.add('live-paused');
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
          h('td', { 'data-label': 'Status' }, statusBadge(delivery.status)),
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
        ),
      ),
    );
    if (focused) /** @type {HTMLElement | null} */ (rows.querySelector(`tr[data-id="${CSS.escape(focused)}"] a`))?.focus();
  }

  async function retryFailed() {
    const queued = await openDialog(
      (/** @type {(queued?: number) => void} */ close) => {
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
                const result = await busy(submit, () =>
                  api.retryFailed(webhook.id, since.value ? new Date(since.value).toISOString() : undefined),
                );
                close(result.queued);
              } catch (failure) {
                error.textContent = explain(failure, 'retry deliveries', 'webhooks:write');
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
              h('label', { for: 'retry-since' }, 'Only those created since (optional)'),
              since,
              h('p', { class: 'hint', id: 'retry-since-help' }, 'Leave empty to retry all of them. Your local time.'),
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
    if (queued === undefined) return;
    toast(
      queued === 0
        ? 'No failed deliveries to retry.'
        : `${plural(queued, 'failed delivery', 'failed deliveries')} queued for a new attempt.`,
    );
    void refreshNow();
  }

  const refreshNow = poll(signal, REFRESH_MS, refresh);
  await refresh();
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
 * Asks for the window of a replay and sends it; resolves with the number queued, or undefined when cancelled.
 * @param {Webhook} webhook
 * @param {string | null} [since]
 */
function replayDialog(webhook, since) {
  return openDialog(
    (/** @type {(queued?: number) => void} */ close) => {
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
              const result = await busy(submit, () => api.replay(webhook.id, window));
              close(result.queued);
            } catch (failure) {
              error.textContent =
                failure instanceof RangeError ? 'Choose a valid date and time.' : explain(failure, 'replay events', 'webhooks:write');
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
            'Your local time; leave Until empty for now. Events older than the retention period (RETENTION_DAYS) are no longer kept and cannot be replayed.',
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
function rotateDialog(webhook) {
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
            'A new secret is made and shown once. Keep the current one signing beside it for a while, so receivers can switch without a failed delivery.',
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

const MASK = '••••••••';

/**
 * The endpoint's extra headers, each value hidden until asked for: they often carry credentials.
 * @param {Record<string, string>} headers
 */
function headerList(headers) {
  const entries = sortedHeaders(headers);
  if (entries.length === 0) return h('span', { class: 'muted' }, 'None');
  return h(
    'ul',
    { class: 'header-list' },
    entries.map(([name, value]) => {
      const shown = h('span', { class: 'mono header-value' });
      const toggle = button('', () => reveal(toggle.textContent === 'Show'), { kind: 'quiet', class: 'btn btn-quiet btn-small' });
      /** @param {boolean} on */
      function reveal(on) {
        shown.replaceChildren(
          ...(on ? [value] : [h('span', { 'aria-hidden': 'true' }, MASK), h('span', { class: 'visually-hidden' }, 'value hidden')]),
        );
        toggle.textContent = on ? 'Hide' : 'Show';
        toggle.setAttribute('aria-label', `${on ? 'Hide' : 'Show'} the value of ${name}`);
      }
      reveal(false);
      return h('li', {}, h('code', { class: 'header-name' }, name), shown, toggle);
    }),
  );
}

/** @param {Delivery} delivery */
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
