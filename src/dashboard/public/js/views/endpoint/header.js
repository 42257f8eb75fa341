// The endpoint page's header card: what the endpoint is, its state and its delivery settings.
import { session } from '../../api.js';
import { h, plural, time } from '../../dom.js';
import { activeBadge, button, chips, DISABLED_REASONS, failingBadge, note, title } from '../../ui.js';
import { scheduleText } from '../../schedule.js';
import { sortedHeaders } from '../endpoint-form.js';
import { authText, tlsText } from '../auth-field.js';
import { deliveryChart } from './chart.js';
import { failingHealth, RATE_WINDOW, rateView, successRate } from '../endpoints.js';

/** @typedef {import('../../api.js').Webhook} Webhook */

/**
 * The header, kept as stable elements and updated in place by `show`, so focus stays where it was.
 * @param {Webhook} webhook The endpoint as first shown.
 * @param {{ actions: Node[], onReplayMissed: () => void }} options `actions` end the card; `onReplayMissed`
 *   is the button of the note on what the endpoint missed while disabled.
 */
export function endpointHeader(webhook, { actions, onReplayMissed }) {
  const heading = title(webhook.name);
  const state = h('span');
  const url = h('p', { class: 'mono url-line' });
  const events = h('div');
  const disabled = h('div');
  const missed = h('div');
  const rotation = h('div');
  const headers = h('dd');
  const schedule = h('dd');
  const flow = h('dd');
  const filter = h('dd');
  const auth = h('dd');
  const mtls = h('dd');
  const rate = h('dd', {}, h('span', { class: 'muted small' }, '…'));
  const created = h('dd');
  const updated = h('dd');
  const chart = h('div', { class: 'chart-box' });
  let current = webhook;
  /** @type {import('../../api.js').Delivery[]} */
  let latest = [];
  const showState = () => {
    const failing = failingHealth(current, latest);
    state.replaceChildren(failing ? failingBadge(failing) : activeBadge(current.isActive));
  };

  const element = h(
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
      h(
        'div',
        {},
        h('dt', { title: 'How many attempts may start each second, and whether deliveries go one at a time' }, 'Delivery pace'),
        flow,
      ),
      h('div', {}, h('dt', { title: 'How Hookline proves itself to the receiver' }, 'Authentication'), auth),
      h('div', {}, h('dt', { title: 'The client certificate Hookline presents' }, 'Mutual TLS'), mtls),
      h('div', {}, h('dt', { title: 'Only events it matches are sent here' }, 'Content filter'), filter),
    ),
    h(
      'figure',
      { class: 'chart' },
      h('figcaption', {}, `Latest ${RATE_WINDOW} deliveries over time, and their response times`),
      chart,
      h(
        'ul',
        { class: 'chart-legend', 'aria-hidden': 'true' },
        ['succeeded', 'failed', 'pending'].map((status) =>
          h('li', { class: `legend-${status}` }, status[0].toUpperCase() + status.slice(1)),
        ),
        h('li', { class: 'legend-median' }, 'Median response time'),
        h('li', { class: 'legend-p95' }, '95th percentile'),
      ),
    ),
    actions,
  );

  /**
   * @param {Webhook} webhook
   * @param {string | null} missedSince When it was disabled, if this page has re-enabled it since.
   */
  function show(webhook, missedSince) {
    /** @type {HTMLHeadingElement} */ (heading.querySelector('h1')).textContent = webhook.name;
    current = webhook;
    showState();
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
    const offerReplay = Boolean(missedSince && session.caps.write);
    missed.replaceChildren(
      offerReplay
        ? note(
            'info',
            'Events published while it was disabled (since ',
            time(missedSince),
            ') were not delivered to it. ',
            button('Replay them…', () => onReplayMissed(), { id: 'replay-missed', class: 'btn btn-secondary btn-small' }),
          )
        : '',
    );
    missed.hidden = !offerReplay;
    const until = webhook.secretRotation?.oldSecretExpiresAt;
    rotation.replaceChildren(
      until
        ? note(
            'info',
            h('strong', {}, 'Previous secret valid until ', time(until)),
            '. Until then every attempt carries a signature with each secret (',
            h('code', {}, 'X-Webhook-Signature'),
            ' keeps the previous one).',
          )
        : '',
    );
    rotation.hidden = !until;
    headers.replaceChildren(headerList(webhook));
    const delays = scheduleText(webhook.retrySchedule);
    schedule.replaceChildren(
      ...(delays
        ? [
            h('span', { class: 'mono' }, delays),
            h('span', { class: 'muted small' }, ` (${plural(/** @type {number[]} */ (webhook.retrySchedule).length, 'attempt')})`),
          ]
        : [h('span', {}, 'The standard schedule', h('span', { class: 'muted small' }, ' (the same for every endpoint without its own)'))]),
    );
    flow.replaceChildren(
      webhook.rateLimitPerSecond ? `At most ${plural(webhook.rateLimitPerSecond, 'attempt')} a second` : 'No rate limit',
      webhook.ordered ? ' · ordered, one at a time' : '',
    );
    filter.className = webhook.filter ? 'mono small' : '';
    filter.replaceChildren(webhook.filter ?? 'None: every event of its types');
    auth.replaceChildren(authText(webhook.auth));
    mtls.replaceChildren(...[tlsText(webhook.tls)].flat());
    created.replaceChildren(time(webhook.createdAt));
    updated.replaceChildren(time(webhook.updatedAt));
  }

  /**
   * The success rate of its latest deliveries.
   * @param {import('../../api.js').Delivery[]} recent
   */
  function showRate(recent) {
    rate.replaceChildren(rateView(successRate(recent)));
    chart.replaceChildren(deliveryChart(recent));
    latest = recent;
    showState();
  }

  return { element, show, showRate };
}

const MASK = '••••••••';

/**
 * The endpoint's extra headers. A sensitive one's value is never returned, so it reads "set"; the
 * others are hidden until asked for, one at a time (they may still carry something private).
 * @param {Webhook} webhook
 */
function headerList(webhook) {
  const entries = sortedHeaders(webhook.headers);
  if (entries.length === 0) return h('span', { class: 'muted' }, 'None');
  const sensitive = new Set(webhook.sensitiveHeaders ?? []);
  return h(
    'ul',
    { class: 'header-list' },
    entries.map(([name, value]) => {
      if (value === null || sensitive.has(name)) {
        return h(
          'li',
          { dataset: { sensitive: 'true' } },
          h('code', { class: 'header-name' }, name),
          h(
            'span',
            { class: 'header-set', title: 'A credential: stored encrypted and sent with every attempt, never shown' },
            'set',
            h('span', { class: 'muted small' }, ' · never shown'),
          ),
        );
      }
      const shown = h('span', { class: 'mono header-value' });
      const toggle = button('', () => reveal(toggle.textContent === 'Show'), { kind: 'quiet', class: 'btn btn-quiet btn-small' });
      /** @param {boolean} on */
      function reveal(on) {
        shown.replaceChildren(
          ...(on ? [value ?? ''] : [h('span', { 'aria-hidden': 'true' }, MASK), h('span', { class: 'visually-hidden' }, 'value hidden')]),
        );
        toggle.textContent = on ? 'Hide' : 'Show';
        toggle.setAttribute('aria-label', `${on ? 'Hide' : 'Show'} the value of ${name}`);
      }
      reveal(false);
      return h('li', {}, h('code', { class: 'header-name' }, name), shown, toggle);
    }),
  );
}
