// DOM helpers. The dashboard never turns strings into HTML (the page runs under Trusted Types):
// every element is built here, and text always goes in as text.

/**
 * h('a', {href: '#/', class: 'link', onclick: fn}, 'text', child, [more], null)
 * Props: `class`, `text`, `dataset`, `on<event>` (a listener), booleans (set when true), the rest
 * as attributes (skipped when null/undefined/false).
 */
export function h(tag, props = {}, ...children) {
  const el =
    tag === 'svg' || tag === 'path' || tag === 'circle'
      ? document.createElementNS('http://www.w3.org/2000/svg', tag)
      : document.createElement(tag);
  for (const [name, value] of Object.entries(props ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === 'class') el.setAttribute('class', Array.isArray(value) ? value.filter(Boolean).join(' ') : value);
    else if (name === 'text') el.textContent = String(value);
    else if (name === 'dataset') Object.assign(el.dataset, value);
    else if (name.startsWith('on') && typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (name === 'value' && 'value' in el) el.value = value;
    else if (name === 'checked' || name === 'selected') el[name] = Boolean(value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

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

/** A <time> showing a short local time (the date too when not today), the full one on hover. */
export function time(iso) {
  if (!iso) return h('span', { class: 'muted', text: '—' });
  const date = new Date(iso);
  const text = sameDay(date, new Date()) ? timeFormat.format(date) : dateTimeFormat.format(date);
  return h('time', { datetime: iso, title: `${fullFormat.format(date)} (${iso})` }, text);
}

export function fullTime(iso) {
  return iso ? fullFormat.format(new Date(iso)) : '—';
}

/** `1 attempt`, `3 attempts`: the count and the word in the form the count takes. */
export function plural(count, singular, pluralForm = `${singular}s`) {
  return `${count} ${count === 1 ? singular : pluralForm}`;
}

export function duration(ms) {
  if (ms === null || ms === undefined) return '—';
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/** Copies text; the Clipboard API needs a secure context, so fall back to a selection copy. */
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

/** Pretty JSON as DOM nodes, keys, strings, numbers and literals in their own spans. */
export function jsonNodes(value) {
  const text = JSON.stringify(value, null, 2) ?? 'null';
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
