import { REAL_TILE } from '../../analytics/bootstrap-kernel-wasm';
import { bootstrapGrid, type BootstrapGridResult, type GridRun, type GridVariable, type MultiplicityMatrix } from '../../analytics/bootstrap';
import { kemeny, type KemenyResult, type KemenyTieBreak } from '../../analytics/kemeny';
import { yieldToEventLoop } from '../../event-loop';
import { bootstrapMultiplicitiesInSlices, rankIntervalsInSlices, type RankIntervalSlices } from './chunked';

/**
 * Runs per slice of the grid at the paper's 1,252 reports: the real-valued kernel takes runs
 * 2 · REAL_TILE at a time, so a slice of 14 fills its tiles (one of 16 would be a full tile and
 * a tile of 2 runs costing nearly as much).
 */
const RUNS_PER_SLICE = 2 * REAL_TILE;

/**
 * Runs read and scored at a time, and per grid slice on the request thread, at `reports`
 * reports: RUNS_PER_SLICE at the paper's 1,252 reports, fewer on bigger datasets so that a slice
 * stays about as long (its cost grows with runs × reports). The `minimum` of gridSliceRuns.
 */
export function runsPerSliceOf(reports: number): number {
  return Math.max(1, Math.min(RUNS_PER_SLICE, Math.floor((RUNS_PER_SLICE * 1252) / Math.max(reports, 1))));
}

export interface RankIntervalRequestOptions {
  level: number;
  names?: readonly string[] | null;
  pointOrder?: readonly number[] | null;
}

/**
 * Where the statistics' heavy parts run: the bootstrap multiplicities, the grid of one slice of
 * runs, a Kemeny–Young consensus and rank intervals. Every engine gives the same numbers bit for
 * bit; they differ in which thread spends the time.
 */
export interface StatisticsEngine {
  /**
   * Grids worth having in computation at once on a multiplicity matrix of this many entries
   * (n · B): the threads that compute them, as far as their kernels' memory allows.
   */
  gridParallelism(multiplicityEntries: number): number;
  /**
   * Runs per grid slice of a computation over `runs` runs, at least `minimum` (the runs read at
   * a time at the dataset's size). Each slice repeats some work per variable (grouping the
   * reports, the resamples' denominators), so engines that compute apart from the request
   * thread take fewer, larger slices; the request thread keeps slices short.
   */
  gridSliceRuns(minimum: number, runs: number, multiplicityEntries: number): number;
  /** bootstrapMultiplicities(n, resamples, seed), in memory every grid call of the engine reads. */
  multiplicities(n: number, resamples: number, seed: number): Promise<MultiplicityMatrix>;
  /** bootstrapGrid of some runs on shared multiplicities (from `multiplicities`). */
  grid(variables: readonly GridVariable[], runs: readonly GridRun[], multiplicities: MultiplicityMatrix, confidence: number): Promise<BootstrapGridResult>;
  kemeny(scores: readonly Float64Array[], options: KemenyTieBreak): Promise<KemenyResult>;
  /** A zeroed array that `rankIntervals` reads without a copy. */
  float64(length: number): Float64Array;
  /** kemenyRankIntervals' intervals (docs/scoring.md §6). */
  rankIntervals(input: RankIntervalSlices, options: RankIntervalRequestOptions): Promise<{ candidate: number; lower: number; upper: number }[]>;
  close(): Promise<void>;
}

const matrixIds = new WeakMap<MultiplicityMatrix, number>();
let lastMatrixId = 0;

/**
 * Numbers a matrix an engine's `multiplicities` made (nobody writes those), so that the grids of
 * its slices can tell a kernel that it already holds the matrix (BootstrapGridInput.multiplicitiesId).
 */
export function registerMultiplicities(matrix: MultiplicityMatrix): MultiplicityMatrix {
  matrixIds.set(matrix, ++lastMatrixId);
  return matrix;
}

/** The number registerMultiplicities gave the matrix, or null for any other matrix. */
export function multiplicitiesIdOf(matrix: MultiplicityMatrix): number | null {
  return matrixIds.get(matrix) ?? null;
}

/**
 * The statistics on the calling thread, in slices with a turn of the event loop between them
 * (ANALYTICS_THREADS=0).
 */
export class InlineStatistics implements StatisticsEngine {
  gridParallelism(): number {
    return 1;
  }

  gridSliceRuns(minimum: number): number {
    return minimum;
  }

  async multiplicities(n: number, resamples: number, seed: number): Promise<MultiplicityMatrix> {
    return registerMultiplicities(await bootstrapMultiplicitiesInSlices(n, resamples, seed));
  }

  async grid(variables: readonly GridVariable[], runs: readonly GridRun[], multiplicities: MultiplicityMatrix, confidence: number): Promise<BootstrapGridResult> {
    const grid = bootstrapGrid({ variables, runs, multiplicities, multiplicitiesId: multiplicitiesIdOf(multiplicities), confidence });
    await yieldToEventLoop();
    return grid;
  }

  async kemeny(scores: readonly Float64Array[], options: KemenyTieBreak): Promise<KemenyResult> {
    return kemeny(scores, options);
  }

  float64(length: number): Float64Array {
    return new Float64Array(length);
  }

  rankIntervals(input: RankIntervalSlices, options: RankIntervalRequestOptions) {
    return rankIntervalsInSlices(input, options);
  }

  async close(): Promise<void> {}
}
