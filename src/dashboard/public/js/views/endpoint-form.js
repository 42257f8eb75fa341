import { api, explain } from '../api.js';
import { h } from '../dom.js';
import { button, openDialog } from '../ui.js';

/** Groups the catalogue by category, keeping its order. */
export function byCategory(types) {
  const groups = new Map();
  for (const type of types) groups.set(type.category, [...(groups.get(type.category) ?? []), type]);
  return groups;
}

/**
 * Create (no `webhook`) or edit an endpoint in a dialog. Resolves with the API's answer (with the
 * secret, on create) or undefined when cancelled.
 */
export async function endpointDialog({ webhook } = {}) {
  const types = await api.eventTypes();
  const editing = Boolean(webhook);
  const chosen = new Set(webhook?.events ?? []);

  return openDialog(
    (close) => {
      const error = h('div', { class: 'form-error', role: 'alert' });
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
            const on = !own.every((label) => label.querySelector('input').checked);
            for (const label of own) label.querySelector('input').checked = on;
          },
          { kind: 'quiet', class: 'btn btn-quiet btn-small', 'aria-label': `Select all ${category} events` },
        );
        return h('fieldset', { class: 'event-group' }, h('legend', {}, category, all), own);
      });
      const submit = button(editing ? 'Save changes' : 'Create endpoint', null, { kind: 'primary', type: 'submit' });

      const form = h(
        'form',
        {
          class: 'dialog-form',
          onsubmit: async (event) => {
            event.preventDefault();
            const events = boxes.filter((box) => box.checked).map((box) => box.value);
            if (events.length === 0) {
              error.textContent = 'Choose at least one event to subscribe to.';
              boxes[0].focus();
              return;
            }
            const body = { name: name.value.trim(), url: url.value.trim(), events, isActive: active.checked };
            error.textContent = '';
            submit.disabled = true;
            try {
              close(editing ? await api.updateWebhook(webhook.id, body) : await api.createWebhook(body));
            } catch (failure) {
              error.textContent = explain(failure, editing ? 'change endpoints' : 'create endpoints', 'webhooks:write');
            } finally {
              submit.disabled = false;
            }
          },
        },
        h('h2', { class: 'dialog-title' }, editing ? `Edit ${webhook.name}` : 'New endpoint'),
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
          h('label', { class: 'check' }, active, h('span', {}, 'Active', h('span', { class: 'muted small' }, ' — deliver events to it'))),
          error,
        ),
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
