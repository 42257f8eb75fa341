// The dashboard's shell: session, routing (in the URL's hash, so the server serves one page) and
// the header. Each view renders into a fresh container and gets an AbortSignal that ends its
// requests and polling when the route changes.
import { identify, onUnauthorized, session } from './api.js';
import { h } from './dom.js';
import { toast } from './ui.js';
import { catalogueView } from './views/catalogue.js';
import { deliveryView } from './views/delivery.js';
import { endpointView } from './views/endpoint/index.js';
import { endpointsView } from './views/endpoints.js';
import { signInView } from './views/signin.js';

/**
 * What a view gets besides its container: the route's parameters and query, a signal that aborts
 * when the route changes, and a way to go elsewhere.
 * @typedef {object} ViewContext
 * @property {Record<string, string>} params
 * @property {Record<string, string>} query
 * @property {AbortSignal} signal
 * @property {(hash: string) => void} navigate
 */

/** @typedef {(root: HTMLElement, context: ViewContext) => Promise<void>} View */

/** The page's fixed elements (index.html). @param {string} id */
const byId = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

const main = byId('main');
const nav = byId('nav');
const sessionBox = byId('session');
const keyHint = byId('key-hint');
/** @type {AbortController | undefined} */
let current;

/** @type {[pattern: RegExp, view: View, section: string][]} */
const routes = [
  [/^\/?$/, endpointsView, 'endpoints'],
  [/^\/endpoints\/?$/, endpointsView, 'endpoints'],
  [/^\/endpoints\/(?<id>[^/]+)$/, endpointView, 'endpoints'],
  [/^\/deliveries\/(?<id>[^/]+)$/, deliveryView, 'endpoints'],
  [/^\/catalogue$/, catalogueView, 'catalogue'],
];

/** @param {string} hash */
function navigate(hash) {
  if (location.hash === hash) render();
  else location.hash = hash;
}

function mount() {
  current?.abort();
  current = new AbortController();
  const container = h('div', { class: 'view' });
  main.replaceChildren(container);
  return { container, signal: current.signal };
}

/** @param {boolean} signedIn */
function showSignedIn(signedIn) {
  nav.hidden = !signedIn;
  sessionBox.hidden = !signedIn;
  document.body.classList.toggle('signed-out', !signedIn);
  if (signedIn) {
    const key = /** @type {string} */ (session.key);
    keyHint.replaceChildren(h('span', { class: 'mono' }, `${key.slice(0, 4)}…${key.slice(-4)}`));
    keyHint.title = session.caps.name ? `API key “${session.caps.name}” of store ${session.caps.storeId}` : 'The API key of this session';
    if (!session.caps.write) keyHint.append(h('span', { class: 'badge badge-readonly' }, 'Read only'));
  }
}

/** @param {string} [message] */
function signIn(message) {
  showSignedIn(false);
  const { container } = mount();
  signInView(container, {
    message,
    /**
     * @param {string} key
     * @param {import('./api.js').Caps} caps
     */
    onSignedIn(key, caps) {
      session.start(key, caps);
      render();
    },
  });
  document.title = 'Sign in · Hookline';
}

function render() {
  if (!session.key) return signIn();
  showSignedIn(true);
  const [path, search = ''] = decodeURIComponent(location.hash.slice(1)).split('?');
  const match = routes.map(([pattern, view, section]) => ({ found: pattern.exec(path), view, section })).find((route) => route.found);
  for (const link of nav.querySelectorAll('a')) {
    if (link.dataset.section === match?.section) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  const { container, signal } = mount();
  if (!match) {
    container.append(
      h('h1', { class: 'view-title', tabindex: '-1' }, 'Page not found'),
      h('p', {}, h('a', { href: '#/' }, 'Back to the endpoints')),
    );
  } else {
    const context = { params: match.found?.groups ?? {}, query: Object.fromEntries(new URLSearchParams(search)), signal, navigate };
    match.view(container, context).catch((error) => {
      if (error?.name !== 'AbortError') toast(`Something went wrong: ${error.message}`, 'error');
    });
  }
  focusHeading(container, signal);
  window.scrollTo(0, 0);
}

/**
 * Moves focus to the view's heading once it appears (views load before they render it), so
 * keyboard and screen-reader users start at the top; unless the user has already moved on.
 * @param {HTMLElement} container
 * @param {AbortSignal} signal
 */
function focusHeading(container, signal) {
  const settle = () => {
    const heading = /** @type {HTMLElement | null} */ (container.querySelector('.view-title'));
    if (!heading) return false;
    document.title = `${heading.textContent} · Hookline`;
    const idle = document.activeElement === document.body || document.activeElement === main || !document.activeElement;
    if (idle && !document.querySelector('dialog[open]')) heading.focus({ preventScroll: true });
    return true;
  };
  if (settle()) return;
  const observer = new MutationObserver(() => settle() && observer.disconnect());
  observer.observe(container, { childList: true, subtree: true });
  signal.addEventListener('abort', () => observer.disconnect());
}

onUnauthorized(() => {
  session.end();
  signIn('This API key is no longer accepted (it was revoked or deleted). Sign in with another key.');
});

byId('sign-out').addEventListener('click', () => {
  session.end();
  history.replaceState(null, '', '#/');
  signIn();
});

/** @type {HTMLElement} */ (document.querySelector('.skip-link')).addEventListener('click', (event) => {
  event.preventDefault();
  const heading = /** @type {HTMLElement | null} */ (main.querySelector('.view-title'));
  (heading ?? main).focus();
});

window.addEventListener('hashchange', render);

// A reload keeps the key (sessionStorage) but not what it may do: ask the API again.
if (session.key) {
  identify(session.key).then(
    (caps) => {
      session.caps = caps;
      render();
    },
    (error) => {
      session.end();
      signIn(
        error.status === 401 ? 'This API key is no longer accepted (it was revoked or deleted). Sign in with another key.' : error.message,
      );
    },
  );
} else {
  render();
}
