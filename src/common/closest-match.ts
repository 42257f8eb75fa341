/**
 * The candidate nearest to `input` for a "did you mean …?" hint, or undefined when none is near
 * enough to be a plausible typo. Case is ignored; the distance is Damerau-Levenshtein (optimal
 * string alignment: an insertion, deletion, substitution or swap of neighbours costs 1), and a
 * candidate counts when it is at most a quarter of the input's length away (at least 1, at most 3).
 * On a tie the first candidate wins, so the caller's order decides.
 */
export function closestMatch(input: string, candidates: readonly string[]): string | undefined {
  const wanted = input.toLowerCase();
  const allowed = Math.min(3, Math.max(1, Math.floor(wanted.length / 4)));
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    // A length gap alone larger than what is allowed can never come back under it.
    if (Math.abs(candidate.length - wanted.length) > allowed) continue;
    const distance = editDistance(wanted, candidate.toLowerCase());
    if (distance <= allowed && (!best || distance < best.distance)) best = { candidate, distance };
  }
  return best?.candidate;
}

/** Optimal string alignment distance between `a` and `b`. */
export function editDistance(a: string, b: string): number {
  // Three rows of the dynamic programme suffice: a swap looks two rows back.
  let beforePrevious: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, beforePrevious[j - 2] + 1);
      current.push(value);
    }
    beforePrevious = previous;
    previous = current;
  }
  return previous[b.length];
}
