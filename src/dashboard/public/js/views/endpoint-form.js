import { api, ApiError, explain } from '../api.js';
import { h } from '../dom.js';
import { parseSchedule, scheduleText } from '../schedule.js';
import { button, openDialog } from '../ui.js';
import { filterField, filterWords } from './filter-field.js';
import { authField } from './auth-field.js';

/** @typedef {import('../api.js').Webhook} Webhook */
/** @typedef {import('../api.js').EventType} EventType */

/** The API's limits on an endpoint's extra headers: how many, the longest name, all names and values together. */
const MAX_HEADERS = 20;
const MAX_HEADER_NAME_LENGTH = 256;
const MAX_HEADERS_SIZE = '8 KiB';

/**
 * An endpoint's headers by name, case ignored: the API keeps them in no particular order.
 * @param {Record<string, string | null> | null | undefined} headers
 */
export function sortedHeaders(headers) {
  return Object.entries(headers ?? {}).sort(([a], [b]) => a.localeCompare(b, 'en', { sensitivity: 'base' }));
}

/**
 * A 400's problems about the field `name` apart from the others (the API names the field first in each),
 * in the words of the form. Both undefined when none is about it, or for another failure; `rest` is
 * empty when all are.
 * @param {unknown} failure
 * @param {string} name
 * @returns {{ field?: string, rest?: string }}
 */
function splitProblems(failure, name) {
  if (!(failure instanceof ApiError) || failure.status !== 400) return {};
  const body = /** @type {{ message?: unknown } | null} */ (failure.body);
  const problems = Array.isArray(body?.message) ? body.message.map(String) : [failure.message];
  const about = problems.filter((problem) => problem.startsWith(name));
  const others = problems.filter((problem) => !problem.startsWith(name)).map(formWords);
  if (about.length === 0) return { rest: others.join(' ') };
  return { field: about.map(formWords).join(' '), rest: others.join(' ') };
}

/** The API's problems that read better in the form's words: [pattern, sentence]. @type {[RegExp, string][]} */
const FORM_WORDS = [
  [
    /^retrySchedule must add up to at most MAX_DELIVERY_AGE \(([^)]+)\).*adds up to (\S+)$/,
    'These delays add up to $2, longer than a delivery may wait here ($1). Shorten them or remove one.',
  ],
  [/^retrySchedule must add up to at most (.+)$/, 'These delays must add up to $1 at most.'],
  [
    /^rateLimitPerSecond must be a whole number from 1 to (\d+), or null$/,
    'The rate limit must be a whole number from 1 to $1, or empty for none.',
  ],
  [/^url must use https:\/\/$/, 'The URL must start with https://.'],
  [/^url host could not be resolved.*$/, 'No server answers to this URL’s host name: check its spelling.'],
  [/^url host is (.+)$/, 'This URL cannot receive webhooks: its host is $1.'],
  [/^url must not point at (\S+) itself.*$/, 'This URL points at $1 itself: give the address of your own server.'],
  [/^name must be 1 to (\d+) characters$/, 'The name must be 1 to $1 characters.'],
  [/^events must contain at least one event type$/, 'Choose at least one event.'],
  [/^headers: (.+)$/, 'Custom headers: $1.'],
];

/**
 * One problem of a 400, as the form says it: a known one in a sentence, another as the API wrote it.
 * @param {string} problem
 */
function formWords(problem) {
  const known = FORM_WORDS.find(([pattern]) => pattern.test(problem));
  if (!known) return /[.!?]$/.test(problem) ? problem : `${problem}.`;
  return problem.replace(known[0], known[1]);
}

/**
 * Groups the catalogue by category, keeping its order.
 * @param {EventType[]} types
 */
export function byCategory(types) {
  /** @type {Map<string, EventType[]>} */
  const groups = new Map();
  for (const type of types) groups.set(type.category, [...(groups.get(type.category) ?? []), type]);
  return groups;
}

/**
 * Create (no `webhook`) or edit an endpoint in a dialog. Resolves with the API's answer (with the
 * secret, on create) or undefined when cancelled.
 * @overload
 * @param {{ webhook: Webhook }} options
 * @returns {Promise<Webhook | undefined>}
 */
/**
 * @overload
 * @returns {Promise<import('../api.js').WebhookWithSecret | undefined>}
 */
/**
 * @param {{ webhook?: Webhook }} [options]
 * @returns {Promise<Webhook | undefined>}
 */
export async function endpointDialog({ webhook } = {}) {
  const types = await api.eventTypes();
  const editing = Boolean(webhook);
  const chosen = new Set(webhook?.events ?? []);

  return openDialog(
    (/** @type {(value?: Webhook) => void} */ close) => {
      // Outside the scrolling body, beside Save: a refusal shows whatever part of the form is in view.
      const error = h('div', { class: 'form-error dialog-alert', role: 'alert' });
      const name = h('input', {
        id: 'ep-name',
        name: 'name',
        required: true,
        maxlength: '200',
        autocomplete: 'off',
        value: webhook?.name ?? '',
      });
      const url = h('input', {
        id: 'ep-url',
        name: 'url',
        type: 'url',
        required: true,
        maxlength: '2048',
        class: 'mono',
        autocomplete: 'off',
        placeholder: 'https://example.com/webhooks/hookline',
        value: webhook?.url ?? '',
        'aria-describedby': 'ep-url-help',
      });
      const active = h('input', { id: 'ep-active', name: 'isActive', type: 'checkbox', checked: webhook?.isActive ?? true });
      /** @type {HTMLInputElement[]} */
      const boxes = [];
      const groups = [...byCategory(types)].map(([category, list]) => {
        const own = list.map((type) => {
          const box = h('input', { type: 'checkbox', name: 'events', value: type.type, checked: chosen.has(type.type) });
          boxes.push(box);
          return h(
            'label',
            { class: 'event-option' },
            box,
            h('span', {}, h('code', {}, type.type), h('span', { class: 'muted small' }, type.description)),
          );
        });
        const all = button(
          'All',
          () => {
            const on = !own.every((label) => /** @type {HTMLInputElement} */ (label.querySelector('input')).checked);
            for (const label of own) /** @type {HTMLInputElement} */ (label.querySelector('input')).checked = on;
          },
          { kind: 'quiet', class: 'btn btn-quiet btn-small', 'aria-label': `Select all ${category} events` },
        );
        return h('fieldset', { class: 'event-group' }, h('legend', {}, category, all), own);
      });
      const filter = filterField(webhook?.filter ?? null, types, () => boxes.filter((box) => box.checked).map((box) => box.value));
      const headers = headerEditor(webhook?.headers ?? {}, webhook?.sensitiveHeaders ?? []);
      const auth = authField(webhook);
      const schedule = h('input', {
        id: 'ep-schedule',
        name: 'retrySchedule',
        class: 'mono',
        autocomplete: 'off',
        placeholder: 'Deployment default',
        value: scheduleText(webhook?.retrySchedule) ?? '',
        'aria-describedby': 'ep-schedule-error ep-schedule-help',
      });
      // What is wrong with the schedule shows under it, whether the page or the API finds it.
      const scheduleError = h('p', { class: 'form-error', id: 'ep-schedule-error', role: 'alert' });
      /** @param {string} message */
      const scheduleProblem = (message) => {
        scheduleError.textContent = message;
        if (message) {
          schedule.setAttribute('aria-invalid', 'true');
          schedule.focus();
          scheduleError.scrollIntoView({ block: 'nearest' });
        } else schedule.removeAttribute('aria-invalid');
      };
      schedule.addEventListener('input', () => scheduleProblem(''));
      const rate = h('input', {
        id: 'ep-rate',
        name: 'rateLimitPerSecond',
        // Text, not number: the API's message, not the browser's, says what is wrong with a value.
        inputmode: 'numeric',
        autocomplete: 'off',
        placeholder: 'No limit',
        value: webhook?.rateLimitPerSecond ?? '',
        'aria-describedby': 'ep-rate-help',
      });
      const ordered = h('input', { id: 'ep-ordered', name: 'ordered', type: 'checkbox', checked: webhook?.ordered ?? false });
      const submit = button(editing ? 'Save changes' : 'Create endpoint', null, { kind: 'primary', type: 'submit' });

      const form = h(
        'form',
        {
          class: 'dialog-form',
          onsubmit: async (/** @type {SubmitEvent} */ event) => {
            event.preventDefault();
            const events = boxes.filter((box) => box.checked).map((box) => box.value);
            if (events.length === 0) {
              error.textContent = 'Choose at least one event to subscribe to.';
              boxes[0].focus();
              return;
            }
            const read = headers.read();
            if ('error' in read) {
              error.textContent = read.error;
              read.field.focus();
              return;
            }
            const credentials = auth.read();
            if ('error' in credentials) {
              error.textContent = credentials.error;
              credentials.field.focus();
              return;
            }
            const delays = parseSchedule(schedule.value);
            if ('error' in delays) {
              error.textContent = '';
              scheduleProblem(`Retry schedule: ${delays.error}`);
              return;
            }
            const limit = rate.value.trim();
            if (limit !== '' && !/^\d+$/.test(limit)) {
              error.textContent = 'Rate limit: a whole number of attempts per second, or empty for none.';
              rate.focus();
              return;
            }
            const body = {
              name: name.value.trim(),
              url: url.value.trim(),
              events,
              isActive: active.checked,
              headers: read.headers,
              retrySchedule: delays.delays,
              rateLimitPerSecond: limit === '' ? null : Number(limit),
              ordered: ordered.checked,
              filter: filter.value(),
              ...(credentials.auth === undefined ? {} : { auth: credentials.auth }),
            };
            error.textContent = '';
            scheduleProblem('');
            submit.disabled = true;
            try {
              close(webhook ? await api.updateWebhook(webhook.id, body) : await api.createWebhook(body));
            } catch (failure) {
              const { field, rest } = splitProblems(failure, 'retrySchedule');
              const { field: filterProblem, rest: others } = splitProblems(failure, 'filter');
              error.textContent =
                (filterProblem ? others : rest) ?? explain(failure, editing ? 'change endpoints' : 'create endpoints', 'webhooks:write');
              if (field) scheduleProblem(field);
              if (filterProblem) filter.problem(filterWords(filterProblem));
            } finally {
              submit.disabled = false;
            }
          },
        },
        h('h2', { class: 'dialog-title' }, webhook ? `Edit ${webhook.name}` : 'New endpoint'),
        h(
          'div',
          { class: 'dialog-body stack' },
          h('div', { class: 'field' }, h('label', { for: 'ep-name' }, 'Name'), name),
          h(
            'div',
            { class: 'field' },
            h('label', { for: 'ep-url' }, 'URL'),
            url,
            h('p', { class: 'hint', id: 'ep-url-help' }, 'Hookline POSTs signed JSON here. Use https:// in production.'),
          ),
          h(
            'fieldset',
            { class: 'events-field' },
            h('legend', {}, 'Events'),
            h('p', { class: 'hint' }, 'The endpoint receives these event types.'),
            h('div', { class: 'event-groups' }, groups),
          ),
          filter.field,
          headers.field,
          auth.field,
          h(
            'div',
            { class: 'field' },
            h('label', { for: 'ep-schedule' }, 'Retry schedule'),
            schedule,
            scheduleError,
            h(
              'p',
              { class: 'hint', id: 'ep-schedule-help' },
              'The delay before each attempt, the first 0: e.g. 0, 5 s, 5 min, 30 min, 2 h (ms, s, min, h or d). ',
              'Up to 30 attempts, 7 days in all, and no longer than a delivery may wait here. ',
              'Empty: the deployment’s schedule.',
            ),
          ),
          h(
            'div',
            { class: 'field' },
            h('label', { for: 'ep-rate' }, 'Rate limit (attempts per second)'),
            rate,
            h(
              'p',
              { class: 'hint', id: 'ep-rate-help' },
              'At most this many attempts a second, counted across every worker; the others wait. 1 to 10,000. Empty: no limit.',
            ),
          ),
          h(
            'label',
            { class: 'check' },
            ordered,
            h(
              'span',
              {},
              'Ordered',
              h('span', { class: 'muted small' }, ' — one at a time, in publish order; a failing delivery holds the later ones'),
            ),
          ),
          h('label', { class: 'check' }, active, h('span', {}, 'Active', h('span', { class: 'muted small' }, ' — deliver events to it'))),
        ),
        error,
        h(
          'div',
          { class: 'dialog-actions' },
          button('Cancel', () => close()),
          submit,
        ),
      );
      return form;
    },
    { wide: true, label: editing ? 'Edit endpoint' : 'New endpoint' },
  );
}

/**
 * Rows of header name and value. Values are masked like passwords (they often carry credentials)
 * until "Show values" is ticked. A sensitive header's stored value is never returned: its row
 * starts empty, and left so it keeps the stored value (sent as null); a value typed replaces it.
 * `read()` answers {headers} or {error, field}.
 * @param {Record<string, string | null>} initial
 * @param {string[]} sensitive The names in `initial` whose values are kept secret.
 */
function headerEditor(initial, sensitive) {
  const rows = h('div', { class: 'header-rows' });
  const reveal = h('input', { type: 'checkbox', id: 'ep-header-reveal' });
  const add = button('Add header', () => addRow('', '').querySelector('input')?.focus(), { class: 'btn btn-secondary btn-small' });
  const secret = new Set(sensitive);

  /**
   * @param {string} name
   * @param {string | null} value Null for a sensitive header whose stored value is kept unless replaced.
   */
  function addRow(name, value) {
    const stored = value === null || secret.has(name);
    const row = h(
      'div',
      { class: 'header-row', dataset: stored ? { stored: name } : {} },
      h('input', {
        class: 'mono',
        autocomplete: 'off',
        'aria-label': 'Header',
        placeholder: 'Authorization',
        maxlength: String(MAX_HEADER_NAME_LENGTH),
        value: name,
      }),
      h('input', {
        type: reveal.checked ? 'text' : 'password',
        class: 'mono',
        autocomplete: 'off',
        'aria-label': 'Value',
        maxlength: '1024',
        placeholder: stored ? 'Set – leave empty to keep' : null,
        title: stored ? 'The stored value is never shown. Leave empty to keep it, or type a new one to replace it.' : null,
        value: stored ? '' : value,
      }),
      button(
        'Remove',
        () => {
          row.remove();
          add.disabled = false;
          add.focus();
        },
        { class: 'btn btn-quiet btn-small', 'aria-label': 'Remove header' },
      ),
    );
    rows.append(row);
    add.disabled = rows.children.length >= MAX_HEADERS;
    return row;
  }

  reveal.addEventListener('change', () => {
    for (const input of /** @type {NodeListOf<HTMLInputElement>} */ (rows.querySelectorAll('input[aria-label="Value"]')))
      input.type = reveal.checked ? 'text' : 'password';
  });
  for (const [name, value] of sortedHeaders(initial)) addRow(name, value);

  /** @returns {{ headers: Record<string, string | null> } | { error: string, field: HTMLInputElement }} */
  function read() {
    /** @type {Record<string, string | null>} */
    const headers = {};
    const seen = new Set();
    for (const row of /** @type {HTMLCollectionOf<HTMLElement>} */ (rows.children)) {
      const [nameInput, valueInput] = row.querySelectorAll('input');
      const name = nameInput.value.trim();
      const stored = row.dataset.stored;
      if (!name && !valueInput.value) continue;
      if (!name) return { error: 'Custom headers: give each header a name, or remove the row.', field: nameInput };
      if (seen.has(name.toLowerCase())) return { error: `Custom headers: ${name} is given twice (names ignore case).`, field: nameInput };
      seen.add(name.toLowerCase());
      if (stored !== undefined && !valueInput.value) {
        // The API keeps a stored value under its own name only (case aside).
        if (name.toLowerCase() !== stored.toLowerCase())
          return {
            error: `Custom headers: give ${name} a value. Its stored value stays with ${stored}, which is never shown, so a renamed header needs it typed again.`,
            field: valueInput,
          };
        headers[name] = null;
      } else headers[name] = valueInput.value;
    }
    return { headers };
  }

  const field = h(
    'fieldset',
    { class: 'choice-field headers-field' },
    h('legend', {}, 'Custom headers'),
    h(
      'p',
      { class: 'hint' },
      `Sent with every attempt, e.g. an Authorization your receiver checks. Up to ${MAX_HEADERS}, ${MAX_HEADERS_SIZE} in all. `,
      'Credentials (Authorization, Cookie, and names with key, token, secret, auth, password or signature) are stored encrypted and never shown again: leave one empty to keep it.',
    ),
    rows,
    h('div', { class: 'toolbar' }, add, h('label', { class: 'check', for: 'ep-header-reveal' }, reveal, h('span', {}, 'Show values'))),
  );
  return { field, read };
}
