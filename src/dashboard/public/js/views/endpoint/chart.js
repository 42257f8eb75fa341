// The endpoint's latest deliveries over time: an inline SVG of stacked bars (succeeded, failed,
// pending) over a band of their response times (median and 95th percentile of each bar), drawn
// with DOM calls and coloured by the stylesheet (the CSP allows no inline style).
import { duration, plural } from '../../dom.js';

const SVG = 'http://www.w3.org/2000/svg';
const BARS = 12;
const WIDTH = 1000;
/** The bars' plot, then the response times' band below it, then the time labels. */
const PLOT = 138;
const BAND_TOP = PLOT + 34;
const BAND = 70;
const HEIGHT = BAND_TOP + BAND + 22;
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
 * The value below which `p` of `sorted` lie (nearest rank): with few values, the 95th percentile
 * is the largest, never a value between two that no attempt took.
 * @param {number[]} sorted Ascending, not empty.
 * @param {number} p Between 0 and 1.
 */
export function percentile(sorted, p) {
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)];
}

/**
 * The median and 95th percentile of the last attempts' durations; null when none has one.
 * @param {import('../../api.js').Delivery[]} deliveries
 */
export function responseTimes(deliveries) {
  const sorted = deliveries
    .map((delivery) => delivery.lastDurationMs)
    .filter((ms) => ms !== null && ms !== undefined)
    .sort((a, b) => a - b);
  return sorted.length ? { median: percentile(sorted, 0.5), p95: percentile(sorted, 0.95) } : null;
}

/** A round top for the response-time scale (1, 2 or 5 times a power of ten), at least 10 ms. */
function scaleTop(/** @type {number} */ ms) {
  const power = 10 ** Math.floor(Math.log10(Math.max(ms, 10)));
  return [1, 2, 5, 10].map((step) => step * power).find((top) => top >= ms) ?? 10 * power;
}

/**
 * The counts of each status in BARS equal slices of the time from the oldest delivery to now,
 * and the deliveries of each.
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
    /** @type {import('../../api.js').Delivery[]} */
    deliveries: [],
  }));
  deliveries.forEach((delivery, i) => {
    const index = Math.min(BARS - 1, Math.max(0, Math.floor((times[i] - start) / step)));
    buckets[index][delivery.status] += 1;
    buckets[index].deliveries.push(delivery);
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
  const slot = WIDTH / BARS;
  const count = (/** @type {import('../../api.js').DeliveryStatus} */ status) => deliveries.filter((d) => d.status === status).length;
  const overall = responseTimes(deliveries);
  const summary =
    deliveries.length === 0
      ? 'No deliveries yet.'
      : `${plural(deliveries.length, 'delivery', 'deliveries')} since ${clock(buckets[0].from)}: ` +
        `${count('succeeded')} succeeded, ${count('failed')} failed, ${count('pending')} pending. ` +
        (overall
          ? `Response time of their last attempts: median ${duration(overall.median)}, 95th percentile ${duration(overall.p95)}.`
          : 'No response times yet.');

  const times = buckets.map((bucket) => responseTimes(bucket.deliveries));
  const top = scaleTop(Math.max(0, ...times.map((t) => t?.p95 ?? 0)));
  const y = (/** @type {number} */ ms) => BAND_TOP + BAND - (ms / top) * BAND;
  const centre = (/** @type {number} */ i) => slot * i + slot / 2;

  const bars = buckets.map((bucket, i) => {
    let barTop = PLOT;
    const rects = STACK.filter((status) => bucket[status] > 0).map((status) => {
      const height = (bucket[status] / most) * (PLOT - 4);
      barTop -= height;
      return svg('rect', { class: `chart-${status}`, x: slot * 0.15, y: barTop, width: slot * 0.7, height, rx: 2 });
    });
    const total = bucket.succeeded + bucket.failed + bucket.pending;
    const rt = times[i];
    const text =
      `${clock(bucket.from)}–${clock(bucket.to)}: ${total ? STACK.map((s) => `${bucket[s]} ${s}`).join(', ') : 'none'}` +
      (rt ? `; response time median ${duration(rt.median)}, 95th percentile ${duration(rt.p95)}` : '');
    const points = rt
      ? [
          svg('circle', { class: 'chart-p95', cx: slot / 2, cy: y(rt.p95), r: 4 }),
          svg('circle', { class: 'chart-median', cx: slot / 2, cy: y(rt.median), r: 5 }),
        ]
      : [];
    // The whole column answers a pointer with its title, the gaps between marks too.
    const hit = svg('rect', { class: 'chart-hit', x: 0, y: 0, width: slot, height: BAND_TOP + BAND });
    return svg('g', { class: 'chart-bar', transform: `translate(${slot * i} 0)` }, svg('title', {}, text), hit, ...rects, ...points);
  });

  /** Lines through the buckets that have response times, broken where one has none. */
  const lines = (/** @type {'median' | 'p95'} */ which) => {
    /** @type {string[][]} */
    const runs = [[]];
    times.forEach((rt, i) => {
      if (rt) runs[runs.length - 1].push(`${centre(i)},${y(rt[which])}`);
      else if (runs[runs.length - 1].length) runs.push([]);
    });
    return runs.filter((run) => run.length > 1).map((run) => svg('polyline', { class: `chart-line-${which}`, points: run.join(' ') }));
  };

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
        svg('line', { class: 'chart-axis', x1: 0, y1: PLOT + 0.5, x2: WIDTH, y2: PLOT + 0.5 }),
        svg('text', { class: 'chart-label', x: 0, y: BAND_TOP - 8 }, 'Response time'),
        svg('text', { class: 'chart-label', x: WIDTH, y: BAND_TOP - 8, 'text-anchor': 'end' }, `0–${duration(top)}`),
        svg('line', { class: 'chart-grid', x1: 0, y1: BAND_TOP + 0.5, x2: WIDTH, y2: BAND_TOP + 0.5 }),
        svg('line', { class: 'chart-axis', x1: 0, y1: BAND_TOP + BAND + 0.5, x2: WIDTH, y2: BAND_TOP + BAND + 0.5 }),
        ...lines('p95'),
        ...lines('median'),
        ...bars,
        svg('text', { class: 'chart-label', x: 0, y: HEIGHT - 3 }, clock(buckets[0].from)),
        svg('text', { class: 'chart-label', x: WIDTH, y: HEIGHT - 3, 'text-anchor': 'end' }, 'now'),
      )
    )
  );
}
