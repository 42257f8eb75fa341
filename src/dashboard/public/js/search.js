// The top bar's search: an event id (`evt_…`) opens the event with its deliveries, a delivery id
// (`del_…`) opens the delivery. The id is looked up first, so an unknown one is told here, in words.
import { api, ApiError, explain } from './api.js';
import { h } from './dom.js';

/**
 * @param {(hash: string) => void} navigate
 * @returns {HTMLFormElement}
 */
export function searchForm(navigate) {
  const input = h('input', {
    id: 'search-id',
    type: 'search',
    autocomplete: 'off',
    spellcheck: false,
    placeholder: 'evt_… or del_…',
    'aria-describedby': 'search-message',
  });
  const message = h('output', { id: 'search-message', class: 'search-message', 'aria-live': 'polite' });
  /** @type {AbortController | undefined} */
  let asking;

  /** @param {string} text */
  const tell = (text) => {
    message.textContent = text;
    message.hidden = !text;
  };
  tell('');
  input.addEventListener('input', () => tell(''));

  return /** @type {HTMLFormElement} */ (
    h(
      'form',
      {
        class: 'search',
        role: 'search',
        'aria-label': 'Find an event or a delivery',
        onsubmit: async (/** @type {SubmitEvent} */ event) => {
          event.preventDefault();
          const id = input.value.trim();
          const kind = id.startsWith('evt_') ? 'event' : id.startsWith('del_') ? 'delivery' : null;
          if (!kind) return tell('Enter an event id (it starts with evt_) or a delivery id (del_).');
          asking?.abort();
          asking = new AbortController();
          tell('Looking it up…');
          try {
            if (kind === 'event') await api.getEvent(id, asking.signal);
            else await api.getDelivery(id, asking.signal);
            tell('');
            input.value = '';
            navigate(kind === 'event' ? `#/events/${encodeURIComponent(id)}` : `#/deliveries/${encodeURIComponent(id)}`);
          } catch (failure) {
            if (failure instanceof ApiError && failure.status === 404)
              tell(`No ${kind} has the id ${id} here. Check that it was copied whole.`);
            else tell(explain(failure, `read ${kind === 'event' ? 'events' : 'deliveries'}`, 'webhooks:read'));
          }
        },
      },
      h('label', { for: 'search-id', class: 'visually-hidden' }, 'Event or delivery id'),
      input,
      h('button', { type: 'submit', class: 'btn btn-secondary btn-small' }, 'Find'),
      message,
    )
  );
}
