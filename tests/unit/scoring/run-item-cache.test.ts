import { itemColumn, RunItemCache, validColumn, type RunItems } from '../../../src/modules/scoring/run-item-cache';

describe('RunItemCache', () => {
  const entry = (): RunItems => ({ scores: Float64Array.of(1, 0, 0.5, 0, 1, 1), valid: Uint8Array.of(1, 1, 0, 1, 0, 1), reports: 3 });

  it('keeps item scores in columns, one view per variable', () => {
    const items = entry();
    expect([...itemColumn(items, 1)]).toEqual([0, 1, 1]);
    expect([...validColumn(items, 0)]).toEqual([1, 1, 0]);
  });

  it('stays within its byte budget, least recently used out first', () => {
    const size = entry().scores.byteLength + entry().valid.byteLength + 128;
    const cache = new RunItemCache(3 * size);
    for (const key of ['a', 'b', 'c']) cache.set(key, entry());
    expect(cache.get('a')).toBeDefined();
    cache.set('d', entry());
    expect(cache.size).toBe(3);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBeDefined();
    expect(cache.get('d')).toBeDefined();
    expect(cache.usedBytes).toBe(3 * size);
    cache.set('a', entry());
    expect(cache.usedBytes).toBe(3 * size);
  });

  it('does not keep an entry larger than the whole budget', () => {
    const cache = new RunItemCache(10);
    cache.set('a', entry());
    expect(cache.size).toBe(0);
    expect(cache.usedBytes).toBe(0);
  });
});
