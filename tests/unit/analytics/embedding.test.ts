import fc from 'fast-check';
import { cosine, embedDistinct, similarityFromEmbeddings } from '../../../src/analytics/embedding/embedder';
import type { Embedder } from '../../../src/analytics/embedding/embedder';
import { LexicalEmbedder, lexicalEmbed, lexicalEmbedderId, lexicalSimilarity } from '../../../src/analytics/embedding/lexical';
import { AnalyticsError } from '../../../src/analytics/errors';

describe('cosine', () => {
  it('computes u·v/(|u||v|) and 0 for a zero vector', () => {
    expect(cosine([1, 0], [0, 1])).toBe(0);
    expect(cosine([1, 2, 3], [2, 4, 6])).toBeCloseTo(1, 15);
    expect(cosine([1, 2], [-1, -2])).toBeCloseTo(-1, 15);
    expect(cosine([3, 4], [4, 3])).toBeCloseTo(24 / 25, 15);
    expect(cosine([0, 0], [1, 1])).toBe(0);
    expect(() => cosine([1], [1, 2])).toThrow(AnalyticsError);
  });
});

describe('lexical embedder', () => {
  it('is deterministic, unit-length and accent-preserving', () => {
    const a = lexicalEmbed('Střední');
    expect(lexicalEmbed('Střední')).toEqual(a);
    expect(lexicalEmbed('  STŘEDNÍ ')).toEqual(a);
    let norm = 0;
    for (const x of a) norm += x * x;
    expect(norm).toBeCloseTo(1, 6);
    expect(cosine(a, lexicalEmbed('Stredni'))).toBeLessThan(0.999);
    expect(a.length).toBe(1024);
  });

  it('ranks spelling variants above unrelated terms', () => {
    const sim = lexicalSimilarity();
    expect(sim('Leukaemia', 'Leukemia')).toBeGreaterThan(sim('Leukaemia', 'Bladder'));
    expect(sim('Resection', 'Resectie')).toBeGreaterThan(sim('Resection', 'Biopsy'));
    expect(sim('liver', 'liver')).toBe(1);
    expect(sim('', 'liver')).toBe(0);
  });

  it('gives very short texts a feature of their own', () => {
    const a = lexicalEmbed('a', { minN: 4, maxN: 5 });
    const b = lexicalEmbed('b', { minN: 4, maxN: 5 });
    expect(a.some((x) => x !== 0)).toBe(true);
    expect(cosine(a, b)).toBeLessThan(1);
  });

  it('similarity is symmetric and within [0, 1] (non-negative counts)', () => {
    const sim = lexicalSimilarity({ dim: 64 });
    fc.assert(
      fc.property(fc.string(), fc.string(), (x, y) => {
        const s = sim(x, y);
        return s === sim(y, x) && s >= 0 && s <= 1 + 1e-12;
      }),
    );
  });

  it('records its identity and implements Embedder', async () => {
    const e = new LexicalEmbedder({ dim: 256 });
    expect(e.id).toEqual({ provider: 'lexical', model: 'char-ngram-3-5-fnv1a-256' });
    expect(lexicalEmbedderId()).toEqual({ provider: 'lexical', model: 'char-ngram-3-5-fnv1a-1024' });
    const [v] = await e.embed(['liver']);
    expect(v).toEqual(e.embedSync('liver'));
    expect(() => new LexicalEmbedder({ minN: 4, maxN: 3 })).toThrow(AnalyticsError);
  });
});

describe('precomputed embeddings', () => {
  it('embeds each distinct text once and looks pairs up synchronously', async () => {
    const calls: string[][] = [];
    const fake: Embedder = {
      id: { provider: 'fake', model: 'm' },
      embed: (texts) => {
        calls.push(texts);
        return Promise.resolve(texts.map((t) => Float32Array.from([t.length, 1])));
      },
    };
    const map = await embedDistinct(fake, ['ab', 'abc', 'ab', 'x'], 2);
    expect(calls).toEqual([['ab', 'abc'], ['x']]);
    const sim = similarityFromEmbeddings(map);
    expect(sim('ab', 'abc')).toBeCloseTo(cosine([2, 1], [3, 1]), 6);
    expect(sim('ab', 'ab')).toBe(1);
    expect(() => sim('ab', 'zz')).toThrow(AnalyticsError);
  });

  it('rejects a provider that returns the wrong number of vectors', async () => {
    const bad: Embedder = { id: { provider: 'bad', model: 'm' }, embed: () => Promise.resolve([]) };
    await expect(embedDistinct(bad, ['a'])).rejects.toThrow(AnalyticsError);
  });
});
