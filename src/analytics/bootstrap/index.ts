/**
 * Vectorised, paired, seeded bootstrap of grouped-mean metrics (docs/scoring.md §5).
 *
 * A resample is a vector of multiplicities w (length N, sum N). Every per-variable metric is a
 * grouped mean (metrics.ts): mean over groups g with D_g(w) > 0 of N_g(w) / D_g(w), where
 * N_g(w) = Σ_{i∈g} w_i x_i and D_g(w) = Σ_{i∈g} w_i. One multiplicity matrix, derived only from
 * (N, B, seed), is shared by every run of a dataset, so runs are paired. A grid of runs ×
 * variables × replicates is computed over typed arrays in a WebAssembly SIMD kernel
 * (../bootstrap-kernel.ts, its module assembled from wasm/bootstrap-kernel.wat): integer sums for
 * 0/1 item scores, f64 sums in the scalar definition's order for real-valued ones; no metric
 * function is called per replicate.
 *
 * Parts: options.ts (defaults, the estimate, input checks), multiplicities.ts (the resamples),
 * percentile.ts and order-statistics.ts (intervals), grouped-mean.ts with kernel-source.ts and
 * scalar-kernel.ts (one variable's replicates), grid.ts (runs × variables, macro averages),
 * paired.ts (paired differences and p-values).
 */
export { bootstrapGrid } from './grid';
export type { BootstrapGridInput, BootstrapGridResult, GridRun, GridVariable } from './grid';
export { groupedMeanReplicates } from './grouped-mean';
export type { ReplicateTarget } from './grouped-mean';
export { bootstrapMultiplicities, multiplicityRows } from './multiplicities';
export type { MultiplicityMatrix } from './multiplicities';
export { DEFAULT_BOOTSTRAP_RESAMPLES, DEFAULT_BOOTSTRAP_SEED, DEFAULT_CONFIDENCE } from './options';
export type { Estimate } from './options';
export { bootstrapPValue, gridPairedDifference, pairedDifference } from './paired';
export type { PairedDifference } from './paired';
export { estimateFrom, percentileInterval, quantileType7 } from './percentile';
