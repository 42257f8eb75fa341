import { jsonDepth, MAX_JSON_DEPTH } from './json-depth';

describe('jsonDepth', () => {
  it.each<[unknown, number]>([
    [1, 0],
    ['text', 0],
    [null, 0],
    [{}, 1],
    [[], 1],
    [{ a: 1, b: [1, 2] }, 2],
    [{ a: { b: { c: [{}] } } }, 5],
  ])('measures %j as %i deep', (value, depth) => {
    expect(jsonDepth(value)).toBe(depth);
  });

  it('measures 100,000 levels without a stack overflow', () => {
    const deep = JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`) as unknown;
    expect(jsonDepth(deep)).toBe(100_000);
  });

  it('stops counting soon after the limit it is given', () => {
    const deep = JSON.parse(`${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}`) as unknown;
    expect(jsonDepth(deep, MAX_JSON_DEPTH)).toBe(MAX_JSON_DEPTH + 1);
  });
});
