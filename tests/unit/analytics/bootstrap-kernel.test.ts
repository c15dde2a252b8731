import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { unsafeUniformIntDistribution, xoroshiro128plus } from 'pure-rand';
import {
  bootstrapGrid,
  bootstrapMultiplicities,
  groupedMeanReplicates,
  multiplicityRows,
  percentileInterval,
  quantileType7,
} from '../../../src/analytics/bootstrap';
import { releaseKernelMemory, ReplicateKernel } from '../../../src/analytics/bootstrap-kernel';
import * as layout from '../../../src/analytics/bootstrap-kernel-wasm';
import { REPLICATE_KERNEL_WASM, replicateKernelModuleBytes } from '../../../src/analytics/bootstrap-kernel-wasm';
import { groupedMean } from '../../../src/analytics/metrics';

function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Index of the first entry whose bits differ (NaN payloads and the sign of zero count), or −1. */
function firstBitDifference(a: Float64Array, b: Float64Array): number {
  if (a.length !== b.length) return Math.min(a.length, b.length);
  const x = new BigInt64Array(Float64Array.from(a).buffer);
  const y = new BigInt64Array(Float64Array.from(b).buffer);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return i;
  return -1;
}

/**
 * The scalar definition, operation for operation: groups in order of first appearance, each
 * group's reports in index order, N and D summed left to right, Σ_g N/D over groups with D > 0,
 * divided by their number (NaN when none).
 */
function referenceReplicates(
  groups: ArrayLike<number>,
  runs: readonly ArrayLike<number>[],
  W: Int32Array,
  B: number,
): Float64Array {
  const n = groups.length;
  const members = new Map<number, number[]>();
  for (let i = 0; i < n; i++) {
    const g = groups[i]!;
    if (!(g >= 0)) continue;
    if (!members.has(g)) members.set(g, []);
    members.get(g)!.push(i);
  }
  const out = new Float64Array(runs.length * B);
  runs.forEach((x, r) => {
    for (let b = 0; b < B; b++) {
      let sum = 0;
      let present = 0;
      for (const mem of members.values()) {
        let d = 0;
        let s = 0;
        for (const i of mem) {
          d += W[b * n + i]!;
          s += W[b * n + i]! * x[i]!;
        }
        if (d > 0) {
          sum += s / d;
          present++;
        }
      }
      out[r * B + b] = present === 0 ? NaN : sum / present;
    }
  });
  return out;
}

/** The pre-selection definition: sort the finite replicates, then two type-7 quantiles. */
function referenceInterval(replicates: ArrayLike<number>, confidence: number): { low: number; high: number; resamples: number } {
  const finite = Float64Array.from(Array.from(replicates).filter((x) => Number.isFinite(x))).sort();
  if (finite.length === 0) return { low: NaN, high: NaN, resamples: 0 };
  const lowLevel = (1 - confidence) / 2;
  return { low: quantileType7(finite, lowLevel), high: quantileType7(finite, 1 - lowLevel), resamples: finite.length };
}

type RunKind = 'binary' | 'ones' | 'zeros' | 'fraction';

function makeRuns(rnd: () => number, groups: number[], kinds: RunKind[]): Float64Array[] {
  return kinds.map((kind) => {
    const p = rnd();
    return Float64Array.from(groups, (g) => {
      if (g < 0) return rnd() < 0.5 ? NaN : 0;
      if (kind === 'ones') return 1;
      if (kind === 'zeros') return 0;
      if (kind === 'fraction') return rnd();
      return rnd() < p ? 1 : 0;
    });
  });
}

describe('bootstrap kernel: multiplicity draw', () => {
  it('draws exactly what pure-rand xoroshiro128plus + unsafeUniformIntDistribution draw', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 400 }),
        fc.integer({ min: 1, max: 6 }),
        fc.oneof(fc.integer(), fc.constantFrom(0, -1, 2 ** 31, -(2 ** 31) - 5, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER)),
        (n, B, seed) => {
          const rng = xoroshiro128plus(seed);
          const expected = new Int32Array(n * B);
          for (let b = 0; b < B; b++) for (let k = 0; k < n; k++) expected[b * n + unsafeUniformIntDistribution(0, n - 1, rng)]!++;
          expect(bootstrapMultiplicities(n, B, seed)).toEqual(expected);
        },
      ),
      { numRuns: 80 },
    );
  });

  it('draws the same rows in the WebAssembly module and in JavaScript, at once or in pieces, across its chunks', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(1, 2, 3, 7, 1252, 100_000, 300_000),
        fc.integer({ min: 1, max: 5 }),
        fc.integer(),
        fc.integer({ min: 0, max: 5 }),
        (n, B, seed, cut) => {
          const at = Math.min(cut, B);
          const whole = new Int32Array(n * B);
          multiplicityRows(n, seed, false).fill(whole, 0, B);
          // In the module: 100,000 reports make chunks of 2 rows, 300,000 chunks of 1.
          const pieces = new Int32Array(n * B).fill(9);
          const rows = multiplicityRows(n, seed);
          rows.fill(pieces, 0, at);
          rows.fill(pieces, at, B);
          expect(Buffer.compare(Buffer.from(pieces.buffer), Buffer.from(whole.buffer))).toBe(0);
          if (n <= 1252) {
            const rng = xoroshiro128plus(seed);
            const expected = new Int32Array(n * B);
            for (let b = 0; b < B; b++) for (let k = 0; k < n; k++) expected[b * n + unsafeUniformIntDistribution(0, n - 1, rng)]!++;
            expect(whole).toEqual(expected);
          }
        },
      ),
      { numRuns: 30 },
    );
  });
});

describe('bootstrap kernel: WebAssembly module', () => {
  it('assembles to a valid module and runs on this runtime', () => {
    expect(WebAssembly.validate(replicateKernelModuleBytes())).toBe(true);
    const kernel = ReplicateKernel.acquire();
    expect(kernel).not.toBeNull();
    kernel!.release();
  });

  it('is the assembly of wasm/bootstrap-kernel.wat, with the imports, exports and layout the loader expects', () => {
    // scripts/assemble-wasm.mjs into an empty folder gives the bytes the loader reads.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'reportql-wasm-'));
    try {
      execFileSync(process.execPath, [path.resolve(__dirname, '../../../scripts/assemble-wasm.mjs'), dir]);
      const relative = path.relative(path.resolve(__dirname, '../../..'), REPLICATE_KERNEL_WASM);
      expect(relative).toBe(path.join('src', 'analytics', 'wasm', 'bootstrap-kernel.wasm'));
      expect(Buffer.compare(readFileSync(path.join(dir, relative)), Buffer.from(replicateKernelModuleBytes()))).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const mod = new WebAssembly.Module(replicateKernelModuleBytes());
    expect(WebAssembly.Module.imports(mod)).toEqual([{ module: 'env', name: 'memory', kind: 'memory' }]);
    const arity = { sumList: 4, variableBlock: 8, realList: 7, realTile: 9, realTile3: 9, drawRows: 5 };
    const constants = ['LANES', 'ACC_ADDR', 'PRESENT_ADDR', 'GROUP_STRIDE', 'RUN_STRIDE', 'MULTIPLICITY_ADDR', 'REAL_TILE', 'REAL_TILE_BYTES'] as const;
    expect(WebAssembly.Module.exports(mod).sort((a, b) => a.name.localeCompare(b.name))).toEqual(
      [
        ...Object.keys(arity).map((name) => ({ name, kind: 'function' })),
        ...constants.map((name) => ({ name, kind: 'global' })),
      ].sort((a, b) => a.name.localeCompare(b.name)),
    );
    const { exports } = new WebAssembly.Instance(mod, { env: { memory: new WebAssembly.Memory({ initial: 1 }) } });
    for (const [name, params] of Object.entries(arity)) expect([name, (exports[name] as (...args: number[]) => unknown).length]).toEqual([name, params]);
    for (const name of constants) expect([name, (exports[name] as WebAssembly.Global).value]).toEqual([name, layout[name]]);
  });

  it('gives back the instances it keeps for reuse, and makes new ones for the next grid and draw', () => {
    const n = 3000;
    const variables = [{ key: 'v', groups: Int32Array.from({ length: n }, (_, i) => i % 4) }];
    const runs = [{ id: 'r', items: [Float64Array.from({ length: n }, (_, i) => (i % 3 === 0 ? 1 : 0))] }];
    const grid = () => bootstrapGrid({ variables, runs, resamples: 300, seed: 8 }).replicates;
    const before = grid();
    // The grid's kernel holds the transposed matrix (n × 300 bytes and room for tables); the
    // draw's instance its rows.
    expect(releaseKernelMemory()).toBeGreaterThanOrEqual(n * 300);
    expect(releaseKernelMemory()).toBe(0);
    expect(Buffer.compare(Buffer.from(grid().buffer), Buffer.from(before.buffer))).toBe(0);
    expect(releaseKernelMemory()).toBeGreaterThan(0);
  });

  it('declines matrices it cannot sum exactly (entries outside 0…255, row sums over 65535)', () => {
    const kernel = ReplicateKernel.acquire()!;
    try {
      expect(kernel.load(new Int32Array([1, 255, 0, 2]), 2, 2)).toBe(true);
      expect(kernel.load(new Int32Array([1, 256, 0, 2]), 2, 2)).toBe(false);
      expect(kernel.load(new Int32Array([1, -1, 0, 2]), 2, 2)).toBe(false);
      expect(kernel.load(new Int32Array(300).fill(255), 300, 1)).toBe(false);
    } finally {
      kernel.release();
    }
  });
});

describe('bootstrap kernel: replicates are bit-identical to the scalar definition', () => {
  it('on random groups, runs of every kind and B around the 128-replicate blocks', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 120 }),
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.constantFrom<RunKind>('binary', 'binary', 'ones', 'zeros', 'fraction'), { minLength: 1, maxLength: 8 }),
        fc.constantFrom(1, 7, 127, 128, 129, 200, 256, 300),
        fc.double({ min: 0, max: 0.6, noNaN: true }),
        fc.integer(),
        (n, G, kinds, B, missing, seed) => {
          const rnd = lcg(seed);
          const groups = Array.from({ length: n }, () => (rnd() < missing ? -1 : Math.floor(rnd() * rnd() * G)));
          const runs = makeRuns(rnd, groups, kinds);
          const W = bootstrapMultiplicities(n, B, seed);
          const want = referenceReplicates(groups, runs, W, B);
          expect(firstBitDifference(groupedMeanReplicates(groups, runs, W, B), want)).toBe(-1);
          expect(firstBitDifference(groupedMeanReplicates(groups, runs, W, B, null, false), want)).toBe(-1);
        },
      ),
      { numRuns: 120 },
    );
  });

  it('at paper scale (n = 1252, B = 1000), through a strided target', () => {
    const rnd = lcg(11);
    const n = 1252;
    const B = 1000;
    const groups = Array.from({ length: n }, () => (rnd() < 0.04 ? -1 : Math.floor(5 * rnd() * rnd())));
    const runs = makeRuns(rnd, groups, ['binary', 'binary', 'ones', 'fraction', 'binary', 'zeros']);
    const W = bootstrapMultiplicities(n, B, 42);
    const want = referenceReplicates(groups, runs, W, B);
    const out = new Float64Array(3 + 2 * runs.length * B);
    groupedMeanReplicates(groups, runs, W, B, { out, offset: 3, runStride: 2 * B });
    const got = Float64Array.from({ length: runs.length * B }, (_, k) => out[3 + Math.floor(k / B) * 2 * B + (k % B)]!);
    expect(firstBitDifference(got, want)).toBe(-1);
  });

  it('treats scores next to 0 and 1 as fractional', () => {
    const groups = [0, 0, 1, 1, 1, 0];
    const near = [1 - 2 ** -53, 5e-324, 1 + 2 ** -52, -0, 1, 0];
    const runs = near.map((v, k) => Float64Array.from(groups, (_, i) => (i === k ? v : i % 2)));
    const W = bootstrapMultiplicities(groups.length, 50, 3);
    expect(firstBitDifference(groupedMeanReplicates(groups, runs, W, 50), referenceReplicates(groups, runs, W, 50))).toBe(-1);
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (v) => {
        // The kernel's 0/1 test: fl(v·v) = v exactly for v ∈ {0, 1}.
        expect(v * v === v).toBe(v === 0 || v === 1);
      }),
      { numRuns: 2000 },
    );
  });

  it('with supplied matrices: large entries, row sums above n or 65535, negative entries', () => {
    const rnd = lcg(5);
    const cases: { n: number; B: number; entry: () => number }[] = [
      { n: 40, B: 150, entry: () => Math.floor(rnd() * 256) }, // kernel, widening after every report
      { n: 40, B: 60, entry: () => Math.floor(rnd() * 300) }, // declined: entries above 255
      { n: 300, B: 5, entry: () => 200 + Math.floor(rnd() * 56) }, // declined: row sums above 65535
    ];
    for (const { n, B, entry } of cases) {
      const W = Int32Array.from({ length: n * B }, entry);
      const groups = Array.from({ length: n }, (_, i) => (i % 9 === 4 ? -1 : i % 3));
      const runs = makeRuns(rnd, groups, ['binary', 'binary', 'binary', 'ones', 'fraction']);
      const want = referenceReplicates(groups, runs, W, B);
      expect(firstBitDifference(groupedMeanReplicates(groups, runs, W, B), want)).toBe(-1);
      expect(firstBitDifference(groupedMeanReplicates(groups, runs, W, B, null, false), want)).toBe(-1);
    }
    // Negative entries (not a resample; the scalar kernel's own arithmetic): no packing, so the
    // default path gives the scalar kernel's bits.
    const n = 40;
    const W = Int32Array.from({ length: n * 60 }, () => Math.floor(rnd() * 7) - 2);
    const groups = Array.from({ length: n }, (_, i) => i % 3);
    const runs = makeRuns(rnd, groups, ['binary', 'binary', 'binary']);
    expect(firstBitDifference(groupedMeanReplicates(groups, runs, W, 60), groupedMeanReplicates(groups, runs, W, 60, null, false))).toBe(-1);
  });
});

/** Scores a real-valued item can take: similarities, negatives, tiny, huge, exact 0 and 1. */
function realScore(rnd: () => number): number {
  const u = rnd();
  if (u < 0.55) return rnd();
  if (u < 0.65) return -rnd();
  if (u < 0.72) return rnd() * 2 ** -1030;
  if (u < 0.78) return (rnd() - 0.5) * 1e300;
  if (u < 0.84) return 1;
  if (u < 0.9) return 0;
  return u < 0.95 ? -0 : 1 - 2 ** -53;
}

/** Segments as groupedMeanReplicates builds them: groups by first appearance, reports ascending. */
function segmentsOf(groups: number[]): { idx: Int32Array; segStart: Int32Array; G: number } {
  const members = new Map<number, number[]>();
  groups.forEach((g, i) => {
    if (!(g >= 0)) return;
    if (!members.has(g)) members.set(g, []);
    members.get(g)!.push(i);
  });
  const lists = [...members.values()];
  const segStart = new Int32Array(lists.length + 1);
  lists.forEach((l, g) => (segStart[g + 1] = segStart[g]! + l.length));
  return { idx: Int32Array.from(lists.flat()), segStart, G: lists.length };
}

describe('bootstrap kernel: real-valued scores are bit-identical to the scalar definition', () => {
  it('through the kernel itself: runs across tiles of 14, B across batches of 16 and blocks of 128', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 90 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 40 }),
        fc.constantFrom(1, 2, 15, 16, 17, 31, 127, 128, 129, 200),
        fc.integer(),
        (n, G, R, B, seed) => {
          const rnd = lcg(seed);
          const groups = Array.from({ length: n }, () => (rnd() < 0.15 ? -1 : Math.floor(rnd() * rnd() * G)));
          const runs = Array.from({ length: R }, () => Float64Array.from(groups, (g) => (g < 0 ? NaN : realScore(rnd))));
          const W = bootstrapMultiplicities(n, B, seed);
          const want = referenceReplicates(groups, runs, W, B);
          const seg = segmentsOf(groups);
          const kernel = ReplicateKernel.acquire()!;
          try {
            expect(kernel.load(W, n, B)).toBe(true);
            // Every other run, written in reverse order into a strided target.
            const picked = runs.map((_, r) => r).filter((r) => r % 2 === 0).reverse();
            const out = new Float64Array(5 + R * 2 * B).fill(7);
            expect(seg.G > 0 ? kernel.realReplicates(seg, runs, picked, out, 5, 2 * B) : true).toBe(true);
            for (const r of seg.G > 0 ? picked : []) {
              const got = out.subarray(5 + r * 2 * B, 5 + r * 2 * B + B);
              expect(firstBitDifference(got, want.subarray(r * B, (r + 1) * B))).toBe(-1);
            }
            // Slots of runs not asked for are untouched.
            for (let r = 1; r < R; r += 2) expect(out[5 + r * 2 * B]).toBe(7);
          } finally {
            kernel.release();
          }
          expect(firstBitDifference(groupedMeanReplicates(groups, runs, W, B), want)).toBe(-1);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('at paper scale (90 runs, n = 1252, B = 1000) mixed with 0/1 runs, through a strided target', () => {
    const rnd = lcg(23);
    const n = 1252;
    const B = 1000;
    const groups = Array.from({ length: n }, () => (rnd() < 0.04 ? -1 : Math.floor(4 * rnd() * rnd())));
    const runs = Array.from({ length: 90 }, (_, r) =>
      Float64Array.from(groups, (g) => (g < 0 ? NaN : r % 5 === 0 ? Number(rnd() < 0.7) : 0.001 + 0.998 * rnd())),
    );
    const W = bootstrapMultiplicities(n, B, 42);
    const want = referenceReplicates(groups, runs, W, B);
    const out = new Float64Array(1 + 3 * runs.length * B);
    groupedMeanReplicates(groups, runs, W, B, { out, offset: 1, runStride: 3 * B });
    const got = Float64Array.from({ length: runs.length * B }, (_, k) => out[1 + Math.floor(k / B) * 3 * B + (k % B)]!);
    expect(firstBitDifference(got, want)).toBe(-1);
  });

  it('with supplied matrices whose entries reach 255, and groups no replicate draws', () => {
    const rnd = lcg(31);
    const n = 60;
    const B = 70;
    const W = Int32Array.from({ length: n * B }, () => (rnd() < 0.5 ? 0 : Math.floor(rnd() * 256)));
    // Group 3's reports are never drawn: D = 0 in every replicate.
    const groups = Array.from({ length: n }, (_, i) => (i % 10 === 9 ? -1 : i % 4));
    for (let b = 0; b < B; b++) for (let i = 3; i < n; i += 4) W[b * n + i] = 0;
    const runs = Array.from({ length: 20 }, () => Float64Array.from(groups, (g) => (g < 0 ? NaN : realScore(rnd))));
    const want = referenceReplicates(groups, runs, W, B);
    expect(firstBitDifference(groupedMeanReplicates(groups, runs, W, B), want)).toBe(-1);
    expect(firstBitDifference(groupedMeanReplicates(groups, runs, W, B, null, false), want)).toBe(-1);
  });
});

describe('bootstrap kernel: a matrix kept across grids by its id', () => {
  const rnd = lcg(43);
  const n = 2000;
  const B = 200;
  const variables = [0, 1, 2].map((v) => ({ key: `v${v}`, groups: Int32Array.from({ length: n }, () => (rnd() < 0.05 ? -1 : Math.floor(rnd() * (v + 2)))) }));
  const runsOf = (count: number) =>
    Array.from({ length: count }, (_, r) => ({
      id: `r${r}`,
      items: variables.map((_, v) => Float64Array.from({ length: n }, () => (v === 0 ? (rnd() < 0.6 ? 1 : 0) : realScore(rnd)))),
    }));
  const few = runsOf(3);
  const many = runsOf(140);
  const W1 = bootstrapMultiplicities(n, B, 1);
  const W2 = bootstrapMultiplicities(n, B, 2);
  const grid = (runs: typeof few, multiplicities: Int32Array, multiplicitiesId?: number | null) =>
    bootstrapGrid({ variables, runs, multiplicities, multiplicitiesId, resamples: B });

  it('transposes a matrix once for the grids that name it by the same id, and again for another id', () => {
    const first = grid(few, W1, 7);
    // Equal ids promise equal matrices: the kernel keeps W1 (which shows that it did not
    // transpose again); another id, or none, takes the matrix given.
    expect(firstBitDifference(grid(few, W2, 7).replicates, first.replicates)).toBe(-1);
    const second = grid(few, W2, 8);
    expect(firstBitDifference(second.replicates, grid(few, W2).replicates)).toBe(-1);
    expect(firstBitDifference(second.replicates, first.replicates)).not.toBe(-1);
    expect(firstBitDifference(grid(few, W1, null).replicates, first.replicates)).toBe(-1);
    // A matrix of another shape is never taken for the one held.
    const W3 = bootstrapMultiplicities(n - 1, B, 1);
    const small = variables.map((v) => ({ ...v, groups: v.groups.subarray(0, n - 1) }));
    const smallRuns = few.map((r) => ({ ...r, items: r.items.map((x) => x.subarray(0, n - 1)) }));
    expect(
      firstBitDifference(
        bootstrapGrid({ variables: small, runs: smallRuns, multiplicities: W3, multiplicitiesId: 8, resamples: B }).replicates,
        bootstrapGrid({ variables: small, runs: smallRuns, multiplicities: W3, resamples: B }).replicates,
      ),
    ).toBe(-1);
  });

  it('keeps the matrix when a larger grid moves the kernel to a bigger memory', () => {
    const scalar = (runs: typeof few) => bootstrapGrid({ variables, runs, multiplicities: W1, resamples: B, packBinary: false }).replicates;
    // Holding the shared instance makes the grids below start a new kernel, whose memory is
    // sized for the matrix and little more.
    const held = ReplicateKernel.acquire()!;
    try {
      const first = grid(few, W1, 9);
      expect(firstBitDifference(first.replicates, scalar(few))).toBe(-1);
      // 140 real-valued runs need 2 MB of tiles: the kernel moves to a bigger memory and copies
      // the matrix over; the grid after it still finds the matrix.
      expect(firstBitDifference(grid(many, W1, 9).replicates, scalar(many))).toBe(-1);
      expect(firstBitDifference(grid(few, W1, 9).replicates, first.replicates)).toBe(-1);
    } finally {
      held.release();
    }
  });
});

describe('bootstrap kernel: grid points and macro replicates', () => {
  it('points equal metrics.groupedMean bit for bit, whatever the group codes', () => {
    const rnd = lcg(9);
    const n = 80;
    const codeSets = [
      [5, 2, 9, 0], // first appearance differs from numeric order
      [0.5, 1, 2], // non-integer codes: groupedMean's own semantics
      [0],
    ];
    for (const codes of codeSets) {
      const groups = Array.from({ length: n }, () => (rnd() < 0.1 ? -1 : codes[Math.floor(rnd() * codes.length)]!));
      const items = makeRuns(rnd, groups, ['binary', 'fraction', 'ones']);
      const grid = bootstrapGrid({
        variables: [{ key: 'v', groups }],
        runs: items.map((x, r) => ({ id: `r${r}`, items: [x] })),
        resamples: 20,
      });
      const want = Float64Array.from(items, (x) => groupedMean(groups, x));
      expect(firstBitDifference(grid.points, want)).toBe(-1);
    }
  });

  it('macro replicates are the weighted mean over finite variables, in variable order', () => {
    const rnd = lcg(13);
    const n = 25;
    const B = 40;
    // A rare class makes some replicates undefined (NaN) for the second variable.
    const variables = [
      { key: 'a', groups: Array.from({ length: n }, () => Math.floor(rnd() * 3)), weight: 0.3 },
      { key: 'b', groups: Array.from({ length: n }, (_, i) => (i === 0 ? 0 : -1)), weight: 1.7 },
      { key: 'c', groups: Array.from({ length: n }, () => 0), weight: 0 },
    ];
    const runs = [0, 1].map((r) => ({
      id: `r${r}`,
      items: variables.map((v) => makeRuns(rnd, v.groups, [r === 0 ? 'binary' : 'fraction'])[0]!),
    }));
    const grid = bootstrapGrid({ variables, runs, resamples: B, seed: 4 });
    const want = new Float64Array(2 * B);
    for (let r = 0; r < 2; r++) {
      for (let b = 0; b < B; b++) {
        let num = 0;
        let den = 0;
        variables.forEach((v, k) => {
          const x = grid.replicates[(r * 3 + k) * B + b]!;
          if (v.weight === 0 || !Number.isFinite(x)) return;
          num += v.weight * x;
          den += v.weight;
        });
        want[r * B + b] = den === 0 ? NaN : num / den;
      }
    }
    expect(grid.replicates.some((x) => Number.isNaN(x))).toBe(true);
    expect(firstBitDifference(grid.macroReplicates, want)).toBe(-1);
  });
});

describe('bootstrap kernel: percentile intervals by selection', () => {
  const value = fc.oneof(
    fc.double(),
    fc.constantFrom(0, -0, 1, NaN, Infinity, -Infinity),
    fc.integer({ min: -3, max: 3 }).map((k) => k / 4),
  );

  it('equal the sorted-array definition bit for bit (ties, ±0, non-finite values, every level)', () => {
    fc.assert(
      fc.property(
        fc.array(value, { maxLength: 1500 }),
        fc.oneof(fc.constantFrom(0.95, 0.9, 0.5, 0.99, 0.01), fc.double({ min: 0.001, max: 0.999, noNaN: true })),
        (xs, confidence) => {
          const got = percentileInterval(xs, confidence);
          const want = referenceInterval(xs, confidence);
          expect(firstBitDifference(Float64Array.of(got.low, got.high, got.resamples), Float64Array.of(want.low, want.high, want.resamples))).toBe(-1);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('on long vectors (histogram, tail buffers, selection), with ties, outliers, non-finite values', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 64, max: 2500 }),
        fc.integer({ min: 1, max: 1000 }),
        fc.double({ min: 0, max: 0.05, noNaN: true }),
        fc.oneof(fc.constantFrom(0.95, 0.9, 0.5), fc.double({ min: 0.001, max: 0.999, noNaN: true })),
        fc.constantFrom(0, 0, 1e12, -1e300, 1e-300),
        fc.integer(),
        (m, levels, nonFinite, confidence, outlier, seed) => {
          const rnd = lcg(seed);
          const xs = Float64Array.from({ length: m }, () => (rnd() < nonFinite ? NaN : Math.floor(rnd() * levels) / levels - 0.25));
          // An outlier crowds the other values into one histogram bucket (another method then),
          // a tiny one makes the range a subnormal-scale problem.
          if (outlier !== 0) xs[Math.floor(rnd() * m)] = outlier;
          const got = percentileInterval(xs, confidence);
          const want = referenceInterval(xs, confidence);
          expect(firstBitDifference(Float64Array.of(got.low, got.high, got.resamples), Float64Array.of(want.low, want.high, want.resamples))).toBe(-1);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('on large replicate vectors in sorted, reversed and random order', () => {
    const rnd = lcg(21);
    for (const m of [64, 599, 601, 1000, 5000]) {
      const base = Array.from({ length: m }, () => Math.round(rnd() * 200) / 200);
      const orders = [base, [...base].sort((a, b) => a - b), [...base].sort((a, b) => b - a)];
      for (const xs of orders) {
        for (const confidence of [0.95, 0.5, 0.8, 0.999]) {
          const got = percentileInterval(xs, confidence);
          const want = referenceInterval(xs, confidence);
          expect([got.low, got.high]).toEqual([want.low, want.high]);
        }
      }
    }
  });
});
