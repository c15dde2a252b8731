import {
  bootstrapGrid,
  bootstrapMultiplicities,
  multiplicityRows,
  type BootstrapGridResult,
  type GridRun,
  type GridVariable,
  type MultiplicityMatrix,
} from '../../analytics/bootstrap';
import { AnalyticsError, type AnalyticsErrorCode } from '../../analytics/errors';
import { drawnByRows } from './chunked';
import { kemeny, type KemenyResult, type KemenyTieBreak } from '../../analytics/kemeny';
import { kemenyRankIntervals, type RankIntervalOptions } from '../../analytics/rank-intervals';

/**
 * The statistics a thread of the pool computes (statistics-threads.ts): each task is a pure
 * function of its message, so a thread and the request thread give the same numbers bit for bit.
 */
export type StatisticsTask =
  | { kind: 'multiplicities'; n: number; resamples: number; seed: number }
  | {
      kind: 'grid';
      variables: GridVariable[];
      runs: GridRun[];
      multiplicities: MultiplicityMatrix;
      /** Same id, same shared matrix: the thread's kernel transposes it once for all slices. */
      multiplicitiesId: number | null;
      confidence: number;
    }
  | { kind: 'kemeny'; scores: Float64Array[]; options: KemenyTieBreak }
  | {
      kind: 'rankIntervals';
      /** candidate × voter × replicate, replicate fastest (shared memory: not copied per task). */
      data: Float64Array;
      /** candidate × replicate. */
      macro: Float64Array;
      candidates: number;
      voters: number;
      replicates: number;
      /** The replicates [from, to) of this task. */
      from: number;
      to: number;
      options: Pick<RankIntervalOptions, 'level' | 'names' | 'pointOrder'>;
    };

/**
 * Sent to a thread idle for a while: it drops the kernel memory it keeps for the next task,
 * collects its heap when it holds more than `collectAbove` bytes, and answers nothing
 * (statistics-worker.ts).
 */
export interface ReleaseMessage {
  release: true;
  collectAbove: number;
}

/** How much lower a statistics thread's priority is than the process's, in nice steps (19 is the lowest priority). */
export const STATISTICS_THREAD_NICE = 10;

/** A grid without its multiplicity matrix, which the caller already holds. */
export type GridPart = Omit<BootstrapGridResult, 'multiplicities'>;

export interface RankPart {
  /** ranks[c * (to − from) + (b − from)]: 1-based rank of candidate c in replicate b. */
  ranks: Int32Array;
}

export type StatisticsTaskResult = MultiplicityMatrix | GridPart | KemenyResult | RankPart;

/** An error of a task as it crosses threads: analytics errors keep their code. */
export interface TaskFailure {
  analyticsCode: AnalyticsErrorCode | null;
  message: string;
}

/** Runs one task; `transfer` lists the buffers the answer may hand over instead of copying. */
export function runStatisticsTask(task: StatisticsTask): { result: StatisticsTaskResult; transfer: ArrayBuffer[] } {
  switch (task.kind) {
    case 'multiplicities':
      return { result: sharedMultiplicities(task.n, task.resamples, task.seed), transfer: [] };
    case 'grid': {
      const { multiplicities: _shared, ...grid } = bootstrapGrid({
        variables: task.variables,
        runs: task.runs,
        multiplicities: task.multiplicities,
        multiplicitiesId: task.multiplicitiesId,
        confidence: task.confidence,
      });
      return { result: grid, transfer: [grid.points.buffer, grid.macroPoints.buffer, grid.replicates.buffer, grid.macroReplicates.buffer] as ArrayBuffer[] };
    }
    case 'kemeny':
      return { result: kemeny(task.scores, task.options), transfer: [] };
    case 'rankIntervals': {
      const { candidates: K, voters: V, replicates: B, from, to } = task;
      // The options as one literal of fixed shape, so that rankIntervalSteps' reads of them meet
      // one hidden class in every task (bench/RESULTS.md, "Rank-interval options of one shape").
      const { level, names, pointOrder } = task.options;
      // A view starting at replicate `from` with the full strides: replicate b of the view is
      // replicate from + b of the data. Each replicate's ranks depend on its own scores only.
      const result = kemenyRankIntervals(
        { data: task.data.subarray(from), candidates: K, voters: V, replicates: to - from, strides: { candidate: V * B, voter: B, replicate: 1 } },
        { level, names, pointOrder, macro: { data: task.macro.subarray(from), strides: { candidate: B, replicate: 1 } } },
      );
      return { result: { ranks: result.ranks }, transfer: [result.ranks.buffer as ArrayBuffer] };
    }
  }
}

/**
 * bootstrapMultiplicities(n, B, seed) in shared memory, so every grid task of a computation
 * reads the one matrix without a copy: as u8 (20 MB instead of 80 MB at 20,000 reports × 1,000
 * resamples) while no entry passes `narrowMax` (255; the rows are checked as they are drawn),
 * otherwise drawn again as Int32. Arguments bootstrapMultiplicities refuses are passed to it.
 */
export function sharedMultiplicities(n: number, B: number, seed: number, narrowMax = 255): MultiplicityMatrix {
  if (!drawnByRows(n, B, seed)) {
    return bootstrapMultiplicities(n, B, seed);
  }
  const rows = multiplicityRows(n, seed);
  const row = new Int32Array(n);
  const narrow = new Uint8Array(new SharedArrayBuffer(n * B));
  for (let b = 0; b < B; b++) {
    row.fill(0);
    rows.fill(row, 0, 1);
    for (let i = 0; i < n; i++) {
      const w = row[i]!;
      if (w > narrowMax) {
        const wide = new Int32Array(new SharedArrayBuffer(4 * n * B));
        multiplicityRows(n, seed).fill(wide, 0, B);
        return wide;
      }
      narrow[b * n + i] = w;
    }
  }
  return narrow;
}

export function taskFailure(error: unknown): TaskFailure {
  if (error instanceof AnalyticsError) return { analyticsCode: error.code, message: error.message };
  return { analyticsCode: null, message: error instanceof Error ? error.message : String(error) };
}
