// What can be done to an endpoint from its page: send a test event, edit, (de)activate, replay, rotate
// the secret, delete. A key that can only read gets a note instead.
import { api, explain, readOnlyText } from '../../api.js';
import { duration, h } from '../../dom.js';
import { busy, button, note, secretDialog, spinner, toast } from '../../ui.js';
import { endpointDialog } from '../endpoint-form.js';
import { confirmDeactivate, confirmDelete, replayDialog, rotateDialog } from './dialogs.js';
import { deliveries, showQueued } from './queued.js';

/** @typedef {import('../../api.js').Webhook} Webhook */

/**
 * The actions' toolbar and the outputs where the test's and the replay's outcomes appear.
 * @param {import('./index.js').EndpointView} view
 * @param {{ write: boolean, navigate: (hash: string) => void }} options
 */
export function endpointActions(view, { write, navigate }) {
  const toggle = button('', () => toggleActive(), { id: 'toggle-active' });
  const replayButton = button('Replay…', () => replay(), { id: 'replay' });
  const testResult = h('output', { class: 'test-result', 'aria-live': 'polite' });
  const replayResult = h('output', { class: 'test-result', 'aria-live': 'polite' });

  /** @param {HTMLButtonElement} btn */
  async function sendTest(btn) {
    testResult.replaceChildren(spinner('Sending a test event'), ' Sending a webhook.test event…');
    try {
      const result = await busy(btn, () => api.testWebhook(view.webhook.id));
      testResult.replaceChildren(
        h(
          'div',
          { class: ['test-card', result.success ? 'test-ok' : 'test-bad'] },
          h('strong', {}, result.success ? 'Test event delivered' : 'Test event failed'),
          h('span', {}, result.statusCode ? `HTTP ${result.statusCode}` : 'no HTTP response'),
          h('span', {}, duration(result.durationMs)),
          result.error ? h('span', { class: 'test-error' }, result.error) : null,
          h('a', { href: `#/deliveries/${result.deliveryId}` }, 'View delivery'),
        ),
      );
      view.refreshNow();
    } catch (failure) {
      testResult.replaceChildren(note('error', explain(failure, 'send test events', 'webhooks:write')));
    }
  }

  async function edit() {
    try {
      const saved = await endpointDialog({ webhook: view.webhook });
      if (saved) {
        view.show(saved);
        toast('Endpoint saved.');
      }
    } catch (failure) {
      toast(explain(failure, 'load the event catalogue', 'webhooks:read'), 'error');
    }
  }

  async function toggleActive() {
    const activate = !view.webhook.isActive;
    if (!activate && !(await confirmDeactivate(view.webhook))) return;
    const disabledAt = view.webhook.disabledAt;
    try {
      const updated = await busy(toggle, () => api.updateWebhook(view.webhook.id, { isActive: activate }));
      view.missedSince = activate ? disabledAt : null;
      view.show(updated);
      toast(activate ? 'Endpoint activated.' : 'Endpoint deactivated.');
      view.refreshNow();
    } catch (failure) {
      toast(explain(failure, 'change endpoints', 'webhooks:write'), 'error');
    }
  }

  /**
   * Asks for a window and queues what the endpoint has no delivery of in it (POST /webhooks/:id/replay).
   * @param {string | null} [since] Where the window starts, by default.
   */
  async function replay(since) {
    const answer = await replayDialog(view.webhook, since);
    if (answer === undefined) return;
    view.missedSince = null;
    view.show(view.webhook);
    const { window } = answer;
    showQueued(replayResult, answer.batch, {
      // The same window from where the last request stopped.
      more: (from) => api.replay(view.webhook.id, { ...window, since: from }),
      text: (queued, done) =>
        !done
          ? `Replay queued ${deliveries(queued)} so far; more remain.`
          : queued === 0
            ? 'Replay queued 0 deliveries: it has a delivery of every event of that window.'
            : `Replay queued ${deliveries(queued)}.`,
      rest: 'Continue replays the rest of the window, from the events published at',
      action: 'replay events',
      onQueued: () => void view.refreshNow(),
    });
  }

  /** @param {HTMLButtonElement} btn */
  async function rotate(btn) {
    const overlap = await rotateDialog(view.webhook);
    if (overlap === undefined) return;
    try {
      const rotated = await busy(btn, () => api.rotateSecret(view.webhook.id, overlap));
      view.show(rotated);
      await secretDialog({ heading: 'New signing secret', webhook: rotated });
    } catch (failure) {
      toast(explain(failure, 'rotate secrets', 'webhooks:write'), 'error');
    }
  }

  async function remove() {
    if (!(await confirmDelete(view.webhook))) return;
    try {
      await api.deleteWebhook(view.webhook.id);
      toast(`Deleted ${view.webhook.name}.`);
      navigate('#/');
    } catch (failure) {
      toast(explain(failure, 'delete endpoints', 'webhooks:write'), 'error');
    }
  }

  const toolbar = write
    ? h(
        'div',
        { class: 'toolbar', role: 'group', 'aria-label': 'Endpoint actions' },
        button('Send test event', (e) => sendTest(e.currentTarget), { kind: 'primary', id: 'send-test' }),
        button('Edit', () => edit()),
        toggle,
        replayButton,
        button('Rotate secret', (e) => rotate(e.currentTarget)),
        button('Delete', () => remove(), { kind: 'danger-quiet' }),
      )
    : note('info', readOnlyText('edit or delete this endpoint, send it a test event, or retry its deliveries'));

  /** @param {Webhook} webhook */
  function show(webhook) {
    replayButton.disabled = !webhook.isActive;
    replayButton.title = webhook.isActive ? 'Send it the events of a time window it has no delivery of' : 'Activate it first';
    toggle.textContent = webhook.isActive ? 'Deactivate' : 'Activate';
  }

  return { elements: [toolbar, testResult, replayResult], show, replay };
}
