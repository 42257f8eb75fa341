/** Percentile by nearest rank on a copy (p in 0..100). NaN for no values. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

export function mean(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  let sum = 0;
  for (const value of values) sum += value;
  return sum / values.length;
}

export function max(values: readonly number[]): number {
  let best = Number.NEGATIVE_INFINITY;
  for (const value of values) if (value > best) best = value;
  return values.length ? best : Number.NaN;
}

export function min(values: readonly number[]): number {
  let best = Number.POSITIVE_INFINITY;
  for (const value of values) if (value < best) best = value;
  return values.length ? best : Number.NaN;
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

export interface Distribution {
  count: number;
  mean: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export function distribution(values: readonly number[]): Distribution {
  return {
    count: values.length,
    mean: round(mean(values), 2),
    p50: round(percentile(values, 50), 2),
    p95: round(percentile(values, 95), 2),
    p99: round(percentile(values, 99), 2),
    max: round(max(values), 2),
  };
}

export function round(value: number, digits = 0): number {
  if (!Number.isFinite(value)) return value;
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
