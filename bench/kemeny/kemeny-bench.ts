/**
 * Benchmark of Kemeny–Young aggregation (exact DP and heuristic), bootstrap rank intervals and
 * REML variance partitioning at the paper's scale, and the analytics of a cold leaderboard
 * (bootstrap grid, consensus, rank intervals) at 90 and 270 runs with the rank intervals of the
 * dense definition (tests/unit/analytics/oracles) timed in the same run. Prints Markdown tables.
 *
 *   node -r ./bench/kemeny/swc-register.js bench/kemeny/kemeny-bench.ts [--repeats 5]
 */
import { bootstrapGrid } from '../../src/analytics/bootstrap';
import type { GridRun, GridVariable } from '../../src/analytics/bootstrap';
import { kemeny, kemenyScore, pairwiseMatrix } from '../../src/analytics/kemeny';
import { partitionVariance } from '../../src/analytics/mixed-model';
import { kemenyRankIntervals } from '../../src/analytics/rank-intervals';
import { kemenyRankIntervals as denseRankIntervals } from '../support/oracles/rank-intervals-dense';

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
const rows: string[] = [];
const row = (...cells: Array<string | number>): void => {
  rows.push(`| ${cells.join(' | ')} |`);
};

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

// 5. The analytics of a cold leaderboard at 90 and 270 runs: the data of
// bench/graphql-leaderboard (1,252 reports, 12 categorical variables with 2–9 classes and 4
// numeric ones, run skill uniform in [0.45, 0.95], 2 % missing answers), B = 1000.
{
  const lcg32 = (seed: number): (() => number) => {
    let x = seed >>> 0;
    return () => {
      x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
      return x / 2 ** 32;
    };
  };
  const N = 1252;
  const V = 16;
  const B = 1000;
  const cpu = <T>(f: () => T): { ms: number; value: T } => {
    const c0 = process.cpuUsage();
    const value = f();
    const c = process.cpuUsage(c0);
    return { ms: (c.user + c.system) / 1000, value };
  };
  const out: string[] = [];
  const totals = new Map<number, { dense: number[]; now: number[]; rest: number[] }>();
  for (const R of [90, 270]) {
    const rnd = lcg32(20261129);
    const classes = Array.from({ length: V }, (_, v) => (v < 12 ? 2 + (v % 8) : 10));
    const truth = Array.from({ length: V }, (_, v) => Int32Array.from({ length: N }, () => Math.floor(rnd() * classes[v]!)));
    const variables: GridVariable[] = truth.map((g, v) => ({ key: `v${v}`, groups: v < 12 ? g : new Int32Array(N) }));
    const runs: GridRun[] = Array.from({ length: R }, (_, r) => {
      const skill = 0.45 + 0.5 * rnd();
      return {
        id: `run${r}`,
        items: truth.map((g, v) =>
          Float64Array.from(g, (t) => {
            const u = rnd();
            if (u < 0.02) return 0;
            if (u < skill) return 1;
            return Math.floor(rnd() * classes[v]!) === t ? 1 : 0;
          }),
        ),
      };
    });
    const names = runs.map((r) => r.id);
    const t = { dense: [] as number[], now: [] as number[], rest: [] as number[] };
    totals.set(R, t);
    let sizes = '';
    for (let rep = 0; rep < repeats; rep++) {
      const rest = cpu(() => {
        const grid = bootstrapGrid({ variables, runs, resamples: B, seed: 100 + rep });
        const voters = Array.from({ length: V }, (_, v) => Float64Array.from({ length: R }, (_, r) => grid.points[r * V + v]!));
        return { grid, point: kemeny(voters, { macro: grid.macroPoints, names }) };
      });
      const { grid, point } = rest.value;
      sizes = `largest point component ${Math.max(...point.componentSizes)}`;
      const input = { data: grid.replicates, candidates: R, voters: V, replicates: B };
      const options = { pointOrder: point.order, names, macro: { data: grid.macroReplicates } };
      const now = cpu(() => kemenyRankIntervals(input, options));
      const dense = cpu(() => denseRankIntervals(input, options));
      if (Array.from(now.value.ranks).some((x, i) => x !== dense.value.ranks[i])) throw new Error('rank intervals differ from the dense definition');
      t.rest.push(rest.ms);
      t.now.push(now.ms);
      t.dense.push(dense.ms);
    }
    out.push(
      `| ${R} runs | ${median(t.rest).toFixed(0)} ms | ${median(t.dense).toFixed(0)} ms (${t.dense.map((x) => x.toFixed(0)).join(', ')}) | ${median(t.now).toFixed(0)} ms (${t.now.map((x) => x.toFixed(0)).join(', ')}) | ${(median(t.dense) / median(t.now)).toFixed(2)} | ${sizes} |`,
    );
  }
  const a = totals.get(90)!;
  const b = totals.get(270)!;
  const ratio = (k: 'dense' | 'now'): string =>
    ((median(b[k]) + median(b.rest)) / (median(a[k]) + median(a.rest))).toFixed(2);
  console.log('');
  console.log(`Cold leaderboard analytics, B = ${B}, CPU time (user + system) of this process, medians of ${repeats}:`);
  console.log('');
  console.log('| runs | grid + point consensus | rank intervals, dense definition (runs) | rank intervals (runs) | dense / now | |');
  console.log('|---|---|---|---|---|---|');
  for (const r of out) console.log(r);
  console.log('');
  console.log(
    `270 / 90 runs: rank intervals ${(median(b.dense) / median(a.dense)).toFixed(2)} (dense definition) -> ${(median(b.now) / median(a.now)).toFixed(2)}; ` +
      `grid + point + rank intervals ${ratio('dense')} (dense definition) -> ${ratio('now')}`,
  );
}
