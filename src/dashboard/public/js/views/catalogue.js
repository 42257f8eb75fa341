import { api, explain } from '../api.js';
import { h } from '../dom.js';
import { jsonBlock, note, spinner, title } from '../ui.js';
import { byCategory } from './endpoint-form.js';

const EXAMPLE_EVENT = { id: 'evt_01jd5v1xkq8w3r0m6m2n4p7s9t', timestamp: '2026-11-22T10:00:00.000Z' };

/** @typedef {import('../api.js').EventType} EventType */
/** @typedef {import('../api.js').ShapeSchema} ShapeSchema */
/** @typedef {import('../api.js').PropertySchema} PropertySchema */

/**
 * The 20 event types by category: when each fires, its `data` shape and an example body.
 * @type {import('../app.js').View}
 */
export async function catalogueView(root, { signal }) {
  root.append(
    title('Event catalogue'),
    h(
      'p',
      { class: 'lead' },
      'The body of every request sent to an endpoint is an envelope ',
      h('code', {}, '{id, type, timestamp, data}'),
      '. These are the event types an endpoint can subscribe to, and the shape of their ',
      h('code', {}, 'data'),
      '.',
    ),
  );
  const status = h('div', {}, spinner('Loading the catalogue'));
  root.append(status);
  let types;
  try {
    types = await api.eventTypes();
  } catch (failure) {
    status.replaceChildren(note('error', explain(failure, 'read the event catalogue', 'webhooks:read')));
    return;
  }
  if (signal.aborted) return;
  const groups = [...byCategory(types)];
  status.replaceChildren(
    h(
      'nav',
      { class: 'jump', 'aria-label': 'Categories' },
      h(
        'ul',
        {},
        groups.map(([category, list]) =>
          h(
            'li',
            {},
            h(
              'button',
              {
                type: 'button',
                class: 'chip chip-button',
                onclick: () => document.getElementById(anchor(category))?.scrollIntoView({ behavior: 'smooth' }),
              },
              category,
              h('span', { class: 'count' }, String(list.length)),
            ),
          ),
        ),
      ),
    ),
  );
  root.append(
    ...groups.map(([category, list]) =>
      h(
        'section',
        { class: 'category', 'aria-labelledby': anchor(category) },
        h('h2', { id: anchor(category), tabindex: '-1' }, category),
        list.map(typeCard),
      ),
    ),
  );
}

/** @param {string} category */
const anchor = (category) => `category-${category.toLowerCase()}`;

/** @param {EventType} type */
function typeCard(type) {
  return h(
    'article',
    { class: 'card type-card', 'aria-labelledby': `type-${type.type}` },
    h('header', {}, h('h3', { id: `type-${type.type}`, class: 'mono' }, type.type), h('p', {}, type.description)),
    h(
      'div',
      { class: 'type-body' },
      h(
        'div',
        { class: 'fields' },
        h(
          'table',
          { class: 'table fields-table' },
          h('caption', { class: 'visually-hidden' }, `Fields of ${type.type} data`),
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              h('th', { scope: 'col' }, 'Field'),
              h('th', { scope: 'col' }, 'Type'),
              h('th', { scope: 'col' }, 'Required'),
              h('th', { scope: 'col' }, 'Description'),
            ),
          ),
          h('tbody', {}, fieldRows(type.schema)),
        ),
      ),
      h(
        'div',
        { class: 'example' },
        h('h4', {}, 'Example body'),
        jsonBlock(
          { id: EXAMPLE_EVENT.id, type: type.type, timestamp: EXAMPLE_EVENT.timestamp, data: type.example },
          `Example ${type.type} body`,
        ),
      ),
    ),
  );
}

/**
 * @param {ShapeSchema} schema
 * @param {string} [prefix]
 * @returns {HTMLTableRowElement[]}
 */
function fieldRows(schema, prefix = 'data.') {
  return Object.entries(schema.properties ?? {}).flatMap(([name, property]) => {
    const required = schema.required?.includes(name);
    const row = h(
      'tr',
      {},
      h('th', { scope: 'row', class: 'mono' }, prefix + name),
      h('td', { class: 'mono small' }, typeText(property)),
      h('td', { class: required ? 'small' : 'small optional' }, required ? 'Required' : 'Optional'),
      h('td', {}, property.description, constraints(property)),
    );
    return typeText(property).startsWith('array') && property.items?.properties
      ? [row, ...fieldRows(property.items, `${prefix}${name}[].`)]
      : [row];
  });
}

/**
 * The schema's type in words; a JSON Schema type list with "null" reads "integer or null".
 * @param {PropertySchema} property
 */
function typeText(property) {
  const types = Array.isArray(property.type) ? property.type : [property.type];
  const nullable = types.includes('null');
  const type = types.find((name) => name !== 'null') ?? 'null';
  let text;
  if (type === 'array') text = property.items?.type === 'object' ? 'array of objects' : `array of ${property.items?.type ?? 'values'}`;
  else text = property.format ? `${type} (${property.format})` : type;
  return nullable ? `${text} or null` : text;
}

/** @param {PropertySchema} property */
function constraints(property) {
  const parts = [];
  if (property.enum)
    parts.push(
      h(
        'span',
        {},
        'One of ',
        property.enum.map((value, i) => [i ? ', ' : '', h('code', {}, value)]),
      ),
    );
  if (property.pattern) parts.push(h('span', {}, 'Pattern ', h('code', {}, property.pattern)));
  if (property.minimum !== undefined) parts.push(h('span', {}, `At least ${property.minimum}`));
  if (property.maxLength !== undefined) parts.push(h('span', {}, `Up to ${property.maxLength} characters`));
  if (property.minItems !== undefined || property.maxItems !== undefined)
    parts.push(h('span', {}, `${property.minItems ?? 0} to ${property.maxItems ?? '∞'} items`));
  return parts.length
    ? h(
        'div',
        { class: 'constraints muted small' },
        parts.map((part, i) => [i ? ' · ' : '', part]),
      )
    : null;
}
