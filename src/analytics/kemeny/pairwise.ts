/** The pairwise preference matrix of a set of voters, the input of every Kemeny–Young solver. */
import { AnalyticsError } from '../errors';
import { scoreGreater } from '../tolerance';

/**
 * Pairwise preference matrix: `w[i * n + j]` is the (weighted) number of voters that strictly
 * prefer candidate i to candidate j. The diagonal is 0.
 */
export interface PairwiseMatrix {
  readonly n: number;
  readonly w: Float64Array;
  /** Number of voters that built the matrix. */
  readonly voterCount: number;
  /** Sum of voter weights (equals voterCount with unit weights). */
  readonly totalWeight: number;
  /** True when every entry is an integer, so totals compare exactly. */
  readonly integral: boolean;
}

export interface PairwiseOptions {
  /** Non-negative finite weight per voter (default 1 each). */
  voterWeights?: ArrayLike<number> | null;
}

/**
 * Builds the pairwise preference matrix of a set of voters.
 *
 * Definition: w[i][j] = Σ_v weight_v · [s_v(i) > s_v(j)], where "greater" is strict beyond the
 * relative tolerance of docs/scoring.md §6: s_v(i) − s_v(j) > 1e-12 · max(1, |s_v(i)|, |s_v(j)|)
 * ({@link scoreGreater}). A voter that scores i and j equally, or equally up to the last bits of
 * floating-point rounding, prefers neither (docs/scoring.md §6 "Ties in a voter"). A NaN score means the voter has no opinion
 * on that candidate (e.g. a variable without reference values in a bootstrap replicate): it
 * adds nothing to any pair involving the candidate, exactly like a tie.
 *
 * Source: docs/scoring.md §6; Kemeny (1959); Wikipedia "Kemeny–Young method".
 * Complexity: O(V · n²) time, O(n²) memory.
 *
 * @param scores scores[v][c] = voter v's score of candidate c (higher is better).
 * @throws AnalyticsError EMPTY_INPUT without voters or candidates; LENGTH_MISMATCH when score
 *   vectors or weights have different lengths; BAD_INPUT for a negative or non-finite weight.
 */
export function pairwiseMatrix(scores: readonly ArrayLike<number>[], options: PairwiseOptions = {}): PairwiseMatrix {
  if (scores.length === 0) throw new AnalyticsError('EMPTY_INPUT', 'pairwiseMatrix: no voters');
  const n = scores[0]!.length;
  if (n === 0) throw new AnalyticsError('EMPTY_INPUT', 'pairwiseMatrix: no candidates');
  const weights = options.voterWeights ?? null;
  if (weights !== null && weights.length !== scores.length) {
    throw new AnalyticsError(
      'LENGTH_MISMATCH',
      `pairwiseMatrix: ${weights.length} weights for ${scores.length} voters`,
    );
  }
  const w = new Float64Array(n * n);
  let totalWeight = 0;
  for (let v = 0; v < scores.length; v++) {
    const s = scores[v]!;
    if (s.length !== n) {
      throw new AnalyticsError('LENGTH_MISMATCH', `pairwiseMatrix: voter ${v} scores ${s.length} candidates, expected ${n}`);
    }
    const weight = weights === null ? 1 : weights[v]!;
    if (!Number.isFinite(weight) || weight < 0) {
      throw new AnalyticsError('BAD_INPUT', `pairwiseMatrix: voter ${v} has weight ${weight}`);
    }
    totalWeight += weight;
    if (weight === 0) continue;
    for (let i = 0; i < n; i++) {
      const si = s[i]!;
      if (Number.isNaN(si)) continue;
      const row = i * n;
      for (let j = 0; j < n; j++) {
        if (scoreGreater(si, s[j]!)) w[row + j] += weight;
      }
    }
  }
  return { n, w, voterCount: scores.length, totalWeight, integral: isIntegral(w) };
}

/**
 * Wraps an existing n×n matrix (row-major, w[i·n+j] = weight of voters preferring i to j).
 * Without the voters, `totalWeight` is taken as the largest w_ij + w_ji (it only scales the
 * equality tolerance used with fractional weights).
 *
 * Complexity: O(n²).
 * @throws AnalyticsError BAD_INPUT when the length is not n², an entry is negative or not
 *   finite, or the diagonal is not zero.
 */
export function pairwiseFromMatrix(n: number, w: ArrayLike<number>, voterCount = 0): PairwiseMatrix {
  if (!Number.isInteger(n) || n < 1) throw new AnalyticsError('EMPTY_INPUT', `pairwiseFromMatrix: n = ${n}`);
  if (w.length !== n * n) throw new AnalyticsError('BAD_INPUT', `pairwiseFromMatrix: ${w.length} entries for n = ${n}`);
  const copy = Float64Array.from(w);
  let maxPair = 0;
  for (let i = 0; i < n; i++) {
    if (copy[i * n + i] !== 0) throw new AnalyticsError('BAD_INPUT', 'pairwiseFromMatrix: non-zero diagonal');
    for (let j = 0; j < n; j++) {
      const x = copy[i * n + j]!;
      if (!Number.isFinite(x) || x < 0) throw new AnalyticsError('BAD_INPUT', `pairwiseFromMatrix: entry ${x}`);
      if (j > i) maxPair = Math.max(maxPair, x + copy[j * n + i]!);
    }
  }
  return { n, w: copy, voterCount, totalWeight: maxPair, integral: isIntegral(copy) };
}

function isIntegral(w: Float64Array): boolean {
  for (let k = 0; k < w.length; k++) if (!Number.isInteger(w[k]!)) return false;
  return true;
}
