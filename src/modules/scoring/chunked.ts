import { createHash } from 'node:crypto';
import { bootstrapMultiplicities, multiplicityRows, type BootstrapGridResult } from '../../analytics/bootstrap';
import { rankIntervalSteps, type RankIntervalOptions } from '../../analytics/rank-intervals';
import { TimeSlices, yieldToEventLoop } from '../../event-loop';

/*
 * Statistics of a paper-sized study take seconds of CPU. Computed in slices with a turn of the
 * event loop between them, other requests are served meanwhile instead of waiting for the whole
 * computation. Slicing changes no number: runs are independent in the grid, replicates in the
 * rank intervals.
 */

/** Multiplicities drawn per slice of bootstrapMultiplicitiesInSlices (~10 ms). */
const DRAWS_PER_SLICE = 1 << 20;

/**
 * Whether `multiplicityRows(n, seed)` draws bootstrapMultiplicities(n, B, seed) row by row:
 * arguments it accepts, on its 32-bit path. Others go to bootstrapMultiplicities itself, which
 * checks and rejects them (or takes its wide path).
 */
export function drawnByRows(n: number, B: number, seed: number): boolean {
  return Number.isSafeInteger(n) && Number.isSafeInteger(B) && Number.isSafeInteger(seed) && n >= 1 && B >= 1 && n - 1 <= 0xffffffff;
}

/**
 * bootstrapMultiplicities(n, B, seed), bit for bit, drawn a slice of rows at a time: at 20,000
 * reports × 1000 resamples the matrix is 20 million draws, too long for one turn of the loop.
 */
export async function bootstrapMultiplicitiesInSlices(n: number, B: number, seed: number): Promise<Int32Array> {
  const rowsPerSlice = Math.max(1, Math.floor(DRAWS_PER_SLICE / Math.max(n, 1)));
  if (n * B <= DRAWS_PER_SLICE || !drawnByRows(n, B, seed)) {
    // Small, or arguments that bootstrapMultiplicities itself checks and rejects.
    return bootstrapMultiplicities(n, B, seed);
  }
  const w = new Int32Array(B * n);
  const rows = multiplicityRows(n, seed);
  for (let from = 0; from < B; from += rowsPerSlice) {
    rows.fill(w, from, Math.min(B, from + rowsPerSlice));
    await yieldToEventLoop();
  }
  return w;
}

/** Time a slice of hashing aims at. */
const DIGEST_SLICE_MS = 20;

/**
 * SHA-256 (hex) of `head` and `rows` as JSON, a row at a time with a turn of the event loop
 * about every DIGEST_SLICE_MS: the reference values of 20,000 reports × 16 variables take
 * ~200 ms to serialise. Rows are separated by newlines, which JSON text never contains, so
 * different rows never give the same input to the hash.
 */
export async function jsonDigestInSlices(head: unknown, rows: readonly unknown[]): Promise<string> {
  const hash = createHash('sha256').update(JSON.stringify(head));
  const slices = new TimeSlices(DIGEST_SLICE_MS);
  for (const row of rows) {
    hash.update('\n').update(JSON.stringify(row) ?? 'undefined');
    await slices.pause();
  }
  return hash.digest('hex');
}

/** Time one slice of rank-interval replicates aims at; the number per slice follows from it. */
const RANK_SLICE_MS = 20;

/**
 * Concatenates grids of different runs over the same variables and resamples; `allocate` makes
 * the arrays of the replicates (e.g. in memory that statistics threads share).
 */
export function concatGrids(
  parts: BootstrapGridResult[],
  allocate: (length: number) => Float64Array = (length) => new Float64Array(length),
): BootstrapGridResult {
  const first = parts[0]!;
  if (parts.length === 1) return first;
  const concat = (arrays: Float64Array[], into: (length: number) => Float64Array = (length) => new Float64Array(length)) => {
    const out = into(arrays.reduce((n, a) => n + a.length, 0));
    let offset = 0;
    for (const a of arrays) {
      out.set(a, offset);
      offset += a.length;
    }
    return out;
  };
  return {
    ...first,
    runIds: parts.flatMap((p) => p.runIds),
    perVariable: parts.flatMap((p) => p.perVariable),
    macro: parts.flatMap((p) => p.macro),
    points: concat(parts.map((p) => p.points)),
    macroPoints: concat(parts.map((p) => p.macroPoints)),
    replicates: concat(parts.map((p) => p.replicates), allocate),
    macroReplicates: concat(parts.map((p) => p.macroReplicates), allocate),
  };
}

export interface RankIntervalSlices {
  /** candidate × voter × replicate, replicate fastest. */
  data: Float64Array;
  /** candidate × replicate. */
  macro: Float64Array;
  candidates: number;
  voters: number;
  replicates: number;
}

/**
 * kemenyRankIntervals with a turn of the event loop about every RANK_SLICE_MS: the same
 * intervals (type-7 percentiles of all replicates' ranks, rounded outward).
 */
export async function rankIntervalsInSlices(
  input: RankIntervalSlices,
  options: Omit<RankIntervalOptions, 'macro'> & { level: number },
): Promise<{ candidate: number; lower: number; upper: number }[]> {
  const { candidates: K, voters: V, replicates: B } = input;
  // One computation over all replicates, paused every RANK_SLICE_MS between two replicates
  // (from microseconds each with a few runs to tens of milliseconds with hundreds of runs).
  const steps = rankIntervalSteps(
    { data: input.data, candidates: K, voters: V, replicates: B, strides: { candidate: V * B, voter: B, replicate: 1 } },
    { ...options, macro: { data: input.macro, strides: { candidate: B, replicate: 1 } } },
  );
  const slices = new TimeSlices(RANK_SLICE_MS);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value.intervals.map(({ candidate, lower, upper }) => ({ candidate, lower, upper }));
    await slices.pause();
  }
}
