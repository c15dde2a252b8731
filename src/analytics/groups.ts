/**
 * Group summaries (docs/scoring.md §8, first bullet): the mean over a group's models of each model's
 * best-strategy macro average, with a bootstrap CI, and the model size classes.
 */
import { DEFAULT_CONFIDENCE, estimateFrom } from './bootstrap';
import type { BootstrapGridResult, Estimate } from './bootstrap';
import { AnalyticsError } from './errors';

export type SizeClass = 'TINY' | 'SMALL' | 'MEDIUM' | 'LARGE';

export const SIZE_CLASSES: readonly SizeClass[] = ['TINY', 'SMALL', 'MEDIUM', 'LARGE'];

/**
 * Size class from a parameter count in billions: TINY < 4B ≤ SMALL < 40B ≤ MEDIUM ≤ 150B <
 * LARGE (docs/scoring.md §8; 150B itself is MEDIUM). O(1).
 *
 * @throws AnalyticsError BAD_INPUT for a negative or non-finite count.
 */
export function sizeClass(parametersBillions: number): SizeClass {
  if (!(parametersBillions >= 0) || !Number.isFinite(parametersBillions)) {
    throw new AnalyticsError('BAD_INPUT', `parameter count must be a finite number >= 0, got ${parametersBillions}`);
  }
  if (parametersBillions < 4) return 'TINY';
  if (parametersBillions < 40) return 'SMALL';
  if (parametersBillions <= 150) return 'MEDIUM';
  return 'LARGE';
}

/** A model's best-strategy macro average: full-sample value and its bootstrap replicates. */
export interface GroupMember {
  model: string;
  value: number;
  /** Replicates on the shared resamples (same length for every member). */
  replicates: ArrayLike<number>;
}

export interface GroupSummary {
  group: string;
  models: string[];
  estimate: Estimate;
  /** Replicate b = mean over members of their replicate b (members undefined in b are skipped). */
  replicates: Float64Array;
}

/**
 * Group summary: point = mean over members of their best-strategy macro average; replicate
 * b = mean over members of replicate b, so members keep their pairing through the shared
 * resamples; percentile interval as {@link estimateFrom}. Members from different datasets may be
 * combined: their replicates are independent resamples of independent strata. O(M · B log B).
 *
 * @throws AnalyticsError EMPTY_INPUT for no members; LENGTH_MISMATCH for replicate arrays of
 *   different lengths; BAD_INPUT for a duplicate model.
 */
export function groupSummary(
  group: string,
  members: readonly GroupMember[],
  confidence: number = DEFAULT_CONFIDENCE,
): GroupSummary {
  if (members.length === 0) throw new AnalyticsError('EMPTY_INPUT', `group "${group}" has no models`);
  const models = members.map((m) => m.model);
  if (new Set(models).size !== models.length) throw new AnalyticsError('BAD_INPUT', `group "${group}": duplicate model`);
  const B = members[0]!.replicates.length;
  const sum = new Float64Array(B);
  const count = new Float64Array(B);
  let point = 0;
  for (const m of members) {
    if (m.replicates.length !== B) {
      throw new AnalyticsError('LENGTH_MISMATCH', `group "${group}": model "${m.model}" has ${m.replicates.length} replicates, expected ${B}`);
    }
    point += m.value;
    for (let b = 0; b < B; b++) {
      const x = m.replicates[b]!;
      if (Number.isFinite(x)) {
        sum[b]! += x;
        count[b]!++;
      }
    }
  }
  const replicates = Float64Array.from(sum, (s, b) => (count[b]! > 0 ? s / count[b]! : NaN));
  return { group, models, estimate: estimateFrom(point / members.length, replicates, confidence), replicates };
}

/**
 * Members of a group from a bootstrap grid: for each model, its best run's macro value and
 * macro replicates. The best run per model is an input (the highest-placed run of the model in
 * the use case's Kemeny–Young leaderboard, ties by macro average). O(M · B).
 *
 * @throws AnalyticsError OUT_OF_RANGE for a run index outside the grid.
 */
export function groupMembersFromGrid(
  grid: BootstrapGridResult,
  bestRunByModel: ReadonlyMap<string, number> | Readonly<Record<string, number>>,
): GroupMember[] {
  const entries = bestRunByModel instanceof Map ? [...bestRunByModel.entries()] : Object.entries(bestRunByModel);
  const B = grid.resamples;
  return entries.map(([model, run]) => {
    if (!Number.isInteger(run) || run < 0 || run >= grid.runIds.length) {
      throw new AnalyticsError('OUT_OF_RANGE', `model "${model}": run index ${run} outside 0..${grid.runIds.length - 1}`);
    }
    return { model, value: grid.macroPoints[run]!, replicates: grid.macroReplicates.subarray(run * B, (run + 1) * B) };
  });
}
