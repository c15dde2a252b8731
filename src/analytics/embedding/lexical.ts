/**
 * Built-in deterministic lexical embedder (docs/scoring.md §2): hashed character n-grams, no model
 * weights, identical output on every machine. It captures spelling overlap (Leukaemia /
 * Leukemia, Resectie / Resection), not meaning (GIST / gastro-intestinal stromal tumour).
 */
import { AnalyticsError } from '../errors';
import type { Embedder, EmbedderId, SimilarityLookup } from './embedder';
import { cosine } from './embedder';

export interface LexicalOptions {
  /** Smallest n-gram length in code points (default 3). */
  minN?: number;
  /** Largest n-gram length in code points (default 5). */
  maxN?: number;
  /** Vector dimension; n-grams are hashed into it (default 1024). */
  dim?: number;
}

const DEFAULTS = { minN: 3, maxN: 5, dim: 1024 } as const;

function resolve(opts?: LexicalOptions): Required<LexicalOptions> {
  const o = { ...DEFAULTS, ...opts };
  if (!Number.isInteger(o.minN) || !Number.isInteger(o.maxN) || o.minN < 1 || o.maxN < o.minN) {
    throw new AnalyticsError('BAD_INPUT', `lexical embedder: need integers 1 <= minN <= maxN, got ${o.minN}, ${o.maxN}`);
  }
  if (!Number.isInteger(o.dim) || o.dim < 1) {
    throw new AnalyticsError('BAD_INPUT', `lexical embedder: dim must be a positive integer, got ${o.dim}`);
  }
  return o;
}

/** The provider/model identity recorded with scores made by these options. */
export function lexicalEmbedderId(opts?: LexicalOptions): EmbedderId {
  const o = resolve(opts);
  return { provider: 'lexical', model: `char-ngram-${o.minN}-${o.maxN}-fnv1a-${o.dim}` };
}

/**
 * Embed one text: NFC, lower-cased (diacritics kept), whitespace collapsed and padded with one
 * space on each side; every character n-gram (minN..maxN code points) is hashed with 32-bit
 * FNV-1a over its UTF-16 code units into `dim` buckets of counts; the vector is L2-normalised.
 * An empty text gives the zero vector (cosine 0 with everything). O(length × (maxN − minN + 1)
 * × maxN + dim).
 *
 * @throws AnalyticsError BAD_INPUT on invalid options.
 */
export function lexicalEmbed(text: string, opts?: LexicalOptions): Float32Array {
  const { minN, maxN, dim } = resolve(opts);
  const v = new Float64Array(dim);
  const folded = text.normalize('NFC').toLowerCase().replace(/\s+/g, ' ').trim();
  if (folded !== '') {
    const units = Array.from(` ${folded} `);
    const hashInto = (start: number, end: number): void => {
      let h = 0x811c9dc5;
      for (let k = start; k < end; k++) {
        const s = units[k]!;
        for (let u = 0; u < s.length; u++) h = Math.imul(h ^ s.charCodeAt(u), 0x01000193);
      }
      v[(h >>> 0) % dim]! += 1;
    };
    // A padded text shorter than minN still needs a feature, else it would embed like "".
    if (units.length < minN) hashInto(0, units.length);
    for (let n = minN; n <= maxN; n++) {
      for (let start = 0; start + n <= units.length; start++) hashInto(start, start + n);
    }
  }
  let norm = 0;
  for (let i = 0; i < dim; i++) norm += v[i]! * v[i]!;
  const out = new Float32Array(dim);
  if (norm > 0) {
    const inv = 1 / Math.sqrt(norm);
    for (let i = 0; i < dim; i++) out[i] = v[i]! * inv;
  }
  return out;
}

/** The lexical embedder behind the {@link Embedder} interface (resolves synchronously computed vectors). */
export class LexicalEmbedder implements Embedder {
  readonly id: EmbedderId;
  private readonly opts: Required<LexicalOptions>;

  constructor(opts?: LexicalOptions) {
    this.opts = resolve(opts);
    this.id = lexicalEmbedderId(this.opts);
  }

  embed(texts: string[]): Promise<Float32Array[]> {
    return Promise.resolve(texts.map((t) => lexicalEmbed(t, this.opts)));
  }

  /** Synchronous embedding, for callers that need no provider abstraction. */
  embedSync(text: string): Float32Array {
    return lexicalEmbed(text, this.opts);
  }
}

/**
 * A memoising {@link SimilarityLookup} backed by the lexical embedder, for synchronous scoring
 * without a precomputation step. Identical strings → 1 without embedding.
 */
export function lexicalSimilarity(opts?: LexicalOptions): SimilarityLookup {
  const o = resolve(opts);
  const cache = new Map<string, Float32Array>();
  const get = (t: string): Float32Array => {
    let e = cache.get(t);
    if (e === undefined) {
      e = lexicalEmbed(t, o);
      cache.set(t, e);
    }
    return e;
  };
  return (a, b) => (a === b ? 1 : cosine(get(a), get(b)));
}
