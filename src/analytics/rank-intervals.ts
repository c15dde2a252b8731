/**
 * Bootstrap rank confidence intervals of a Kemeny–Young leaderboard (docs/scoring.md §6 "Rank
 * confidence intervals"), and the "model represented by its best-ranked strategy" helpers
 * (docs/scoring.md §6 candidates, §8 groups).
 */
import { AnalyticsError } from './errors';
import { KemenyRepairSolver, TieBreakPriorities } from './kemeny';
import { PairwiseUpdates } from './pairwise-updates';
import type { PairwiseMatrix, kemenyRepairOrder } from './kemeny';
import { scoreGreater, scoresEqual } from './tolerance';

/**
 * Per-replicate voter scores. Entry (candidate c, voter v, replicate b) is
 * `data[c * strides.candidate + v * strides.voter + b * strides.replicate]`; the default strides
 * describe a row-major candidate × voter × replicate array (replicate fastest), the layout of
 * the bootstrap grid's `replicates` (run × variable × replicate). NaN means the voter has no
 * opinion on the candidate in that replicate.
 */
export interface ReplicateScores {
  data: ArrayLike<number>;
  candidates: number;
  voters: number;
  replicates: number;
  strides?: { candidate: number; voter: number; replicate: number } | null;
}

/** Per-replicate tie-break macro averages: entry (c, b) at `data[c * strides.candidate + b * strides.replicate]`. */
export interface ReplicateMacro {
  data: ArrayLike<number>;
  /** Default: candidate × replicate row-major (replicate fastest), as the bootstrap grid's `macroReplicates`. */
  strides?: { candidate: number; replicate: number } | null;
}

export interface RankIntervalOptions {
  /** Coverage of the percentile interval (default 0.95: 2.5th–97.5th percentiles). */
  level?: number;
  /** Candidate names (tie-break after macro average). */
  names?: readonly string[] | null;
  /**
   * Tie-break macro average per candidate and replicate. Default: the (weighted) mean of the
   * candidate's non-NaN voter scores in that replicate.
   */
  macro?: ReplicateMacro | null;
  voterWeights?: ArrayLike<number> | null;
  /** Condorcet components up to this size are solved exactly in each replicate (default 12). */
  exactLimit?: number;
  /** Start of every replicate's repair, the full-sample consensus order (see kemenyRankIntervals). */
  pointOrder?: readonly number[] | null;
  /** Cap on insertion sweeps per repaired component in a replicate (default 50). */
  maxSweeps?: number;
}

export interface CandidateRankInterval {
  candidate: number;
  /** floor of the lower type-7 quantile of the replicate ranks (1 = best). */
  lower: number;
  /** ceil of the upper type-7 quantile of the replicate ranks. */
  upper: number;
  lowerQuantile: number;
  upperQuantile: number;
  /** Type-7 median of the replicate ranks. */
  median: number;
}

export interface RankIntervalResult {
  intervals: CandidateRankInterval[];
  /** ranks[c * replicates + b] = 1-based rank of candidate c in replicate b. */
  ranks: Int32Array;
  replicates: number;
  /** Replicates whose consensus was proven optimal. */
  exactReplicates: number;
}

/** Replicates whose scores are gathered together (see rankIntervalSteps). */
const REPLICATE_BLOCK = 32;

/**
 * Percentile rank intervals of Kemeny–Young consensus ranks over bootstrap replicates.
 *
 * Definition: for each replicate b, the voters' scores of that replicate give a pairwise matrix
 * (preferences strict beyond the relative tolerance of docs/scoring.md §6, as in `pairwiseMatrix`)
 * and a Kemeny–Young consensus (tie-break: replicate macro average, then name); candidate c's
 * rank in it is r_cb. The interval is [floor(Q(α/2)), ceil(Q(1−α/2))] of {r_cb}_b, with Q the
 * type-7 (linear interpolation, R default, NumPy "linear") quantile and α = 1 − level. Rounding
 * outward keeps the integer interval at least as wide as the quantiles ({@link rankFloor},
 * {@link rankCeil}: a quantile within rounding of an integer is that integer); the unrounded
 * quantiles are returned too.
 *
 * Per replicate, the consensus is {@link kemenyRepairOrder}'s: the Condorcet components of the
 * replicate's matrix in consensus order; a component of k ≤ exactLimit (default 12) candidates
 * gets the exact optimum with the tie-break, as `kemenyOrder` would; a larger one starts
 * from `pointOrder` restricted to its members (without `pointOrder`: its Copeland order) and is
 * repaired by insertion sweeps and tie-break swaps of equal pairs until neither changes the order
 * or `maxSweeps` (default 50) sweeps have run. The result is then a local optimum under single
 * insertions whose score is at most the point order's in that replicate; `exactReplicates`
 * counts the replicates whose components all were solved exactly. A replicate's ranks depend
 * only on its own scores and macro averages, the names and the options, never on other
 * replicates: any subset of replicates computed alone gives the same ranks (everything shared
 * across replicates, the base matrix and the relabelling, only saves work).
 *
 * Boundedness: with integer voter weights (the default) each replicate's matrix is the base
 * matrix of the mean replicate scores plus the changes of the pairs whose scores changed order
 * ({@link PairwiseUpdates}: O(n²) copy, per voter O(n + changed pairs)), instead of O(V·n²)
 * comparisons; with fractional weights it is built directly, O(V·n²). Then the components
 * (O(n²)), O(2^k·k) per exact component, and per repaired component O(k²) set-up plus sweeps
 * that scan only as far as a better position is possible (a start near the local optimum needs
 * few). Total O(B·(n² + Σ sweeps·k²)) at worst; bench/RESULTS.md has the times.
 *
 * Source: docs/scoring.md §6; Hyndman & Fan (1996) for type 7.
 * @throws AnalyticsError EMPTY_INPUT without candidates, voters or replicates; LENGTH_MISMATCH
 *   when `data` is too short for the strides or names/weights/pointOrder have the wrong length;
 *   OUT_OF_RANGE for level outside (0, 1).
 */
export function kemenyRankIntervals(input: ReplicateScores, options: RankIntervalOptions = {}): RankIntervalResult {
  const steps = rankIntervalSteps(input, options);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * kemenyRankIntervals one replicate at a time: the generator yields after each replicate and
 * returns the result. A caller that must not hold the thread for long (a server) pauses between
 * steps; the base matrix and the previous replicate's order are kept across the pauses, so the
 * work is that of one call.
 */
export function* rankIntervalSteps(input: ReplicateScores, options: RankIntervalOptions = {}): Generator<void, RankIntervalResult, void> {
  const { candidates: n, voters: V, replicates: B, data } = input;
  if (!(Number.isInteger(n) && n >= 1 && Number.isInteger(V) && V >= 1 && Number.isInteger(B) && B >= 1)) {
    throw new AnalyticsError('EMPTY_INPUT', `rank intervals: ${n} candidates, ${V} voters, ${B} replicates`);
  }
  const level = options.level ?? 0.95;
  if (!(level > 0 && level < 1)) throw new AnalyticsError('OUT_OF_RANGE', `rank intervals: level ${level}`);
  const st = input.strides ?? { candidate: V * B, voter: B, replicate: 1 };
  const maxIndex = (n - 1) * st.candidate + (V - 1) * st.voter + (B - 1) * st.replicate;
  if (data.length <= maxIndex) {
    throw new AnalyticsError('LENGTH_MISMATCH', `rank intervals: data has ${data.length} entries, needs ${maxIndex + 1}`);
  }
  const weights = options.voterWeights ?? null;
  if (weights !== null && weights.length !== V) {
    throw new AnalyticsError('LENGTH_MISMATCH', `rank intervals: ${weights.length} weights for ${V} voters`);
  }
  if (weights !== null) {
    for (let v = 0; v < V; v++) {
      if (!Number.isFinite(weights[v]!) || weights[v]! < 0) {
        throw new AnalyticsError('BAD_INPUT', `rank intervals: voter ${v} has weight ${weights[v]}`);
      }
    }
  }
  const macroIn = options.macro ?? null;
  const macroSt = macroIn?.strides ?? { candidate: B, replicate: 1 };
  if (macroIn !== null && macroIn.data.length <= (n - 1) * macroSt.candidate + (B - 1) * macroSt.replicate) {
    throw new AnalyticsError('LENGTH_MISMATCH', 'rank intervals: macro array too short');
  }
  const pointOrder = options.pointOrder ?? null;
  if (pointOrder !== null) {
    if (pointOrder.length !== n) {
      throw new AnalyticsError('LENGTH_MISMATCH', `rank intervals: point order of ${pointOrder.length} candidates for ${n}`);
    }
    const seen = new Uint8Array(n);
    for (const c of pointOrder) {
      if (!Number.isInteger(c) || c < 0 || c >= n || seen[c] === 1) {
        throw new AnalyticsError('BAD_INPUT', 'rank intervals: point order is not a permutation of the candidates');
      }
      seen[c] = 1;
    }
  }

  let totalWeight = 0;
  for (let v = 0; v < V; v++) totalWeight += weights === null ? 1 : weights[v]!;
  const exactLimit = options.exactLimit ?? 12;
  const maxSweeps = options.maxSweeps ?? 50;
  const names = options.names ?? null;
  const weightArray = Float64Array.from({ length: V }, (_, v) => (weights === null ? 1 : weights[v]!));
  // Candidates are relabelled by the point order (else by mean score): label i is candidate
  // label[i]. Every voter's preferences then mostly pair nearby labels, so the matrix updates
  // and reads stay in a band of the matrix instead of spreading over all of it. Relabelling
  // changes no result: the components are the same sets, and inside them everything is ordered
  // by tie-break priority or start position, both carried over.
  const label = pointOrder !== null ? Int32Array.from(pointOrder) : byMeanScore(data, st, n, V, B);
  const start = pointOrder !== null ? Array.from({ length: n }, (_, i) => i) : null;
  // The checks of tieBreakPriority and kemenyRepairOrder, once instead of per replicate.
  const tieBreak = new TieBreakPriorities(n, names);
  const solver = new KemenyRepairSolver(n, { exactLimit, maxSweeps, start });
  // Integer weights: each replicate's matrix as updates of one base matrix (the mean replicate
  // scores), equal entry for entry to building it directly.
  const updates = PairwiseUpdates.accepts(weightArray)
    ? new PairwiseUpdates(n, V, weightArray, meanScores(data, st, label, V, B))
    : null;
  // block[(t·V + v)·n + i]: the scores of replicate b0 + t, one voter's candidates contiguous,
  // by label. Read REPLICATE_BLOCK replicates at a time: with the grid's layout (replicate
  // fastest) each read then uses whole cache lines instead of one number per line.
  const blockSize = Math.min(B, REPLICATE_BLOCK);
  const { candidate: stCandidate, voter: stVoter, replicate: stReplicate } = st;
  const block = new Float64Array(blockSize * V * n);
  const w = new Float64Array(n * n);
  const macro = new Float64Array(n);
  const macroWeight = new Float64Array(n);
  const byCandidate = new Int32Array(n);
  const priority = new Int32Array(n);
  const rank = new Int32Array(n);
  const ranks = new Int32Array(n * B);
  let exactReplicates = 0;

  for (let b = 0; b < B; b++) {
    const t = b % blockSize;
    if (t === 0) {
      const size = Math.min(blockSize, B - b);
      for (let i = 0; i < n; i++) {
        const c = label[i]!;
        for (let v = 0; v < V; v++) {
          let at = c * stCandidate + v * stVoter + b * stReplicate;
          let to = v * n + i;
          for (let u = 0; u < size; u++, at += stReplicate, to += V * n) block[to] = Number(data[at]);
        }
      }
    }
    const profile = block.subarray(t * V * n, (t + 1) * V * n);
    if (macroIn === null) {
      macro.fill(0);
      macroWeight.fill(0);
      for (let v = 0; v < V; v++) {
        const weight = weightArray[v]!;
        const row = v * n;
        for (let i = 0; i < n; i++) {
          const x = profile[row + i]!;
          if (!Number.isNaN(x)) {
            const c = label[i]!;
            macro[c] += weight * x;
            macroWeight[c] += weight;
          }
        }
      }
      for (let c = 0; c < n; c++) macro[c] = macroWeight[c]! > 0 ? macro[c]! / macroWeight[c]! : Number.NaN;
    } else {
      const macroData = macroIn.data;
      const step = macroSt.candidate;
      for (let c = 0, at = b * macroSt.replicate; c < n; c++, at += step) macro[c] = Number(macroData[at]);
    }
    // The tie-break of the candidates (macro average, name, then candidate index), by label.
    tieBreak.into(macro, byCandidate);
    for (let i = 0; i < n; i++) priority[i] = byCandidate[label[i]!]!;
    let exact: boolean;
    if (updates !== null) {
      updates.matrix(profile, w);
      exact = solveInto({ n, w, voterCount: V, totalWeight, integral: true }, priority, rank, solver);
    } else {
      exact = denseConsensus(profile, n, V, weightArray, totalWeight, w, priority, rank, solver);
    }
    if (exact) exactReplicates++;
    for (let i = 0; i < n; i++) ranks[label[i]! * B + b] = rank[i]!;
    yield;
  }

  return { intervals: percentileRankIntervals(ranks, n, B, level), ranks, replicates: B, exactReplicates };
}

/**
 * The rank intervals of {@link kemenyRankIntervals} from the replicate ranks
 * (ranks[c * B + b] = rank of candidate c in replicate b), e.g. ranks computed in parts.
 * Complexity: O(n·B log B).
 * @throws AnalyticsError EMPTY_INPUT without candidates or replicates; LENGTH_MISMATCH when
 *   `ranks` does not hold n × B entries; OUT_OF_RANGE for level outside (0, 1).
 */
export function percentileRankIntervals(ranks: Int32Array, n: number, B: number, level = 0.95): CandidateRankInterval[] {
  if (!(Number.isInteger(n) && n >= 1 && Number.isInteger(B) && B >= 1)) {
    throw new AnalyticsError('EMPTY_INPUT', `rank intervals: ${n} candidates, ${B} replicates`);
  }
  if (ranks.length !== n * B) throw new AnalyticsError('LENGTH_MISMATCH', `rank intervals: ${ranks.length} ranks for ${n} × ${B}`);
  if (!(level > 0 && level < 1)) throw new AnalyticsError('OUT_OF_RANGE', `rank intervals: level ${level}`);
  const alpha = 1 - level;
  const intervals: CandidateRankInterval[] = [];
  for (let c = 0; c < n; c++) {
    const sorted = ranks.slice(c * B, (c + 1) * B).sort();
    const lowerQuantile = quantileType7Sorted(sorted, alpha / 2);
    const upperQuantile = quantileType7Sorted(sorted, 1 - alpha / 2);
    intervals.push({
      candidate: c,
      lower: rankFloor(lowerQuantile),
      upper: rankCeil(upperQuantile),
      lowerQuantile,
      upperQuantile,
      median: quantileType7Sorted(sorted, 0.5),
    });
  }
  return intervals;
}

/**
 * One replicate's consensus from its full n×n pairwise matrix (`pairwiseMatrix` semantics):
 * the path for fractional voter weights and infinite scores. O(V·n²) plus the solve.
 */
function denseConsensus(
  profile: Float64Array,
  n: number,
  V: number,
  weights: Float64Array,
  totalWeight: number,
  w: Float64Array,
  priority: Int32Array,
  rank: Int32Array,
  solver: KemenyRepairSolver,
): boolean {
  w.fill(0);
  for (let v = 0; v < V; v++) {
    const weight = weights[v]!;
    if (weight === 0) continue;
    const column = profile.subarray(v * n, (v + 1) * n);
    for (let i = 0; i < n; i++) {
      const si = column[i]!;
      if (Number.isNaN(si)) continue;
      const row = i * n;
      for (let j = 0; j < n; j++) if (scoreGreater(si, column[j]!)) w[row + j] += weight;
    }
  }
  let integral = true;
  for (let k = 0; k < w.length && integral; k++) integral = Number.isInteger(w[k]!);
  return solveInto({ n, w, voterCount: V, totalWeight, integral }, priority, rank, solver);
}

/** Consensus ranks of one replicate's matrix into `rank`; returns whether they are proven optimal. */
function solveInto(matrix: PairwiseMatrix, priority: Int32Array, rank: Int32Array, solver: KemenyRepairSolver): boolean {
  const exact = solver.solve(matrix, priority);
  const order = solver.order;
  for (let p = 0; p < matrix.n; p++) rank[order[p]!] = p + 1;
  return exact;
}

/**
 * Mean of each (candidate, voter) score over the replicates, NaN ignored (NaN when all are):
 * mean[v·n + i] for candidate label[i].
 */
function meanScores(
  data: ArrayLike<number>,
  st: { candidate: number; voter: number; replicate: number },
  label: Int32Array,
  V: number,
  B: number,
): Float64Array {
  const n = label.length;
  const mean = new Float64Array(V * n);
  const { candidate: stCandidate, voter: stVoter, replicate: stReplicate } = st;
  for (let v = 0; v < V; v++) {
    for (let i = 0; i < n; i++) {
      const c = label[i]!;
      const at = c * stCandidate + v * stVoter;
      let sum = 0;
      let count = 0;
      for (let b = 0, k = at; b < B; b++, k += stReplicate) {
        const x = Number(data[k]);
        if (!Number.isNaN(x)) {
          sum += x;
          count++;
        }
      }
      mean[v * n + i] = count > 0 ? sum / count : Number.NaN;
    }
  }
  return mean;
}

/** Candidates by the mean of their non-NaN scores over voters and replicates, highest first (then index). */
function byMeanScore(
  data: ArrayLike<number>,
  st: { candidate: number; voter: number; replicate: number },
  n: number,
  V: number,
  B: number,
): Int32Array {
  const mean = new Float64Array(n);
  for (let c = 0; c < n; c++) {
    let sum = 0;
    let count = 0;
    for (let v = 0; v < V; v++) {
      for (let b = 0; b < B; b++) {
        const x = Number(data[c * st.candidate + v * st.voter + b * st.replicate]);
        if (Number.isFinite(x)) {
          sum += x;
          count++;
        }
      }
    }
    mean[c] = count > 0 ? sum / count : -Infinity;
  }
  return Int32Array.from({ length: n }, (_, c) => c).sort((x, y) => (mean[y]! > mean[x]! ? 1 : mean[y]! < mean[x]! ? -1 : x - y));
}

/**
 * Outward rounding of a rank quantile, with a quantile equal to an integer within the relative
 * tolerance of docs/scoring.md §6 taken as that integer: the levels α/2 and 1 − α/2 are computed in
 * floating point (1 − 0.8 = 0.19999999999999996), so a quantile that is exactly 2 by definition
 * may come out as 1.9999999999999998 and must not widen the interval to 1. O(1).
 */
export function rankFloor(q: number): number {
  const r = Math.round(q);
  return scoresEqual(q, r) ? r : Math.floor(q);
}

/** Upward counterpart of {@link rankFloor}. O(1). */
export function rankCeil(q: number): number {
  const r = Math.round(q);
  return scoresEqual(q, r) ? r : Math.ceil(q);
}

/**
 * Type-7 quantile of sorted values: h = (N−1)p, Q = x[⌊h⌋] + (h−⌊h⌋)(x[⌊h⌋+1] − x[⌊h⌋]).
 * Source: Hyndman & Fan (1996), R `quantile(type = 7)`, NumPy `method="linear"`.
 * Complexity: O(1).
 * @throws AnalyticsError EMPTY_INPUT for no values; OUT_OF_RANGE for p outside [0, 1].
 */
export function quantileType7Sorted(sorted: ArrayLike<number>, p: number): number {
  const N = sorted.length;
  if (N === 0) throw new AnalyticsError('EMPTY_INPUT', 'quantile of no values');
  if (!(p >= 0 && p <= 1)) throw new AnalyticsError('OUT_OF_RANGE', `quantile probability ${p}`);
  const h = (N - 1) * p;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, N - 1);
  return sorted[lo]! + (h - lo) * (sorted[hi]! - sorted[lo]!);
}

export interface BestRun {
  model: string;
  /** Index of the model's best-ranked run. */
  run: number;
  /** 1-based position of that run in the run leaderboard. */
  runRank: number;
  /** 1-based rank of the model among models (order of best runs). */
  modelRank: number;
}

/**
 * Represents each model by its best-ranked run (strategy).
 *
 * Definition: a model's best run is its run placed highest in the consensus `order` of runs
 * (docs/scoring.md §6 candidates, §8 "best strategy"; the order already embeds the macro-average
 * tie-break). Models are returned in the order of their best runs.
 * Complexity: O(R).
 * @param order run indices, best first (a Kemeny–Young `order`).
 * @param runModel runModel[r] = model of run r.
 * @throws AnalyticsError BAD_INPUT when `order` is not a permutation of the runs.
 */
export function bestRunPerModel(order: readonly number[], runModel: readonly string[]): BestRun[] {
  const R = runModel.length;
  if (order.length !== R) throw new AnalyticsError('BAD_INPUT', `bestRunPerModel: order of ${order.length} runs for ${R}`);
  const seen = new Uint8Array(R);
  const out: BestRun[] = [];
  const done = new Set<string>();
  order.forEach((run, p) => {
    if (!Number.isInteger(run) || run < 0 || run >= R || seen[run] === 1) {
      throw new AnalyticsError('BAD_INPUT', 'bestRunPerModel: order is not a permutation of the runs');
    }
    seen[run] = 1;
    const model = runModel[run]!;
    if (done.has(model)) return;
    done.add(model);
    out.push({ model, run, runRank: p + 1, modelRank: out.length + 1 });
  });
  return out;
}

/**
 * Restricts voter score vectors over runs to the given runs (e.g. each model's best run), so
 * models can be aggregated as candidates: result[v][k] = scores[v][runs[k]].
 * Complexity: O(V·K).
 * @throws AnalyticsError BAD_INPUT when a run index is out of range.
 */
export function selectCandidates(scores: readonly ArrayLike<number>[], runs: readonly number[]): Float64Array[] {
  return scores.map((s) =>
    Float64Array.from(runs, (r) => {
      if (!Number.isInteger(r) || r < 0 || r >= s.length) throw new AnalyticsError('BAD_INPUT', `selectCandidates: run ${r}`);
      return s[r]!;
    }),
  );
}
