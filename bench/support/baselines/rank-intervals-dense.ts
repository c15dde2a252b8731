/**
 * Speed and quality baseline: the previous per-replicate definition of the rank intervals, one
 * n×n pairwise matrix and one full Kemeny–Young solve by the previous solver
 * ({@link ./kemeny-dense}: four starts, each searched to a local optimum) per replicate.
 * bench/kemeny times src/analytics/rank-intervals.ts against it and compares the Kemeny scores of
 * the two orders per replicate. The intervals from the ranks are src/analytics's. Inputs are
 * trusted: no argument checks. For an independent check see ../oracles/rank-intervals-exact.ts.
 */
import type { PairwiseMatrix } from '../../../src/analytics/kemeny';
import { percentileRankIntervals } from '../../../src/analytics/rank-intervals';
import type { RankIntervalOptions, RankIntervalResult, ReplicateScores } from '../../../src/analytics/rank-intervals';
import { scoreGreater } from '../../../src/analytics/tolerance';
import { kemenyFromMatrix } from './kemeny-dense';

/** The rank intervals of src/analytics/rank-intervals.ts's kemenyRankIntervals, by the previous solver. */
export function kemenyRankIntervals(input: ReplicateScores, options: RankIntervalOptions = {}): RankIntervalResult {
  const { candidates: n, voters: V, replicates: B, data } = input;
  const level = options.level ?? 0.95;
  const st = input.strides ?? { candidate: V * B, voter: B, replicate: 1 };
  const weights = options.voterWeights ?? null;
  const macroIn = options.macro ?? null;
  const macroSt = macroIn?.strides ?? { candidate: B, replicate: 1 };
  const pointOrder = options.pointOrder ?? null;
  const warmStarts = pointOrder === null ? [] : [pointOrder];

  let totalWeight = 0;
  for (let v = 0; v < V; v++) totalWeight += weights === null ? 1 : weights[v]!;
  const w = new Float64Array(n * n);
  const column = new Float64Array(n);
  const macro = new Float64Array(n);
  const macroWeight = new Float64Array(n);
  const ranks = new Int32Array(n * B);
  let exactReplicates = 0;

  for (let b = 0; b < B; b++) {
    w.fill(0);
    macro.fill(0);
    macroWeight.fill(0);
    const base = b * st.replicate;
    for (let v = 0; v < V; v++) {
      const weight = weights === null ? 1 : weights[v]!;
      const vb = base + v * st.voter;
      for (let c = 0; c < n; c++) {
        const x = Number(data[vb + c * st.candidate]);
        column[c] = x;
        if (!Number.isNaN(x)) {
          macro[c] += weight * x;
          macroWeight[c] += weight;
        }
      }
      if (weight === 0) continue;
      for (let i = 0; i < n; i++) {
        const si = column[i]!;
        if (Number.isNaN(si)) continue;
        const row = i * n;
        for (let j = 0; j < n; j++) if (scoreGreater(si, column[j]!)) w[row + j] += weight;
      }
    }
    if (macroIn === null) {
      for (let c = 0; c < n; c++) macro[c] = macroWeight[c]! > 0 ? macro[c]! / macroWeight[c]! : Number.NaN;
    } else {
      for (let c = 0; c < n; c++) macro[c] = Number(macroIn.data[c * macroSt.candidate + b * macroSt.replicate]);
    }
    let integral = true;
    for (let k = 0; k < w.length && integral; k++) integral = Number.isInteger(w[k]!);
    const matrix: PairwiseMatrix = { n, w, voterCount: V, totalWeight, integral };
    const result = kemenyFromMatrix(matrix, {
      exactLimit: options.exactLimit ?? 12,
      macro,
      names: options.names ?? null,
      restarts: 0,
      warmStarts,
      maxSweeps: options.maxSweeps ?? 50,
    });
    if (result.exact) exactReplicates++;
    for (let c = 0; c < n; c++) ranks[c * B + b] = result.rank[c]!;
  }

  return { intervals: percentileRankIntervals(ranks, n, B, level), ranks, replicates: B, exactReplicates };
}
