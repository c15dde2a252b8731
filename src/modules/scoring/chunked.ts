import { performance } from 'node:perf_hooks';
import { bootstrapMultiplicities, multiplicityRows, type BootstrapGridResult } from '../../analytics/bootstrap';
import { kemenyRankIntervals, quantileType7Sorted, rankCeil, rankFloor, type RankIntervalOptions } from '../../analytics/rank-intervals';

/**
 * Statistics of a paper-sized study take seconds of CPU. Computed in slices with a turn of the
 * event loop between them, other requests are served meanwhile instead of waiting for the whole
 * computation. Slicing changes no number: runs are independent in the grid, replicates in the
 * rank intervals.
 */
export const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Multiplicities drawn per slice of bootstrapMultiplicitiesInSlices (~10 ms). */
const DRAWS_PER_SLICE = 1 << 20;

/**
 * bootstrapMultiplicities(n, B, seed), bit for bit, drawn a slice of rows at a time: at 20,000
 * reports × 1000 resamples the matrix is 20 million draws, too long for one turn of the loop.
 */
export async function bootstrapMultiplicitiesInSlices(n: number, B: number, seed: number): Promise<Int32Array> {
  const rowsPerSlice = Math.max(1, Math.floor(DRAWS_PER_SLICE / Math.max(n, 1)));
  if (n * B <= DRAWS_PER_SLICE || !(n >= 1 && B >= 1 && Number.isSafeInteger(n) && Number.isSafeInteger(B) && Number.isSafeInteger(seed) && n - 1 <= 0xffffffff)) {
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

/** Time one slice of rank-interval replicates aims at; the number per slice follows from it. */
const RANK_SLICE_MS = 20;

/** Concatenates grids of different runs over the same variables and resamples. */
export function concatGrids(parts: BootstrapGridResult[]): BootstrapGridResult {
  const first = parts[0]!;
  if (parts.length === 1) return first;
  const concat = (arrays: Float64Array[]) => {
    const out = new Float64Array(arrays.reduce((n, a) => n + a.length, 0));
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
    replicates: concat(parts.map((p) => p.replicates)),
    macroReplicates: concat(parts.map((p) => p.macroReplicates)),
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
 * kemenyRankIntervals over slices of replicates; the intervals are the same type-7 percentiles,
 * rounded outward, of all replicates' ranks.
 */
export async function rankIntervalsInSlices(
  input: RankIntervalSlices,
  options: Omit<RankIntervalOptions, 'macro'> & { level: number },
): Promise<{ candidate: number; lower: number; upper: number }[]> {
  const { candidates: K, voters: V, replicates: B } = input;
  const ranks = new Int32Array(K * B);
  // Replicates cost from microseconds (a few runs) to tens of milliseconds (hundreds of runs with
  // Condorcet cycles): the slice size is learnt from the time the previous slices took.
  let perSlice = 4;
  for (let start = 0; start < B; ) {
    const count = Math.min(perSlice, B - start);
    const began = performance.now();
    const slice = kemenyRankIntervals(
      { data: input.data.subarray(start), candidates: K, voters: V, replicates: count, strides: { candidate: V * B, voter: B, replicate: 1 } },
      { ...options, macro: { data: input.macro.subarray(start), strides: { candidate: B, replicate: 1 } } },
    );
    for (let c = 0; c < K; c++) ranks.set(slice.ranks.subarray(c * count, (c + 1) * count), c * B + start);
    const took = performance.now() - began;
    perSlice = Math.max(1, Math.min(count * 4, Math.floor((count * RANK_SLICE_MS) / Math.max(took, 0.01))));
    start += count;
    if (start < B) await yieldToEventLoop();
  }
  const alpha = 1 - options.level;
  return Array.from({ length: K }, (_, c) => {
    const sorted = ranks.slice(c * B, (c + 1) * B).sort();
    return { candidate: c, lower: rankFloor(quantileType7Sorted(sorted, alpha / 2)), upper: rankCeil(quantileType7Sorted(sorted, 1 - alpha / 2)) };
  });
}
