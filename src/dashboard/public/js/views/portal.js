import { h } from '../dom.js';
import { brandName } from '../branding.js';
import { spinner } from '../ui.js';

/**
 * While a portal link's code is exchanged for the session.
 * @param {HTMLElement} root
 */
export function portalOpeningView(root) {
  root.append(h('section', { class: 'signin' }, h('div', { class: 'signin-card' }, spinner('Signing you in'))));
}

/**
 * Where a portal session lands when it can go no further: its link was used already, or it
 * expired, or it was ended. Says which, in words, and what to do; no API key form, which would
 * mean nothing to whoever was sent the link.
 * @param {HTMLElement} root
 * @param {{ heading: string, message: string, onUseKey: () => void }} options
 */
export function portalEndedView(root, { heading, message, onUseKey }) {
  const brand = brandName();
  root.append(
    h(
      'section',
      { class: 'signin portal-ended' },
      h(
        'div',
        { class: 'signin-card' },
        h('h1', { class: 'view-title', tabindex: '-1' }, heading),
        h('p', { class: 'lead', role: 'alert' }, message),
        h(
          'p',
          {},
          brand === 'Hookline'
            ? 'Ask whoever sent you the link for a new one.'
            : `Open the webhook settings in ${brand} again to get a new link.`,
        ),
        h(
          'p',
          { class: 'muted small' },
          'Have an API key? ',
          h(
            'a',
            {
              href: '#/',
              onclick: (/** @type {MouseEvent} */ event) => {
                event.preventDefault();
                onUseKey();
              },
            },
            'Sign in with it',
          ),
          '.',
        ),
      ),
    ),
  );
}
