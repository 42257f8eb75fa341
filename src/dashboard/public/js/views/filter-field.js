import { api, ApiError, explain } from '../api.js';
import { h } from '../dom.js';
import { busy, button } from '../ui.js';

/** @typedef {import('../api.js').EventType} EventType */

const EXAMPLE_FILTER = '$.data.total > 10000 && $.data.currency == "EUR"';

/**
 * The endpoint form's content filter: the predicate, and "Test filter", which asks the server
 * whether the catalogue's example of a chosen type would be sent (the server evaluates it exactly
 * as publishing does). `value()` is the filter to send, null when empty.
 * @param {string | null} initial
 * @param {EventType[]} types The catalogue.
 * @param {() => string[]} chosen The event types ticked in the form now.
 */
export function filterField(initial, types, chosen) {
  const input = h('input', {
    id: 'ep-filter',
    name: 'filter',
    class: 'mono',
    autocomplete: 'off',
    spellcheck: 'false',
    placeholder: EXAMPLE_FILTER,
    value: initial ?? '',
    'aria-describedby': 'ep-filter-result ep-filter-help',
  });
  const sample = h('select', { id: 'ep-filter-type', 'aria-label': 'Example event to test the filter on' });
  const result = h('p', { class: 'hint', id: 'ep-filter-result', role: 'status' });

  /** Lists the ticked types (all, when none is), keeping the one shown if it still is. */
  function refreshTypes() {
    const ticked = chosen();
    const offered = ticked.length > 0 ? ticked : types.map((type) => type.type);
    const current = sample.value;
    sample.replaceChildren(...offered.map((type) => h('option', { value: type }, type)));
    if (offered.includes(current)) sample.value = current;
  }
  refreshTypes();
  sample.addEventListener('focus', refreshTypes);
  input.addEventListener('input', () => {
    result.textContent = '';
    input.removeAttribute('aria-invalid');
  });

  const test = button(
    'Test filter',
    async () => {
      refreshTypes();
      const filter = input.value.trim();
      if (!filter) {
        show('No filter: every event of the chosen types is sent.', 'ok');
        return;
      }
      const type = types.find((candidate) => candidate.type === sample.value);
      if (!type) return;
      const event = { id: 'evt_example', type: type.type, timestamp: new Date().toISOString(), data: type.example };
      await busy(test, async () => {
        try {
          const { matches } = await api.testFilter(filter, event);
          show(
            matches
              ? `Matches: the catalogue’s example of ${type.type} would be sent.`
              : `Does not match: the catalogue’s example of ${type.type} would not be sent.`,
            matches ? 'ok' : 'no',
          );
        } catch (failure) {
          show(problemOf(failure), 'error');
        }
      });
    },
    { class: 'btn btn-secondary btn-small', id: 'ep-filter-test' },
  );

  /**
   * @param {string} text
   * @param {'ok' | 'no' | 'error'} kind
   */
  function show(text, kind) {
    result.textContent = text;
    result.className = kind === 'error' ? 'form-error' : 'hint';
    result.dataset.result = kind;
    if (kind === 'error') input.setAttribute('aria-invalid', 'true');
    else input.removeAttribute('aria-invalid');
  }

  const field = h(
    'div',
    { class: 'field' },
    h('label', { for: 'ep-filter' }, 'Content filter'),
    input,
    h('div', { class: 'toolbar' }, test, h('span', { class: 'muted small' }, 'on an example'), sample),
    result,
    h(
      'p',
      { class: 'hint', id: 'ep-filter-help' },
      'Only events this SQL/JSON path predicate matches are sent here, e.g. ',
      h('code', {}, EXAMPLE_FILTER),
      '. Up to 1 KiB. Empty: every event of the chosen types.',
    ),
  );

  return {
    field,
    /** @returns {string | null} */
    value: () => input.value.trim() || null,
    /**
     * Shows the server's refusal of the filter under it.
     * @param {string} message
     */
    problem(message) {
      show(message, 'error');
      input.focus();
    },
  };
}

/**
 * The sentence for a failed test: the server's own words about the filter, or why it could not ask.
 * @param {unknown} failure
 */
export function problemOf(failure) {
  if (failure instanceof ApiError && failure.status === 400) return filterWords(failure.message);
  return explain(failure, 'test filters', 'webhooks:read');
}

/**
 * A refusal of the filter, as the form says it.
 * @param {string} problem
 */
export function filterWords(problem) {
  const text = problem.replace(/^filter does not parse: /, 'The filter does not parse: ').replace(/^filter /, 'The filter ');
  return /[.!?)]$/.test(text) ? text : `${text}.`;
}
