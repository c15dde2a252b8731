/**
 * The embedding-provider contract (docs/scoring.md §2 "Embedding providers") and the synchronous
 * similarity lookup that scoring functions take, so the heavy math never awaits.
 */
import { AnalyticsError } from '../errors';

/** Which provider and model produced an embedding; every similarity-based score records it. */
export interface EmbedderId {
  provider: string;
  model: string;
}

/**
 * An embedding provider: the built-in lexical embedder, or an OpenAI-compatible `/v1/embeddings`
 * endpoint implemented outside the analytics layer. `embed` returns one vector per input text,
 * in input order.
 */
export interface Embedder {
  readonly id: EmbedderId;
  embed(texts: string[]): Promise<Float32Array[]>;
}

/** Similarity of two normalised strings, symmetric, in [-1, 1]. Scoring calls only this. */
export type SimilarityLookup = (a: string, b: string) => number;

/**
 * Cosine similarity u·v / (‖u‖‖v‖), accumulated in double precision and clamped to [-1, 1].
 * A zero vector has similarity 0 with everything. O(d).
 *
 * @throws AnalyticsError LENGTH_MISMATCH when the dimensions differ.
 */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) {
    throw new AnalyticsError('LENGTH_MISMATCH', `cosine: dimensions ${a.length} and ${b.length} differ`);
  }
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  if (na === 0 || nb === 0) return 0;
  const c = dot / Math.sqrt(na * nb);
  return c > 1 ? 1 : c < -1 ? -1 : c;
}

/**
 * A {@link SimilarityLookup} over precomputed embeddings keyed by text. Identical strings have
 * similarity 1 without a lookup (docs/scoring.md §2). Pair results are memoised.
 *
 * @throws AnalyticsError BAD_INPUT (when called) for a text that has no embedding.
 */
export function similarityFromEmbeddings(embeddings: ReadonlyMap<string, ArrayLike<number>>): SimilarityLookup {
  const memo = new Map<string, number>();
  return (a, b) => {
    if (a === b) return 1;
    const key = a < b ? `${a}\u0000${b}` : `${b}\u0000${a}`;
    const hit = memo.get(key);
    if (hit !== undefined) return hit;
    const ea = embeddings.get(a);
    const eb = embeddings.get(b);
    if (ea === undefined || eb === undefined) {
      throw new AnalyticsError('BAD_INPUT', `no embedding for ${JSON.stringify(ea === undefined ? a : b)}`);
    }
    const s = cosine(ea, eb);
    memo.set(key, s);
    return s;
  };
}

/**
 * Embed each distinct text once (order of first appearance) and return text → vector. This is
 * the single await before synchronous scoring.
 *
 * @throws AnalyticsError BAD_INPUT when the provider returns the wrong number of vectors.
 */
export async function embedDistinct(
  embedder: Embedder,
  texts: Iterable<string>,
  batchSize = 256,
): Promise<Map<string, Float32Array>> {
  const distinct = [...new Set(texts)];
  const out = new Map<string, Float32Array>();
  for (let i = 0; i < distinct.length; i += batchSize) {
    const batch = distinct.slice(i, i + batchSize);
    const vectors = await embedder.embed(batch);
    if (vectors.length !== batch.length) {
      throw new AnalyticsError('BAD_INPUT', `embedder returned ${vectors.length} vectors for ${batch.length} texts`);
    }
    batch.forEach((t, j) => out.set(t, vectors[j]!));
  }
  return out;
}
