/** Options and results of the Kemeny–Young solvers, and the limits of the exact DP. */
import { AnalyticsError } from '../errors';
import type { KemenyTieBreak } from './tie-break';

export interface KemenyOptions extends KemenyTieBreak {
  /**
   * Largest Condorcet component solved exactly by the subset DP (default 22, about 0.1 s, at most
   * {@link KEMENY_MAX_EXACT}). Memory is 8·2^k bytes for a component of k candidates.
   */
  exactLimit?: number;
  /** Split into Condorcet components before solving (default true; false is for testing). */
  decompose?: boolean;
  /** Iterated-local-search perturbations per heuristic component (default 200). */
  restarts?: number;
  /** Seed of the perturbation generator (default 42). */
  seed?: number;
  /** Extra start orders for the heuristic (full candidate orders, e.g. a previous result). */
  warmStarts?: readonly (readonly number[])[] | null;
  /** Cap on insertion sweeps per local search (default 1000). */
  maxSweeps?: number;
  /**
   * Tie-break priority given directly (lower first; distinct values), instead of computing it
   * from `macro` and `names`. Only the relative order of the values is used, so the priority of
   * a larger field restricted to a subset of its candidates keeps that field's tie-break.
   */
  priority?: ArrayLike<number> | null;
}

export interface KemenyResult {
  /** Candidate indices, best first. */
  order: number[];
  /** rank[c] = 1-based position of candidate c in `order`. */
  rank: number[];
  /** Total disagreement Σ_{i before j} w[j][i] of `order`. */
  score: number;
  /** Σ_{i<j} min(w_ij, w_ji): no order can score below it. */
  lowerBound: number;
  /** score − lowerBound. */
  gap: number;
  /** True when `order` is proven optimal (every Condorcet component solved by the DP). */
  exact: boolean;
  voterCount: number;
  /** Sizes of the Condorcet components, in consensus order. */
  componentSizes: number[];
}

/** Hard cap of the exact DP: 2^25 doubles is 256 MiB. */
export const KEMENY_MAX_EXACT = 25;
export const DEFAULT_EXACT_LIMIT = 22;

export interface KemenyRepairOptions extends KemenyTieBreak {
  /** Largest Condorcet component solved exactly by the subset DP (default 22, at most {@link KEMENY_MAX_EXACT}). */
  exactLimit?: number;
  /**
   * Start order of all candidates, typically the full-sample consensus; each large component
   * starts from it restricted to its members. Default: each component's Copeland order.
   */
  start?: readonly number[] | null;
  /** Cap on insertion sweeps per component, counted over all rounds (default 1000). */
  maxSweeps?: number;
  /** Tie-break priority given directly, as in {@link KemenyOptions.priority}. */
  priority?: ArrayLike<number> | null;
}

export function checkedExactLimit(exactLimit: number): number {
  if (!Number.isInteger(exactLimit) || exactLimit < 0 || exactLimit > KEMENY_MAX_EXACT) {
    throw new AnalyticsError('OUT_OF_RANGE', `kemeny: exactLimit ${exactLimit} outside 0..${KEMENY_MAX_EXACT}`);
  }
  return exactLimit;
}
