// One event, found by its id: what it carried and the delivery of it to each endpoint.
import { api, explain } from '../api.js';
import { h, time } from '../dom.js';
import { breadcrumbs, jsonBlock, note, title } from '../ui.js';
import { deliveryBadge, lastResult } from './endpoint/deliveries.js';

/**
 * @type {import('../app.js').View}
 */
export async function eventView(root, { params, signal, navigate }) {
  /** @type {import('../api.js').EventDetail} */
  let event;
  try {
    event = await api.getEvent(params.id, signal);
  } catch (failure) {
    root.append(
      breadcrumbs(['Endpoints', '#/'], [params.id]),
      title('Event'),
      note('error', explain(failure, 'read events', 'webhooks:read')),
    );
    return;
  }
  // Each endpoint's name, for the table; one that is gone keeps its id.
  const ids = [...new Set(event.deliveries.map((delivery) => delivery.webhookId))];
  const names = new Map(
    await Promise.all(
      ids.map(async (id) => /** @type {[string, string]} */ ([id, (await api.getWebhook(id, signal).catch(() => null))?.name ?? id])),
    ),
  );

  const rows = event.deliveries.map((delivery) =>
    h(
      'tr',
      {
        dataset: { id: delivery.id, status: delivery.status },
        class: 'clickable',
        onclick: (/** @type {MouseEvent & { target: Element }} */ click) => {
          if (!click.target.closest('a, button')) navigate(`#/deliveries/${delivery.id}`);
        },
      },
      h('td', { 'data-label': 'Status' }, deliveryBadge(delivery)),
      h(
        'td',
        { 'data-label': 'Endpoint' },
        h('a', { href: `#/deliveries/${delivery.id}`, class: 'row-link' }, names.get(delivery.webhookId) ?? delivery.webhookId),
        h('div', { class: 'mono small muted' }, delivery.id),
      ),
      h('td', { 'data-label': 'Attempts', class: 'num' }, String(delivery.attemptCount)),
      h('td', { 'data-label': 'Last result' }, lastResult(delivery)),
    ),
  );

  root.append(
    breadcrumbs(['Endpoints', '#/'], ['Event']),
    h(
      'header',
      { class: 'card endpoint-head' },
      title(event.type),
      h(
        'dl',
        { class: 'facts' },
        h('div', {}, h('dt', {}, 'Event'), h('dd', { class: 'mono' }, event.id)),
        h('div', {}, h('dt', {}, 'Published'), h('dd', {}, time(event.timestamp))),
      ),
    ),
    h(
      'section',
      { class: 'deliveries-section', 'aria-labelledby': 'event-deliveries-title' },
      h('div', { class: 'section-head' }, h('h2', { id: 'event-deliveries-title' }, `Deliveries (${event.deliveries.length})`)),
      event.deliveries.length
        ? h(
            'div',
            { class: 'card table-card' },
            h(
              'table',
              { class: 'table deliveries' },
              h('caption', { class: 'visually-hidden' }, 'Deliveries of this event, one per endpoint'),
              h(
                'thead',
                {},
                h(
                  'tr',
                  {},
                  h('th', { scope: 'col' }, 'Status'),
                  h('th', { scope: 'col' }, 'Endpoint'),
                  h('th', { scope: 'col', class: 'num' }, 'Attempts'),
                  h('th', { scope: 'col' }, 'Last result'),
                ),
              ),
              h('tbody', {}, rows),
            ),
          )
        : note('info', 'No endpoint was subscribed to this event when it was published, so it was delivered nowhere.'),
    ),
    h('section', { class: 'stack' }, h('h2', {}, 'Data'), jsonBlock(event.data, 'The event’s data')),
  );
}
