/**
 * Kemeny–Young rank aggregation (docs/scoring.md §6).
 *
 * Candidates are runs or models; voters are variables or use cases, each giving a score vector
 * over the candidates (higher is better). The consensus order minimises the total pairwise
 * disagreement with the voters. It is solved exactly by dynamic programming over subsets after a
 * Condorcet decomposition, and by a deterministic local search beyond the exact limit.
 *
 * Parts: pairwise.ts (the matrix), score.ts (an order's score, the lower bound), tie-break.ts,
 * components.ts (Condorcet decomposition), exact.ts (the subset DP), heuristic.ts and
 * insertion-search.ts (beyond the exact limit), repair.ts (the per-replicate solver of rank
 * intervals), consensus.ts (the entry points).
 */
export { kemeny, kemenyFromMatrix, kemenyOrder } from './consensus';
export { KEMENY_MAX_EXACT } from './options';
export type { KemenyOptions, KemenyRepairOptions, KemenyResult } from './options';
export { pairwiseFromMatrix, pairwiseMatrix } from './pairwise';
export type { PairwiseMatrix, PairwiseOptions } from './pairwise';
export { KemenyRepairSolver, kemenyRepairOrder } from './repair';
export { kemenyLowerBound, kemenyScore } from './score';
export { TieBreakPriorities, tieBreakPriority } from './tie-break';
export type { KemenyTieBreak } from './tie-break';
