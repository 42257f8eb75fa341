// The endpoint's latest deliveries over time: an inline SVG of stacked bars (succeeded, failed,
// pending), drawn with DOM calls and coloured by the stylesheet (the CSP allows no inline style).
import { plural } from '../../dom.js';

const SVG = 'http://www.w3.org/2000/svg';
const BARS = 12;
const WIDTH = 1000;
const HEIGHT = 160;
const AXIS = 22;
const MIN_SPAN_MS = 60_000;
/** @type {import('../../api.js').DeliveryStatus[]} */
const STACK = ['succeeded', 'failed', 'pending'];

/**
 * @param {string} name
 * @param {Record<string, string | number>} attributes
 * @param {...(Node | string)} children
 */
function svg(name, attributes, ...children) {
  const element = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, String(value));
  element.append(...children);
  return element;
}

/** @param {number} ms */
const clock = (ms) => new Date(ms).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });

/**
 * The counts of each status in BARS equal slices of the time from the oldest delivery to now.
 * @param {import('../../api.js').Delivery[]} deliveries
 * @param {number} now
 */
export function bucketDeliveries(deliveries, now) {
  const times = deliveries.map((delivery) => Date.parse(delivery.createdAt));
  const start = Math.min(...times, now - MIN_SPAN_MS);
  const step = (now - start) / BARS || 1;
  const buckets = Array.from({ length: BARS }, (_, i) => ({
    from: start + i * step,
    to: start + (i + 1) * step,
    succeeded: 0,
    failed: 0,
    pending: 0,
  }));
  deliveries.forEach((delivery, i) => {
    const index = Math.min(BARS - 1, Math.max(0, Math.floor((times[i] - start) / step)));
    buckets[index][delivery.status] += 1;
  });
  return buckets;
}

/**
 * @param {import('../../api.js').Delivery[]} deliveries The latest, newest first.
 * @returns {SVGSVGElement}
 */
export function deliveryChart(deliveries, now = Date.now()) {
  const buckets = bucketDeliveries(deliveries, now);
  const most = Math.max(1, ...buckets.map((b) => b.succeeded + b.failed + b.pending));
  const plot = HEIGHT - AXIS;
  const slot = WIDTH / BARS;
  const count = (/** @type {import('../../api.js').DeliveryStatus} */ status) => deliveries.filter((d) => d.status === status).length;
  const summary =
    deliveries.length === 0
      ? 'No deliveries yet.'
      : `${plural(deliveries.length, 'delivery', 'deliveries')} since ${clock(buckets[0].from)}: ` +
        `${count('succeeded')} succeeded, ${count('failed')} failed, ${count('pending')} pending.`;

  const bars = buckets.map((bucket, i) => {
    let top = plot;
    const rects = STACK.filter((status) => bucket[status] > 0).map((status) => {
      const height = (bucket[status] / most) * (plot - 4);
      top -= height;
      return svg('rect', { class: `chart-${status}`, x: slot * 0.15, y: top, width: slot * 0.7, height, rx: 2 });
    });
    const total = bucket.succeeded + bucket.failed + bucket.pending;
    const text = `${clock(bucket.from)}–${clock(bucket.to)}: ${total ? STACK.map((s) => `${bucket[s]} ${s}`).join(', ') : 'none'}`;
    return svg('g', { class: 'chart-bar', transform: `translate(${slot * i} 0)` }, svg('title', {}, text), ...rects);
  });

  return /** @type {SVGSVGElement} */ (
    /** @type {unknown} */ (
      svg(
        'svg',
        {
          class: 'delivery-chart',
          viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
          role: 'img',
          'aria-label': `Latest deliveries over time. ${summary}`,
        },
        svg('line', { class: 'chart-axis', x1: 0, y1: plot + 0.5, x2: WIDTH, y2: plot + 0.5 }),
        ...bars,
        svg('text', { class: 'chart-label', x: 0, y: HEIGHT - 3 }, clock(buckets[0].from)),
        svg('text', { class: 'chart-label', x: WIDTH, y: HEIGHT - 3, 'text-anchor': 'end' }, 'now'),
      )
    )
  );
}
