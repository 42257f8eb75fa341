// The dashboard's shell: session, routing (in the URL's hash, so the server serves one page) and
// the header. Each view renders into a fresh container and gets an AbortSignal that ends its
// requests and polling when the route changes. A session starts from an API key typed in, or from
// a portal link (`#portal=<code>`), whose one-time code is exchanged for the session's cookie.
import { ApiError, exchangePortalCode, explain, identify, identifyPortal, onUnauthorized, session } from './api.js';
import { applyBranding, brandName } from './branding.js';
import { h } from './dom.js';
import { searchForm } from './search.js';
import { toast } from './ui.js';
import { catalogueView } from './views/catalogue.js';
import { deliveryView } from './views/delivery.js';
import { endpointView } from './views/endpoint/index.js';
import { endpointsView } from './views/endpoints.js';
import { eventView } from './views/event.js';
import { portalEndedView, portalOpeningView } from './views/portal.js';
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
const search = searchForm(navigate);
sessionBox.before(search);
/** @type {AbortController | undefined} */
let current;

/** @type {[pattern: RegExp, view: View, section: string][]} */
const routes = [
  [/^\/?$/, endpointsView, 'endpoints'],
  [/^\/endpoints\/?$/, endpointsView, 'endpoints'],
  [/^\/endpoints\/(?<id>[^/]+)$/, endpointView, 'endpoints'],
  [/^\/deliveries\/(?<id>[^/]+)$/, deliveryView, 'endpoints'],
  [/^\/events\/(?<id>[^/]+)$/, eventView, 'endpoints'],
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
  search.hidden = !signedIn;
  sessionBox.hidden = !signedIn;
  document.body.classList.toggle('signed-out', !signedIn);
  if (signedIn && session.caps.portal) {
    const { portal } = session.caps;
    keyHint.replaceChildren(h('span', {}, 'Signed in by link'));
    keyHint.title = `Portal session of store ${portal.storeId}, until ${new Date(portal.expiresAt).toLocaleString()}`;
    if (!session.caps.write) keyHint.append(h('span', { class: 'badge badge-readonly' }, 'Read only'));
  } else if (signedIn) {
    const key = /** @type {string} */ (session.key);
    keyHint.replaceChildren(h('span', { class: 'mono' }, `${key.slice(0, 4)}…${key.slice(-4)}`));
    keyHint.title = session.caps.name ? `API key “${session.caps.name}” of store ${session.caps.storeId}` : 'The API key of this session';
    if (!session.caps.write) keyHint.append(h('span', { class: 'badge badge-readonly' }, 'Read only'));
  }
}

/** @param {string} [message] */
function signIn(message) {
  applyBranding(undefined);
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

/**
 * What a portal session that cannot go on is told, from the API's refusal: which of used,
 * expired, ended or not valid, in words, with when it expired.
 * @param {unknown} error
 * @param {string | undefined} expiresAt
 * @returns {{ heading: string, message: string }}
 */
function portalEnd(error, expiresAt) {
  const said = error instanceof ApiError ? error.message : '';
  if (!(error instanceof ApiError) || (error.status !== 401 && error.status !== 400))
    return { heading: 'The dashboard could not open', message: explain(error, 'open this session', 'webhooks:read') };
  if (/already been used/.test(said))
    return { heading: 'This link has already been used', message: 'A link signs in once, in one browser tab, and it was opened before.' };
  if (/expired/.test(said) || (expiresAt && Date.parse(expiresAt) <= Date.now())) {
    const at = /expired at (\S+):/.exec(said)?.[1] ?? expiresAt;
    return { heading: 'Your session has expired', message: at ? `It ended at ${new Date(at).toLocaleString()}.` : 'Its time is up.' };
  }
  if (/has been ended/.test(said))
    return { heading: 'Your session has been ended', message: 'It was closed before its time: you are signed out.' };
  if (/not valid/.test(said)) return { heading: 'This link is not valid', message: 'Check that it was copied whole.' };
  return { heading: 'You are signed out', message: 'This browser tab is no longer signed in to the session.' };
}

/**
 * The page of a portal session that ended, or of a link that cannot sign in. A session that only
 * could not be reached (the network, a 5xx) is kept, so that a reload tries it again.
 * @param {{ heading: string, message: string }} end
 * @param {boolean} [forget]
 */
function showPortalEnded(end, forget = true) {
  if (forget) session.end();
  showSignedIn(false);
  history.replaceState(null, '', '#/');
  const { container } = mount();
  portalEndedView(container, { ...end, onUseKey: () => signIn() });
  document.title = `${end.heading} · ${brandName()}`;
}

/**
 * Signs this tab in with a portal link's one-time code, which is then gone from the address bar
 * (and from the tab's history).
 * @param {string} code
 */
async function openPortalLink(code) {
  history.replaceState(null, '', '#/');
  session.end();
  showSignedIn(false);
  portalOpeningView(mount().container);
  try {
    const portal = await exchangePortalCode(code);
    session.startPortal(portal);
    applyBranding(portal.branding);
    render();
  } catch (error) {
    showPortalEnded(portalEnd(error, undefined));
  }
}

function render() {
  if (!session.active) return signIn();
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
    const done = showLoading(container);
    match
      .view(container, context)
      .catch((error) => {
        if (error?.name !== 'AbortError') toast(`Something went wrong: ${error.message}`, 'error');
      })
      .finally(done);
  }
  focusHeading(container, signal);
  window.scrollTo(0, 0);
}

/**
 * A placeholder while a view fetches what it shows, rather than a blank page: it goes when the
 * view puts its first content in, or ends. Returns what removes it.
 * @param {HTMLElement} container
 */
function showLoading(container) {
  const placeholder = h(
    'p',
    { class: 'view-loading', role: 'status' },
    h('span', { class: 'spinner', 'aria-hidden': 'true' }),
    ' Loading…',
  );
  container.setAttribute('aria-busy', 'true');
  container.append(placeholder);
  const observer = new MutationObserver(() => {
    if ([...container.children].some((child) => child !== placeholder)) done();
  });
  function done() {
    observer.disconnect();
    placeholder.remove();
    container.removeAttribute('aria-busy');
  }
  observer.observe(container, { childList: true });
  return done;
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
    document.title = `${heading.textContent} · ${brandName()}`;
    const idle = document.activeElement === document.body || document.activeElement === main || !document.activeElement;
    if (idle && !document.querySelector('dialog[open]')) heading.focus({ preventScroll: true });
    return true;
  };
  if (settle()) return;
  const observer = new MutationObserver(() => settle() && observer.disconnect());
  observer.observe(container, { childList: true, subtree: true });
  signal.addEventListener('abort', () => observer.disconnect());
}

onUnauthorized((error) => {
  if (session.portal) return showPortalEnded(portalEnd(error, session.portal.expiresAt));
  session.end();
  signIn('This API key is no longer accepted (it was revoked or deleted). Sign in with another key.');
});

byId('sign-out').addEventListener('click', () => {
  if (session.portal) {
    return showPortalEnded({ heading: 'You have signed out', message: 'This browser tab is no longer signed in to the session.' });
  }
  session.end();
  history.replaceState(null, '', '#/');
  signIn();
});

/** @type {HTMLElement} */ (document.querySelector('.skip-link')).addEventListener('click', (event) => {
  event.preventDefault();
  const heading = /** @type {HTMLElement | null} */ (main.querySelector('.view-title'));
  (heading ?? main).focus();
});

window.addEventListener('hashchange', () => {
  const code = /^#portal=([\w-]+)$/.exec(location.hash)?.[1];
  if (code) void openPortalLink(code);
  else render();
});

// A reload keeps the key or the portal session (sessionStorage) but not what it may do: ask the API again.
const portalCode = /^#portal=([\w-]+)$/.exec(location.hash)?.[1];
if (portalCode) {
  void openPortalLink(portalCode);
} else if (session.portal) {
  const { expiresAt } = session.portal;
  identifyPortal().then(
    (caps) => {
      session.caps = caps;
      applyBranding(caps.portal?.branding);
      render();
    },
    (error) => {
      if (!session.portal) return; // already shown by onUnauthorized
      const refused = error instanceof ApiError && error.status === 401;
      showPortalEnded(
        refused ? portalEnd(error, expiresAt) : { ...portalEnd(error, expiresAt), heading: 'The dashboard could not open' },
        refused,
      );
    },
  );
} else if (session.key) {
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
