// What a replay or a retry of failed deliveries queued. One request queues a bounded number
// (MAX_REPLAY_DELIVERIES); while more remain, Continue sends the next request from where it stopped.
import { explainQueuing } from '../../api.js';
import { h, time } from '../../dom.js';
import { busy, button, note, toast } from '../../ui.js';

/** @typedef {import('../../api.js').QueuedBatch} QueuedBatch */

/**
 * `count` deliveries, the count with thousands separated ("10,000 deliveries").
 * @param {number} count
 * @param {string} [kind] A word before "delivery", such as "failed".
 */
export function deliveries(count, kind = '') {
  return `${count.toLocaleString('en')} ${kind ? `${kind} ` : ''}${count === 1 ? 'delivery' : 'deliveries'}`;
}

/**
 * Shows in `output` what the requests queued so far, adding up their answers. While the last
 * answer has a `next`, a Continue button sends the same request again from it.
 * @param {HTMLElement} output Its content is replaced.
 * @param {QueuedBatch} first The first request's answer.
 * @param {object} options
 * @param {(since: string) => Promise<QueuedBatch>} options.more The same request from `since`.
 * @param {(queued: number, done: boolean) => string} options.text What was queued so far, and whether that is all.
 * @param {string} options.rest What Continue does, completed by the time it goes on from.
 * @param {string} options.action Completes "this key cannot …" when a request fails.
 * @param {() => void} options.onQueued Called after each answer.
 */
export function showQueued(output, first, { more, text, rest, action, onQueued }) {
  let queued = 0;

  /** @param {QueuedBatch} batch */
  function add(batch) {
    // A keyboard user who pressed Continue keeps the focus on the Continue that replaces it.
    const focused = output.contains(document.activeElement);
    queued += batch.queued;
    onQueued();
    const next = batch.next;
    if (!next) {
      const sentence = text(queued, true);
      output.replaceChildren(note(queued === 0 ? 'info' : 'ok', sentence));
      toast(sentence);
      return;
    }
    const failure = h('div', { class: 'form-error', role: 'alert' });
    const go = button(
      'Continue',
      async () => {
        failure.textContent = '';
        try {
          add(await busy(go, () => more(next)));
        } catch (error) {
          failure.textContent = explainQueuing(error, action);
        }
      },
      { kind: 'primary', class: 'btn btn-primary btn-small' },
    );
    output.replaceChildren(
      note(
        'info',
        h('div', { class: 'queued-progress' }, [
          h('p', {}, h('strong', {}, text(queued, false)), ' One request queues only so many at a time. ', rest, ' ', time(next), '.'),
          h('div', { class: 'toolbar' }, go),
          failure,
        ]),
      ),
    );
    if (focused) go.focus();
  }

  add(first);
}
