// One endpoint's page, composed of its header, its actions and its deliveries.
import { api, explain, session } from '../../api.js';
import { breadcrumbs, note, title } from '../../ui.js';
import { endpointActions } from './actions.js';
import { endpointDeliveries } from './deliveries.js';
import { endpointHeader } from './header.js';

/** @typedef {import('../../api.js').Webhook} Webhook */

/**
 * What the parts of the page share.
 * @typedef {object} EndpointView
 * @property {Webhook} webhook The endpoint as last shown.
 * @property {(next: Webhook) => void} show Shows a newer state of the endpoint in every part.
 * @property {number} shown Counts the answers shown; a poll's answer that an action's answer overtook is dropped.
 * @property {string} shownJson The answer shown last, as JSON.
 * @property {string | null} missedSince Set when this page re-enables the endpoint: what it missed starts when it was disabled.
 * @property {() => Promise<void>} refreshNow Refreshes the deliveries (and the endpoint) now, once they are on screen.
 */

/**
 * One endpoint: what it is, what can be done to it, and its deliveries (live).
 * @type {import('../../app.js').View}
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

  /** @type {EndpointView} */
  const view = { webhook, show, shown: 0, shownJson: '', missedSince: null, refreshNow: async () => {} };
  const actions = endpointActions(view, { write, navigate });
  const header = endpointHeader(webhook, { actions: actions.elements, onReplayMissed: () => actions.replay(view.missedSince) });
  const deliveries = endpointDeliveries(view, { write, query, signal, navigate, showRate: header.showRate });

  /** @param {Webhook} next */
  function show(next) {
    view.webhook = next;
    view.shown += 1;
    view.shownJson = JSON.stringify(next);
    if (!next.isActive) view.missedSince = null;
    header.show(next, view.missedSince);
    actions.show(next);
    deliveries.show();
  }

  root.append(breadcrumbs(['Endpoints', '#/'], [webhook.name]), header.element);
  show(webhook);

  deliveries.orderTypes((await api.eventTypes().catch(() => [])).map((type) => type.type));
  root.append(deliveries.element);
  await deliveries.start();
}
