/**
 * Benchmark of Kemeny–Young aggregation (exact DP and heuristic), bootstrap rank intervals and
 * REML variance partitioning at the paper's scale, and the analytics of a cold leaderboard
 * (bootstrap grid, consensus, rank intervals) at 90 and 270 runs with the rank intervals of the
 * previous dense definition (bench/support/baselines) timed in the same run. Prints Markdown tables.
 *
 *   node -r ./bench/kemeny/swc-register.js bench/kemeny/kemeny-bench.ts [--repeats 5] [--leaderboard]
 */
import { bootstrapGrid } from '../../src/analytics/bootstrap';
import { kemeny, kemenyScore, pairwiseMatrix } from '../../src/analytics/kemeny';
import { partitionVariance } from '../../src/analytics/mixed-model';
import { kemenyRankIntervals } from '../../src/analytics/rank-intervals';
import { kemenyRankIntervals as denseRankIntervals } from '../support/baselines/rank-intervals-dense';
import { leaderboardGridInput } from './leaderboard-data';

function lcg(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 48271) % 2147483647) / 2147483647;
}

function normal(rnd: () => number): number {
  return Math.sqrt(-2 * Math.log(rnd() + 1e-300)) * Math.cos(2 * Math.PI * rnd());
}

function time<T>(f: () => T): { ms: number; value: T } {
  const t0 = process.hrtime.bigint();
  const value = f();
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, value };
}

function median(xs: number[]): number {
  const s = xs.slice().sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** Voters with no common structure: one large Condorcet component (the DP's worst case). */
function randomProfile(n: number, V: number, seed: number): number[][] {
  const rnd = lcg(seed);
  return Array.from({ length: V }, () => Array.from({ length: n }, () => Math.floor(rnd() * 100) / 100));
}

/** Leaderboard-like voters: latent run quality plus per-variable noise, scores on a 0.01 grid. */
function structuredProfile(n: number, V: number, seed: number, noise: number): number[][] {
  const rnd = lcg(seed);
  const quality = Array.from({ length: n }, () => rnd());
  return Array.from({ length: V }, () => quality.map((q) => Math.round(100 * (q + noise * normal(rnd))) / 100));
}

const repeatsArg = process.argv.indexOf('--repeats');
const repeats = repeatsArg >= 0 ? Number(process.argv[repeatsArg + 1]) : 5;
// --leaderboard: only the last table (the cold leaderboard analytics).
const leaderboardOnly = process.argv.includes('--leaderboard');
const rows: string[] = [];
const row = (...cells: Array<string | number>): void => {
  rows.push(`| ${cells.join(' | ')} |`);
};

if (!leaderboardOnly) {
  // 1. Exact DP, 20 candidates × 25 voters, decomposition off so the DP sees all 20 candidates.
  for (const n of [20, 22, 23]) {
    const scores = randomProfile(n, 25, 1000 + n);
    const runs = n === 20 ? repeats : 1;
    const times: number[] = [];
    let result = kemeny(scores, { exactLimit: n, decompose: false });
    for (let r = 0; r < runs; r++) {
      const t = time(() => kemeny(scores, { exactLimit: n, decompose: false }));
      times.push(t.ms);
      result = t.value;
    }
    row(
      `exact DP, ${n} × 25, random voters`,
      `${median(times).toFixed(1)} ms (median of ${runs})`,
      `score ${result.score}, lower bound ${result.lowerBound}, exact ${result.exact}`,
    );
    if (n === 20) {
      const h = time(() => kemeny(scores, { exactLimit: 0 }));
      row(
        'heuristic on the same 20 × 25',
        `${h.ms.toFixed(1)} ms`,
        `score ${h.value.score} vs exact ${result.score} (excess ${h.value.score - result.score})`,
      );
    }
  }

  // 2. Heuristic at 90 candidates × 25 voters.
  for (const [label, scores] of [
    ['random voters', randomProfile(90, 25, 7)],
    ['leaderboard-like voters (noise 0.15)', structuredProfile(90, 25, 8, 0.15)],
  ] as const) {
    const times: number[] = [];
    let result = kemeny(scores);
    for (let r = 0; r < repeats; r++) {
      const t = time(() => kemeny(scores));
      times.push(t.ms);
      result = t.value;
    }
    const m = pairwiseMatrix(scores);
    if (kemenyScore(m, result.order) !== result.score) throw new Error('score mismatch');
    const largest = Math.max(...result.componentSizes);
    row(
      `90 × 25, ${label}`,
      `${median(times).toFixed(1)} ms (median of ${repeats})`,
      `score ${result.score}, lower bound ${result.lowerBound}, gap ${result.gap} (${((100 * result.gap) / result.score).toFixed(2)} % of score), exact ${result.exact}, largest Condorcet component ${largest}`,
    );
  }

  // 3. Rank intervals: 90 candidates × 25 voters × B replicates (bootstrap-like perturbations).
  for (const B of [200, 1000]) {
    const n = 90;
    const V = 25;
    const rnd = lcg(99);
    const quality = Array.from({ length: n }, () => rnd());
    const bias = Array.from({ length: n * V }, () => 0.15 * normal(rnd));
    const data = new Float64Array(n * V * B);
    for (let c = 0; c < n; c++) {
      for (let v = 0; v < V; v++) {
        for (let b = 0; b < B; b++) data[(c * V + v) * B + b] = Math.round(100 * (quality[c]! + bias[c * V + v]! + 0.03 * normal(rnd))) / 100;
      }
    }
    const pointScores = Array.from({ length: V }, (_, v) => Array.from({ length: n }, (_, c) => quality[c]! + bias[c * V + v]!));
    const point = kemeny(pointScores);
    const t = time(() => kemenyRankIntervals({ data, candidates: n, voters: V, replicates: B }, { pointOrder: point.order }));
    const widths = t.value.intervals.map((i) => i.upper - i.lower);
    row(
      `rank intervals, 90 × 25 × B = ${B}`,
      `${t.ms.toFixed(0)} ms (${(t.ms / B).toFixed(2)} ms per replicate)`,
      `median interval width ${median(widths)} ranks, exact replicates ${t.value.exactReplicates}/${B}`,
    );
  }

  // 4. Variance partitioning: 15 models × 6 strategies × 1000 reports.
  {
    const rnd = lcg(5);
    const models = 15;
    const strategies = 6;
    const reports = 1000;
    const a = Array.from({ length: models }, () => 0.1 * normal(rnd));
    const s = Array.from({ length: strategies }, () => 0.04 * normal(rnd));
    const y = new Float64Array(models * strategies * reports);
    const model = new Int32Array(y.length);
    const strategy = new Int32Array(y.length);
    let i = 0;
    for (let m = 0; m < models; m++) {
      for (let k = 0; k < strategies; k++) {
        for (let r = 0; r < reports; r++, i++) {
          y[i] = 0.6 + a[m]! + s[k]! + 0.2 * normal(rnd);
          model[i] = m;
          strategy[i] = k;
        }
      }
    }
    const times: number[] = [];
    let fit = partitionVariance(y, [
      { name: 'model', levels: model },
      { name: 'strategy', levels: strategy },
    ]);
    for (let r = 0; r < repeats; r++) {
      const t = time(() =>
        partitionVariance(y, [
          { name: 'model', levels: model },
          { name: 'strategy', levels: strategy },
        ]),
      );
      times.push(t.ms);
      fit = t.value;
    }
    row(
      'REML variance partition, 15 models × 6 strategies × 1000 reports (90 000 scores)',
      `${median(times).toFixed(1)} ms (median of ${repeats})`,
      `shares model ${(100 * fit.components[0]!.share).toFixed(1)} %, strategy ${(100 * fit.components[1]!.share).toFixed(1)} %, residual ${(100 * fit.residualShare).toFixed(1)} %; ${fit.evaluations} criterion evaluations`,
    );
  }

  console.log('| case | time | result |');
  console.log('|---|---|---|');
  for (const r of rows) console.log(r);
}

// 5. The analytics of a cold leaderboard at 90 and 270 runs: the data of
// bench/graphql-leaderboard (1,252 reports, 12 categorical variables with 2–9 classes and 4
// numeric ones, run skill uniform in [0.45, 0.95], 2 % missing answers), B = 1000. The rank
// intervals of the previous per-replicate definition (four starts, each searched to a local
// optimum; bench/support/baselines) run on the same replicates, for the time and for the quality
// of the repaired orders: each replicate's Kemeny score of both orders.
{
  const V = 16;
  const B = 1000;
  const cpu = <T>(f: () => T): { ms: number; value: T } => {
    const c0 = process.cpuUsage();
    const value = f();
    const c = process.cpuUsage(c0);
    return { ms: (c.user + c.system) / 1000, value };
  };
  const out: string[] = [];
  const quality: string[] = [];
  type Times = { grid: number[]; point: number[]; ranks: number[]; previous: number[] };
  const totals = new Map<number, Times>();
  for (const R of [90, 270]) {
    const { variables, runs } = leaderboardGridInput(R);
    const names = runs.map((r) => r.id);
    const t: Times = { grid: [], point: [], ranks: [], previous: [] };
    totals.set(R, t);
    let sizes = '';
    let exactShare = '';
    for (let rep = 0; rep < repeats; rep++) {
      const grid = cpu(() => bootstrapGrid({ variables, runs, resamples: B, seed: 100 + rep }));
      const { points, replicates, macroReplicates } = grid.value;
      const point = cpu(() => {
        const voters = Array.from({ length: V }, (_, v) => Float64Array.from({ length: R }, (_, r) => points[r * V + v]!));
        return kemeny(voters, { macro: grid.value.macroPoints, names });
      });
      sizes = `${Math.max(...point.value.componentSizes)}`;
      const input = { data: replicates, candidates: R, voters: V, replicates: B };
      const options = { pointOrder: point.value.order, names, macro: { data: macroReplicates } };
      const now = cpu(() => kemenyRankIntervals(input, options));
      const previous = cpu(() => denseRankIntervals(input, options));
      const again = kemenyRankIntervals(input, options);
      if (Array.from(again.ranks).some((x, i) => x !== now.value.ranks[i])) throw new Error('rank intervals not deterministic');
      t.grid.push(grid.ms);
      t.point.push(point.ms);
      t.ranks.push(now.ms);
      t.previous.push(previous.ms);
      exactShare = `${now.value.exactReplicates}/${B}`;
      if (rep > 0) continue;
      // Quality: each replicate's Kemeny score of the repaired order against the previous order.
      let differentOrders = 0;
      let worse = 0;
      let better = 0;
      let excessSum = 0;
      let excessMax = 0;
      let relativeMax = 0;
      let relativeSum = 0;
      const order = (ranks: Int32Array, b: number): number[] => {
        const o = new Array<number>(R);
        for (let c = 0; c < R; c++) o[ranks[c * B + b]! - 1] = c;
        return o;
      };
      for (let b = 0; b < B; b++) {
        const a = order(now.value.ranks, b);
        const p = order(previous.value.ranks, b);
        if (a.every((c, i) => c === p[i])) continue;
        differentOrders++;
        const scores = Array.from({ length: V }, (_, v) => Float64Array.from({ length: R }, (_, c) => replicates[(c * V + v) * B + b]!));
        const m = pairwiseMatrix(scores);
        const excess = kemenyScore(m, a) - kemenyScore(m, p);
        const relative = excess / kemenyScore(m, p);
        if (excess > 0) worse++;
        if (excess < 0) better++;
        excessSum += excess;
        relativeSum += relative;
        excessMax = Math.max(excessMax, excess);
        relativeMax = Math.max(relativeMax, relative);
      }
      quality.push(
        `| ${R} runs | ${differentOrders}/${B} | ${worse} / ${better} / ${differentOrders - worse - better} | ` +
          `${(excessSum / B).toFixed(2)} (max ${excessMax}) | ${((100 * relativeSum) / B).toFixed(4)} % (max ${(100 * relativeMax).toFixed(3)} %) |`,
      );
    }
    const total = median(t.grid) + median(t.point) + median(t.ranks);
    out.push(
      `| ${R} | ${median(t.grid).toFixed(0)} ms | ${median(t.point).toFixed(0)} ms | ${median(t.ranks).toFixed(0)} ms (${t.ranks.map((x) => x.toFixed(0)).join(', ')}) | ` +
        `${total.toFixed(0)} ms | ${median(t.previous).toFixed(0)} ms (${t.previous.map((x) => x.toFixed(0)).join(', ')}) | ${sizes} | ${exactShare} |`,
    );
  }
  const a = totals.get(90)!;
  const b = totals.get(270)!;
  const total = (x: Times): number => median(x.grid) + median(x.point) + median(x.ranks);
  console.log('');
  console.log(`Cold leaderboard analytics, B = ${B}, CPU time (user + system) of this process, medians of ${repeats}:`);
  console.log('');
  console.log('| runs | bootstrap grid | point consensus | rank intervals (runs) | total | rank intervals, previous definition, dense (runs) | largest point component | exact replicates |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const r of out) console.log(r);
  console.log('');
  console.log(
    `270 / 90 runs: total ${(total(b) / total(a)).toFixed(2)} (target ≤ 3.6), rank intervals ${(median(b.ranks) / median(a.ranks)).toFixed(2)}; ` +
      `90 runs total / grid alone ${(total(a) / median(a.grid)).toFixed(2)} (target ≤ 5)`,
  );
  console.log('');
  console.log('Repaired orders against the previous definition (first repeat; excess = Kemeny score of the repaired order − previous order, per replicate, mean over all replicates):');
  console.log('');
  console.log('| runs | replicates with a different order | worse / better / equal score | mean excess | mean relative excess |');
  console.log('|---|---|---|---|---|');
  for (const r of quality) console.log(r);
}
