/**
 * Paper-scale bootstrap grid benchmark (docs/scoring.md §5): 90 runs × 1252 reports × 16 variables
 * (12 categorical with 2–9 classes scored by balanced accuracy, 4 numeric scored by accuracy),
 * B = 1000, all per-variable and macro percentile intervals; the default (WebAssembly SIMD 0/1
 * kernel) and the scalar kernel (packBinary: false), which must agree bit for bit.
 *
 * Writes the synthetic data, the multiplicity matrix and the TypeScript results to
 * bench/.data/analytics-grid/ so grid_numpy.py computes the same grid from the same resamples.
 *
 * `--threads K` (default 2, 0: none) also times the grid as the server computes it on K statistics
 * threads (statistics-threads.ts): the multiplicities drawn on a thread, slices of runs as the
 * server takes them (`gridSliceRuns`: 23 runs for 90 runs on 2 threads; `--slice N` to set it)
 * bootstrapped K at a time, put together, which must equal the one-call grid bit for bit.
 *
 * Usage: node bench/analytics-grid/ts-run.js bench/analytics-grid/grid-bench.ts [--repeats 3] [--threads 2] [--slice N]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bootstrapGrid, bootstrapMultiplicities, percentileInterval } from '../../src/analytics/bootstrap';
import type { GridRun, GridVariable } from '../../src/analytics/bootstrap';
import { ThreadedStatistics } from '../../src/modules/scoring/statistics-threads';
import { serverGridSlice, threadedGrid } from '../support/threaded-grid';

const N = 1252;
const R = 90;
const CATEGORICAL = 12;
const NUMERIC = 4;
const V = CATEGORICAL + NUMERIC;
const B = 1000;
const SEED = 42;
const DATA_SEED = 20240601;

function arg(name: string, fallback: number): number {
  const at = process.argv.indexOf(name);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
}

const REAL = arg('--real', 0);
const WORKLOAD = REAL === 0 ? 'binary' : `real${REAL}`;
const outDir = join(__dirname, '..', '.data', 'analytics-grid', WORKLOAD);

/** xorshift32: deterministic synthetic data independent of the bootstrap generator. */
function xorshift32(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 2 ** 32;
  };
}

function makeData(): { variables: GridVariable[]; runs: GridRun[]; groups: Int32Array; items: Float64Array; classes: number[] } {
  const rnd = xorshift32(DATA_SEED);
  const classes = Array.from({ length: V }, (_, v) => (v < CATEGORICAL ? 2 + (v % 8) : 1));
  const groups = new Int32Array(V * N);
  for (let v = 0; v < V; v++) {
    for (let i = 0; i < N; i++) {
      // ~4% of reports are not annotated for a variable; class frequencies are skewed (rarer
      // high classes), as in the paper's data.
      if (rnd() < 0.04) {
        groups[v * N + i] = -1;
        continue;
      }
      const u = rnd();
      groups[v * N + i] = Math.min(classes[v]! - 1, Math.floor(classes[v]! * u * u));
    }
  }
  const items = new Float64Array(R * V * N);
  for (let r = 0; r < R; r++) {
    const skill = 0.35 + 0.6 * (r / (R - 1));
    for (let v = 0; v < V; v++) {
      const real = v >= V - REAL;
      for (let i = 0; i < N; i++) {
        const g = groups[v * N + i]!;
        // Rarer classes are harder: accuracy falls with the class index.
        const p = g < 0 ? 0 : skill * (1 - 0.05 * g);
        const hit = g >= 0 && rnd() < p;
        // Real-valued: a similarity near 1 for a hit, lower otherwise, never exactly 0 or 1.
        items[(r * V + v) * N + i] = real ? (hit ? 0.999 - 0.3 * rnd() * rnd() : 0.001 + 0.6 * rnd()) : hit ? 1 : 0;
      }
    }
  }
  const variables: GridVariable[] = Array.from({ length: V }, (_, v) => ({
    key: v < CATEGORICAL ? `cat${v}` : `num${v - CATEGORICAL}`,
    groups: groups.subarray(v * N, (v + 1) * N),
  }));
  const runs: GridRun[] = Array.from({ length: R }, (_, r) => ({
    id: `run${r}`,
    items: Array.from({ length: V }, (_, v) => {
      const x = new Float64Array(N);
      const base = (r * V + v) * N;
      for (let i = 0; i < N; i++) x[i] = groups[v * N + i]! < 0 ? NaN : items[base + i]!;
      return x;
    }),
  }));
  return { variables, runs, groups, items, classes };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** Runs per grid slice on the statistics threads: `--slice N`, else as the server takes them (gridSliceRuns). */
function sliceRuns(engine: ThreadedStatistics): number {
  const forced = arg('--slice', 0);
  return forced > 0 ? forced : serverGridSlice(engine, N, R, B);
}

async function main(): Promise<void> {
  const repeats = arg('--repeats', 3);
  const threads = arg('--threads', 2);
  const { variables, runs, groups, items, classes } = makeData();

  const timings: Record<string, number[]> = { default: [], scalar: [] };
  let result = bootstrapGrid({ variables, runs, resamples: B, seed: SEED }); // warm-up
  let scalar = result;
  for (let k = 0; k < repeats; k++) {
    for (const mode of ['default', 'scalar'] as const) {
      const t0 = process.hrtime.bigint();
      const g = bootstrapGrid({ variables, runs, resamples: B, seed: SEED, packBinary: mode === 'default' });
      timings[mode]!.push(Number(process.hrtime.bigint() - t0) / 1e9);
      if (mode === 'default') result = g;
      else scalar = g;
    }
  }
  const threadedTimes: number[] = [];
  let threadedIdentical = true;
  let slice = 0;
  if (threads > 0) {
    const engine = new ThreadedStatistics(threads);
    slice = sliceRuns(engine);
    try {
      await threadedGrid(engine, variables, runs, { reports: N, resamples: B, seed: SEED, slice }); // warm-up: threads started, kernels compiled
      for (let k = 0; k < repeats; k++) {
        const t0 = process.hrtime.bigint();
        const g = await threadedGrid(engine, variables, runs, { reports: N, resamples: B, seed: SEED, slice });
        threadedTimes.push(Number(process.hrtime.bigint() - t0) / 1e9);
        threadedIdentical &&=
          Buffer.compare(Buffer.from(new Uint8Array(g.replicates.buffer)), Buffer.from(result.replicates.buffer)) === 0 &&
          Buffer.compare(Buffer.from(new Uint8Array(g.macroReplicates.buffer)), Buffer.from(result.macroReplicates.buffer)) === 0 &&
          JSON.stringify(g.perVariable) === JSON.stringify(result.perVariable);
      }
    } finally {
      await engine.close();
    }
  }
  // Parts of the default time, measured on their own: drawing the matrix, and the 90 × 16 + 90
  // percentile intervals.
  const parts: Record<string, number[]> = { draw: [], intervals: [] };
  for (let k = 0; k < repeats; k++) {
    let t0 = process.hrtime.bigint();
    bootstrapMultiplicities(N, B, SEED);
    parts.draw!.push(Number(process.hrtime.bigint() - t0) / 1e9);
    t0 = process.hrtime.bigint();
    for (let j = 0; j < R * V; j++) percentileInterval(result.replicates.subarray(j * B, (j + 1) * B));
    for (let r = 0; r < R; r++) percentileInterval(result.macroReplicates.subarray(r * B, (r + 1) * B));
    parts.intervals!.push(Number(process.hrtime.bigint() - t0) / 1e9);
  }
  // Both kernels must give the same bits (the 0/1 kernel's sums are exact integers).
  const bitIdentical =
    Buffer.compare(Buffer.from(result.replicates.buffer), Buffer.from(scalar.replicates.buffer)) === 0 &&
    Buffer.compare(Buffer.from(result.macroReplicates.buffer), Buffer.from(scalar.macroReplicates.buffer)) === 0;

  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, 'groups.i32'), Buffer.from(groups.buffer));
  writeFileSync(join(outDir, 'items.f64'), Buffer.from(items.buffer));
  writeFileSync(join(outDir, 'multiplicities.i32'), Buffer.from(result.multiplicities.buffer));
  // Per (run, variable): point, ciLow, ciHigh; then per run the macro triple.
  const summary = new Float64Array(R * V * 3 + R * 3);
  for (let r = 0; r < R; r++) {
    for (let v = 0; v < V; v++) {
      const e = result.perVariable[r]![v]!;
      summary.set([e.value, e.ciLow, e.ciHigh], (r * V + v) * 3);
    }
    const m = result.macro[r]!;
    summary.set([m.value, m.ciLow, m.ciHigh], R * V * 3 + r * 3);
  }
  writeFileSync(join(outDir, 'ts-summary.f64'), Buffer.from(summary.buffer));
  const report = {
    workload: WORKLOAD,
    realVariables: REAL,
    n: N,
    runs: R,
    variables: V,
    classes,
    resamples: B,
    seed: SEED,
    confidence: result.confidence,
    node: process.version,
    repeats,
    secondsDefault: timings.default,
    secondsScalar: timings.scalar,
    medianDefault: median(timings.default!),
    medianScalar: median(timings.scalar!),
    threads,
    secondsThreaded: threadedTimes,
    medianThreaded: threads > 0 ? median(threadedTimes) : null,
    medianDraw: median(parts.draw!),
    medianIntervals: median(parts.intervals!),
    bitIdentical,
  };
  writeFileSync(join(outDir, 'ts-timing.json'), JSON.stringify(report, null, 2));
  process.stdout.write(
    `TypeScript bootstrapGrid (${R} runs × ${N} reports × ${V} variables, ${REAL} of them real-valued, B=${B}, includes resampling and intervals)\n` +
      `  default (WebAssembly SIMD kernels):    median ${report.medianDefault.toFixed(3)} s over ${repeats} runs [${timings.default!.map((t) => t.toFixed(3)).join(', ')}]\n` +
      `  scalar kernel (packBinary: false):     median ${report.medianScalar.toFixed(3)} s over ${repeats} runs [${timings.scalar!.map((t) => t.toFixed(3)).join(', ')}]\n` +
      `    parts, timed alone: drawing the matrix ${report.medianDraw.toFixed(3)} s, the ${R * V + R} percentile intervals ${report.medianIntervals.toFixed(3)} s (medians)\n` +
      (threads > 0
        ? `  on ${threads} statistics threads (slices of ${slice} runs):  median ${median(threadedTimes).toFixed(3)} s over ${repeats} runs [${threadedTimes.map((t) => t.toFixed(3)).join(', ')}], bit-identical: ${threadedIdentical ? 'yes' : 'NO'}\n`
        : '') +
      `  replicates of the two kernels bit-identical: ${bitIdentical ? 'yes' : 'NO'}\n`,
  );
  if (!bitIdentical || !threadedIdentical) process.exitCode = 1;
}

void main();
