/**
 * Self-consistency aggregation of k samples, per variable, over NORMALISED cells (so "yes", "Yes"
 * and true vote together, and 10, "10" and 10.0 too):
 *
 * - CATEGORICAL, BINARY, NUMERIC, EXACT_STRING: majority vote over VALUE and MISSING cells
 *   (MISSING is a value in its own right); the winner needs at least two votes and a strict
 *   lead. Without one, the embedding medoid of the VALUE cells decides (the extraction paper's
 *   rule, where a value without a second vote falls back to semantic centrality).
 * - FREE_TEXT, LIST: MISSING wins when more samples say MISSING than give a value; otherwise the
 *   medoid of the VALUE cells (exact duplicates pull the medoid towards themselves).
 * - Medoid: the candidate with the largest summed cosine similarity to the other candidates
 *   (lists embedded as their items joined by "; "); ties go to the earliest sample.
 * - No VALUE and no MISSING cell (every sample invalid or failed): the most frequent invalid
 *   category, from the earliest sample carrying it.
 */
import { cosine } from '../analytics/embedding/embedder';
import { LexicalEmbedder } from '../analytics/embedding/lexical';
import type { NormalisedCell, VariableSpec } from '../analytics/types';
import type { EmbedFn } from './types';

export type AggregationMethod = 'VOTE' | 'MEDOID' | 'MISSING_MAJORITY' | 'ONLY_MISSING' | 'ALL_INVALID' | 'NO_SAMPLES';

export interface AggregateOutcome {
  cell: NormalisedCell;
  /** index of the sample whose answer was taken, or null when no sample had one */
  winner: number | null;
  method: AggregationMethod;
}

const defaultEmbedder = new LexicalEmbedder();

/** The built-in lexical embedder as an EmbedFn (deterministic, no model weights). */
export const lexicalEmbedFn: EmbedFn = (texts) => defaultEmbedder.embed(texts);

function voteKey(cell: NormalisedCell): string | null {
  if (cell.status === 'MISSING') return 'M';
  if (cell.status !== 'VALUE') return null;
  return 'V' + JSON.stringify(cell.value);
}

function textOf(value: string | number | string[]): string {
  return Array.isArray(value) ? value.join('; ') : String(value);
}

/** Index (into `texts`) of the medoid; ties → lowest index. */
export async function medoidIndex(texts: readonly string[], embed: EmbedFn): Promise<number> {
  if (texts.length <= 1) return 0;
  const distinct = [...new Set(texts)];
  const vectors = await embed(distinct);
  const byText = new Map(distinct.map((t, i) => [t, vectors[i]!] as const));
  let best = 0;
  let bestScore = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < texts.length; i++) {
    let s = 0;
    for (let j = 0; j < texts.length; j++) {
      if (i === j) continue;
      s += texts[i] === texts[j] ? 1 : cosine(byText.get(texts[i]!)!, byText.get(texts[j]!)!);
    }
    if (s > bestScore + 1e-12) {
      bestScore = s;
      best = i;
    }
  }
  return best;
}

/** Aggregates one variable's cells over the samples (undefined = the sample failed). */
export async function aggregateCells(
  spec: VariableSpec,
  cells: readonly (NormalisedCell | undefined)[],
  embed: EmbedFn = lexicalEmbedFn,
): Promise<AggregateOutcome> {
  const present = cells.map((c, i) => ({ c, i })).filter((x): x is { c: NormalisedCell; i: number } => x.c !== undefined);
  if (present.length === 0) {
    return { cell: { status: 'INVALID', category: 'MISSING', detail: 'no sample answered' }, winner: null, method: 'NO_SAMPLES' };
  }
  const values = present.filter((x) => x.c.status === 'VALUE');
  const missing = present.filter((x) => x.c.status === 'MISSING');
  const textual = spec.type === 'FREE_TEXT' || spec.type === 'LIST';

  if (!textual) {
    const counts = new Map<string, { n: number; first: number }>();
    for (const { c, i } of present) {
      const k = voteKey(c);
      if (k === null) continue;
      const e = counts.get(k);
      if (e) e.n++;
      else counts.set(k, { n: 1, first: i });
    }
    const ranked = [...counts.values()].sort((a, b) => b.n - a.n || a.first - b.first);
    const top = ranked[0];
    if (top && top.n >= 2 && (ranked.length === 1 || ranked[1]!.n < top.n)) {
      return { cell: cells[top.first]!, winner: top.first, method: 'VOTE' };
    }
  } else if (missing.length > values.length) {
    return { cell: missing[0]!.c, winner: missing[0]!.i, method: 'MISSING_MAJORITY' };
  }

  if (values.length > 0) {
    const texts = values.map((x) => textOf((x.c as { value: string | number | string[] }).value));
    const m = await medoidIndex(texts, embed);
    return { cell: values[m]!.c, winner: values[m]!.i, method: 'MEDOID' };
  }
  if (missing.length > 0) return { cell: missing[0]!.c, winner: missing[0]!.i, method: 'ONLY_MISSING' };

  const byCategory = new Map<string, { n: number; first: number }>();
  for (const { c, i } of present) {
    if (c.status !== 'INVALID') continue;
    const e = byCategory.get(c.category);
    if (e) e.n++;
    else byCategory.set(c.category, { n: 1, first: i });
  }
  const worst = [...byCategory.values()].sort((a, b) => b.n - a.n || a.first - b.first)[0]!;
  return { cell: cells[worst.first]!, winner: worst.first, method: 'ALL_INVALID' };
}
