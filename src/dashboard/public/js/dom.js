// DOM helpers. The dashboard never turns strings into HTML (the page runs under Trusted Types):
// every element is built here, and text always goes in as text.

/** @typedef {string | number | boolean | Node | null | undefined} Leaf */
/** @typedef {Leaf | (Leaf | Leaf[])[]} Child Text, a node, nothing, or a list of them (two deep). */

/**
 * @typedef {{ class?: string | (string | false | null | undefined)[], dataset?: Record<string, string>, [name: string]: unknown }} Props
 */

/**
 * The element `h(tag)` makes: the tag's own type where the DOM names one.
 * @template {string} K
 * @typedef {K extends keyof HTMLElementTagNameMap ? HTMLElementTagNameMap[K] : K extends keyof SVGElementTagNameMap ? SVGElementTagNameMap[K] : HTMLElement} ElementOf
 */

/**
 * h('a', {href: '#/', class: 'link', onclick: fn}, 'text', child, [more], null)
 * Props: `class`, `text`, `dataset`, `on<event>` (a listener), booleans (set when true), the rest
 * as attributes (skipped when null/undefined/false).
 * @template {string} K
 * @param {K} tag
 * @param {Props | null} [props]
 * @param {...Child} children
 * @returns {ElementOf<K>}
 */
export function h(tag, props = {}, ...children) {
  const el =
    tag === 'svg' || tag === 'path' || tag === 'circle'
      ? document.createElementNS('http://www.w3.org/2000/svg', tag)
      : document.createElement(tag);
  for (const [name, value] of Object.entries(props ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === 'class') el.setAttribute('class', Array.isArray(value) ? value.filter(Boolean).join(' ') : String(value));
    else if (name === 'text') el.textContent = String(value);
    else if (name === 'dataset') Object.assign(el.dataset, value);
    else if (name.startsWith('on') && typeof value === 'function') el.addEventListener(name.slice(2), /** @type {EventListener} */ (value));
    else if (name === 'value' && 'value' in el) el.value = value;
    else if (name === 'checked' || name === 'selected') Object.assign(el, { [name]: Boolean(value) });
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return /** @type {ElementOf<K>} */ (el);
}

/**
 * @param {Element} el
 * @param {Child[]} children
 */
function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** @type {(a: Date, b: Date) => boolean} */
const sameDay = (a, b) => a.toDateString() === b.toDateString();
const timeFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
const dateTimeFormat = new Intl.DateTimeFormat(undefined, {
  day: 'numeric',
  month: 'short',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
});
const fullFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/**
 * A <time> showing a short local time (the date too when not today), the full one on hover.
 * @param {string | null | undefined} iso
 * @returns {HTMLElement}
 */
export function time(iso) {
  if (!iso) return h('span', { class: 'muted', text: '—' });
  const date = new Date(iso);
  const text = sameDay(date, new Date()) ? timeFormat.format(date) : dateTimeFormat.format(date);
  return h('time', { datetime: iso, title: `${fullFormat.format(date)} (${iso})` }, text);
}

/** @param {string | null | undefined} iso */
export function fullTime(iso) {
  return iso ? fullFormat.format(new Date(iso)) : '—';
}

/**
 * `1 attempt`, `3 attempts`: the count and the word in the form the count takes.
 * @param {number} count
 * @param {string} singular
 * @param {string} [pluralForm]
 */
export function plural(count, singular, pluralForm = `${singular}s`) {
  return `${count} ${count === 1 ? singular : pluralForm}`;
}

/** @param {number | null | undefined} ms */
export function duration(ms) {
  if (ms === null || ms === undefined) return '—';
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/**
 * Copies text; the Clipboard API needs a secure context, so fall back to a selection copy.
 * @param {string} text
 * @returns {Promise<boolean>}
 */
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = h('textarea', { class: 'visually-hidden', readonly: true }, text);
    document.body.append(area);
    area.select();
    const copied = document.execCommand('copy');
    area.remove();
    return copied;
  }
}

/**
 * Pretty JSON as DOM nodes, keys, strings, numbers and literals in their own spans.
 * @param {unknown} value
 */
export function jsonNodes(value) {
  const text = JSON.stringify(value, null, 2) ?? 'null';
  /** @type {(string | HTMLElement)[]} */
  const nodes = [];
  const token = /("(?:\\.|[^"\\])*")(\s*:)?|\b(true|false|null)\b|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g;
  let last = 0;
  for (const match of text.matchAll(token)) {
    if (match.index > last) nodes.push(text.slice(last, match.index));
    if (match[1]) {
      nodes.push(h('span', { class: match[2] ? 'j-key' : 'j-str' }, match[1]));
      if (match[2]) nodes.push(match[2]);
    } else if (match[3]) nodes.push(h('span', { class: 'j-lit' }, match[3]));
    else nodes.push(h('span', { class: 'j-num' }, match[4]));
    last = match.index + match[0].length;
  }
  nodes.push(text.slice(last));
  return nodes;
}
