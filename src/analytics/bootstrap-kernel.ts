/**
 * Kernel for bootstrap replicates of grouped means (docs/scoring.md §5), run in WebAssembly SIMD
 * (the module is assembled from wasm/bootstrap-kernel.wat, see bootstrap-kernel-wasm.ts):
 * {@link ReplicateKernel.replicates} for 0/1 item scores (below), and
 * {@link ReplicateKernel.realReplicates} for real-valued ones (cosine, list similarity, …).
 *
 * For 0/1 scores the numerator N_gr(w) = Σ_{i∈g} w_i x_ri is an integer count, so it can be
 * summed in any order without changing a bit. The kernel therefore
 * - stores the multiplicity matrix transposed, as u8, in blocks of 128 replicates (one report's
 *   128 multiplicities are contiguous), so one report adds to 128 replicates with 8 vector adds;
 * - sums, per (run, group), only the minority value: the reports scored 1 when they are at most
 *   half of the group, else the reports scored 0, with N = D_g − Σ (D_g computed once per group
 *   and replicate). Work per (run, group) is min(#ones, #zeros) reports, not n_g;
 * - finishes each replicate with the scalar definition's float operations in the same order
 *   (Σ over groups in group order of N/D_g for D_g > 0, then / #groups present), so replicates
 *   are bit-identical to the scalar kernel's.
 * Real-valued scores: runs in f64 lanes, 14 runs per pass over a replicate's reports with w > 0
 * (a report with w = 0 adds ±0 to the scalar sum, which changes no bit), the scalar definition's
 * operations in its order, so replicates are bit-identical to the scalar kernel's too.
 * Exactness: lanes accumulate in u8 and are widened to u16 every ⌊255 / max w⌋ reports; u16 lane
 * sums never exceed a row sum of the multiplicity matrix, which {@link ReplicateKernel.load}
 * requires to be ≤ 65535 (it declines the matrix otherwise and the caller uses the scalar kernel).
 */
import {
  GROUP_STRIDE,
  LANES,
  MULTIPLICITY_ADDR,
  REAL_TILE,
  REAL_TILE_BYTES,
  RUN_STRIDE,
  replicateKernelModuleBytes,
} from './bootstrap-kernel-wasm';
import { AnalyticsError } from './errors';

const PAGE = 65536;
/** Reused instances keep at most this much memory. */
const KEEP_BYTES = 64 << 20;
/** Keep every address well inside i32 arithmetic. */
const MAX_BYTES = 1 << 30;
const MAX_LANE_SUM = 65535;
/** Reports per tile of the matrix's transposition in `load` (256 × 128 bytes of destination, in L1). */
const LOAD_TILE = 256;
/** Reports summed between two widenings are capped so pointer arithmetic cannot overflow. */
const MAX_FLUSH = 1 << 20;

type VariableBlockFn = (
  base: number,
  G: number,
  groupTab: number,
  R: number,
  runTab: number,
  den: number,
  out: number,
  flush: number,
) => void;

type RealListFn = (
  wbase: number,
  G: number,
  groupTab: number,
  list: number,
  den: number,
  listStride: number,
  denStride: number,
) => number;
type RealTileFn = (
  nb: number,
  G: number,
  list: number,
  listStride: number,
  den: number,
  denStride: number,
  X: number,
  sums: number,
  sumsStride: number,
) => void;

/** Runs of `realTile3`, the pass over a last tile that holds few runs (3 f64x2 accumulators). */
const REAL_TILE_SHORT = 6;

/** Replicates per batch of the real-valued kernel: their pair lists stay in cache across tiles. */
const REAL_BATCH = 16;

let cachedModule: WebAssembly.Module | null | undefined;
let shared: ReplicateKernel | null = null;

function kernelModule(): WebAssembly.Module | null {
  if (cachedModule === undefined) {
    // A missing module file is a broken build and throws; a runtime without WebAssembly (SIMD)
    // is expected and falls back: callers use the scalar kernel.
    const bytes = typeof WebAssembly === 'object' ? replicateKernelModuleBytes() : null;
    try {
      cachedModule = bytes ? new WebAssembly.Module(bytes) : null;
    } catch {
      cachedModule = null;
    }
  }
  return cachedModule;
}

type DrawRowsFn = (n: number, rows: number, state: number, out: number, limit: number) => void;

/** Rows drawn per call of `drawRows`: about this many bytes of counts. */
const DRAW_CHUNK_BYTES = 1 << 20;
/** The drawing instance is kept while its memory is at most this big. */
const DRAW_KEEP_BYTES = 8 << 20;
/** Where drawRows keeps the generator's four state words, and where its rows start. */
const DRAW_STATE = 0;
const DRAW_ROWS = 64;
let drawing: { memory: WebAssembly.Memory; drawRows: DrawRowsFn } | null = null;

/**
 * Rows from … to − 1 of the multiplicity matrix into w (B × n), drawn by the module's drawRows
 * from the generator state words `state` (multiplicityRows' four, updated in place), in chunks of
 * about a megabyte of counts. Returns false, touching nothing, where WebAssembly is missing or a
 * row would not fit (n above 2^24); the caller then draws in JavaScript, the same numbers.
 */
export function drawMultiplicityRows(n: number, state: number[], w: Int32Array, from: number, to: number): boolean {
  if (!(n >= 1 && n <= 1 << 24)) return false;
  const mod = kernelModule();
  if (!mod) return false;
  const rows = Math.max(1, Math.floor(DRAW_CHUNK_BYTES / (4 * n)));
  const bytes = DRAW_ROWS + 4 * n * Math.min(rows, Math.max(1, to - from));
  let use = drawing;
  if (!use || use.memory.buffer.byteLength < bytes) {
    const memory = new WebAssembly.Memory({ initial: Math.ceil(bytes / PAGE) });
    const instance = new WebAssembly.Instance(mod, { env: { memory } });
    use = { memory, drawRows: instance.exports.drawRows as DrawRowsFn };
    if (bytes <= DRAW_KEEP_BYTES) drawing = use;
  }
  const i32 = new Int32Array(use.memory.buffer);
  for (let q = 0; q < 4; q++) i32[(DRAW_STATE >> 2) + q] = state[q]!;
  // Accept a step's word v + 2^31 while it is below the largest multiple of n under 2^32.
  const limit = (n > 2 ? Math.floor(0x100000000 / n) * n - 1 : 0xffffffff) | 0;
  for (let b = from; b < to; b += rows) {
    const k = Math.min(rows, to - b);
    const at = DRAW_ROWS >> 2;
    i32.fill(0, at, at + k * n);
    use.drawRows(n, k, DRAW_STATE, DRAW_ROWS, limit);
    w.set(i32.subarray(at, at + k * n), b * n);
  }
  for (let q = 0; q < 4; q++) state[q] = i32[(DRAW_STATE >> 2) + q]!;
  return true;
}

/**
 * Drops the kernel instance and the drawing instance kept for reuse (the compiled module
 * stays); returns the bytes of memory they held, which are free once the heap is collected. A
 * statistics thread does this between computations. The next grid or draw makes new ones.
 */
export function releaseKernelMemory(): number {
  const bytes = (shared?.memoryBytes ?? 0) + (drawing?.memory.buffer.byteLength ?? 0);
  shared = null;
  drawing = null;
  return bytes;
}

/** One variable's reports in group-segment order, as the scalar kernel prepares them. */
export interface KernelSegments {
  /** idx[k] = report at position k (annotated reports only, grouped). */
  idx: Int32Array;
  /** Group g occupies positions segStart[g] … segStart[g+1] − 1. */
  segStart: Int32Array;
  G: number;
}

/**
 * A WebAssembly instance holding one multiplicity matrix. Not re-entrant (synchronous use only);
 * {@link ReplicateKernel.acquire} one per grid and release it. O(B·n) memory for the matrix.
 */
export class ReplicateKernel {
  private memory!: WebAssembly.Memory;
  private variableBlock!: VariableBlockFn;
  private realList!: RealListFn;
  private realTile!: RealTileFn;
  private realTile3!: RealTileFn;
  private n = 0;
  private B = 0;
  private blocks = 0;
  private flush = 1;
  private loaded = false;
  /** The `matrixId` of the matrix in memory, while its transposed copy is intact. */
  private matrixId: number | null = null;

  private constructor(
    private readonly mod: WebAssembly.Module,
    bytes: number,
  ) {
    this.instantiate(bytes, 0);
  }

  /**
   * A new memory of at least `bytes` (never grown later: see replicateKernelModuleBytes) and an
   * instance on it; the first `keep` bytes of the previous memory are copied over.
   */
  private instantiate(bytes: number, keep: number): void {
    const memory = new WebAssembly.Memory({ initial: Math.max(1, Math.ceil(bytes / PAGE)) });
    if (keep > 0) new Uint8Array(memory.buffer).set(new Uint8Array(this.memory.buffer, 0, keep));
    const instance = new WebAssembly.Instance(this.mod, { env: { memory } });
    this.memory = memory;
    this.variableBlock = instance.exports.variableBlock as VariableBlockFn;
    this.realList = instance.exports.realList as RealListFn;
    this.realTile = instance.exports.realTile as RealTileFn;
    this.realTile3 = instance.exports.realTile3 as RealTileFn;
  }

  /**
   * The kernel instance, or null when this runtime has no WebAssembly SIMD. One instance is
   * reused while its memory stays small (a fresh function object per call would make V8
   * re-optimise its callers on every grid); a larger one is handed out once and dropped.
   */
  static acquire(): ReplicateKernel | null {
    const mod = kernelModule();
    if (!mod) return null;
    const kernel = shared ?? new ReplicateKernel(mod, PAGE);
    shared = null;
    return kernel;
  }

  /** Bytes of this instance's memory. */
  get memoryBytes(): number {
    return this.memory.buffer.byteLength;
  }

  /** Give the instance back for reuse (kept only while its memory is at most 64 MiB). */
  release(): void {
    this.loaded = false;
    if (this.memory.buffer.byteLength <= KEEP_BYTES) shared = this;
  }

  /**
   * Make the memory hold `bytes`, keeping its first `keep` bytes; a larger memory gets a quarter
   * more room than asked so the next variables usually fit.
   */
  private ensure(bytes: number, keep: number): boolean {
    if (bytes > MAX_BYTES) return false;
    if (bytes > this.memory.buffer.byteLength) this.instantiate(Math.min(MAX_BYTES, bytes + (bytes >> 2)), keep);
    return true;
  }

  /**
   * Copy a B × n multiplicity matrix into the kernel (transposed, u8, blocks of 128 replicates).
   * Returns false, leaving no matrix loaded, when an entry is outside 0…255, a row sums to more
   * than 65535 or the blocks would not fit; the caller then uses the scalar kernel. O(B·n).
   * With a `matrixId` (the caller's promise: the same id, the same n × B entries), a kernel
   * whose last loaded matrix had that id keeps its transposed copy and returns at once: the
   * slices of one grid on a statistics thread transpose their matrix once (47 ms at 20,000
   * reports × 1,000 resamples).
   */
  load(W: Int32Array | Uint8Array, n: number, B: number, matrixId: number | null = null): boolean {
    this.loaded = false;
    if (matrixId !== null && matrixId === this.matrixId && n === this.n && B === this.B) {
      this.loaded = true;
      return true;
    }
    this.matrixId = null;
    const blocks = Math.ceil(B / LANES);
    const end = MULTIPLICITY_ADDR + blocks * n * LANES;
    // Room for the matrix and, typically, the largest variable's tables and lists.
    if (!this.ensure(end + Math.max(1 << 20, end >> 1), 0)) return false;
    const u8 = new Uint8Array(this.memory.buffer);
    // Lanes past B stay 0 so they add nothing.
    u8.fill(0, MULTIPLICITY_ADDR + (blocks - 1) * n * LANES, end);
    // In tiles of LANES replicates × LOAD_TILE reports: a tile's destination (LOAD_TILE reports'
    // 128-byte lane rows) stays in cache while its replicates are copied in, where a whole row
    // at a time would touch a new cache line per entry.
    let maxW = 0;
    const rowSums = new Float64Array(LANES);
    for (let j = 0; j < blocks; j++) {
      const b0 = j * LANES;
      const lanes = Math.min(LANES, B - b0);
      const base = MULTIPLICITY_ADDR + j * n * LANES;
      rowSums.fill(0);
      for (let i0 = 0; i0 < n; i0 += LOAD_TILE) {
        const i1 = Math.min(n, i0 + LOAD_TILE);
        for (let l = 0; l < lanes; l++) {
          const src = (b0 + l) * n;
          let dst = base + i0 * LANES + l;
          let rowSum = 0;
          for (let i = i0; i < i1; i++, dst += LANES) {
            const w = W[src + i]!;
            if (!(w >= 0 && w <= 255)) return false;
            if (w > maxW) maxW = w;
            rowSum += w;
            u8[dst] = w;
          }
          rowSums[l] += rowSum;
        }
      }
      for (let l = 0; l < lanes; l++) if (rowSums[l]! > MAX_LANE_SUM) return false;
    }
    this.n = n;
    this.B = B;
    this.blocks = blocks;
    this.flush = maxW === 0 ? MAX_FLUSH : Math.min(MAX_FLUSH, Math.floor(255 / maxW));
    this.matrixId = matrixId;
    this.loaded = true;
    return true;
  }

  /**
   * Replicates of one variable for the runs `runs` whose item scores are all 0 or 1: run r's
   * scores are bits[r·nv + k] in segment order (nv = idx.length) and their per-group sums
   * groupSums[r·G + g]; replicate b of run r goes to out[offset + r·runStride + b]. Returns
   * false, writing nothing, when the variable's tables would not fit in memory (the caller then
   * uses the scalar kernel). O(B·Σ_{r,g} min(#ones, #zeros) / 16) vector operations.
   *
   * @throws AnalyticsError BAD_INPUT when no matrix is loaded.
   */
  replicates(
    seg: KernelSegments,
    bits: Uint8Array,
    groupSums: Float64Array,
    runs: readonly number[],
    out: Float64Array,
    offset: number,
    runStride: number,
  ): boolean {
    if (!this.loaded) throw new AnalyticsError('BAD_INPUT', 'ReplicateKernel: no multiplicity matrix loaded');
    const { idx, segStart, G } = seg;
    const R = runs.length;
    const nv = idx.length;
    const { n, B, blocks } = this;
    // Layout after the matrix: group table, run table, den/mask, run outputs, lists.
    const groupTab = MULTIPLICITY_ADDR + blocks * n * LANES;
    const runTab = groupTab + 8 * G;
    const den = align16(runTab + 8 * R * G);
    const outAddr = den + GROUP_STRIDE * G;
    const lists = outAddr + RUN_STRIDE * R;
    // Lists: every group's reports, then per (run, group) at most ⌊n_g / 2⌋ minority reports
    // (+1: the branch-free fill writes one slot past the end).
    if (!this.ensure(lists + 4 * (nv + R * Math.floor(nv / 2) + R * G + 1), groupTab)) return false;
    const buf = this.memory.buffer;
    const i32 = new Int32Array(buf);
    const f64 = new Float64Array(buf);
    const all = lists >> 2;
    for (let k = 0; k < nv; k++) i32[all + k] = idx[k]! * LANES;
    for (let g = 0; g < G; g++) {
      i32[(groupTab >> 2) + 2 * g] = (all + segStart[g]!) << 2;
      i32[(groupTab >> 2) + 2 * g + 1] = segStart[g + 1]! - segStart[g]!;
    }
    let at = all + nv;
    for (let q = 0; q < R; q++) {
      const r = runs[q]!;
      const row = r * nv;
      for (let g = 0; g < G; g++) {
        const s = segStart[g]!;
        const e = segStart[g + 1]!;
        const ones = groupSums[r * G + g]!;
        const tab = (runTab >> 2) + 2 * (q * G + g);
        i32[tab] = at << 2;
        // Branch-free: write every report, advance past it only when it has the listed value.
        const flip = 2 * ones <= e - s ? 0 : 1;
        i32[tab + 1] = flip === 0 ? ones : ~(e - s - ones);
        for (let k = s; k < e; k++) {
          i32[at] = i32[all + k]!;
          at += bits[row + k]! ^ flip;
        }
      }
    }
    for (let j = 0; j < blocks; j++) {
      this.variableBlock(MULTIPLICITY_ADDR + j * n * LANES, G, groupTab, R, runTab, den, outAddr, this.flush);
      const len = Math.min(LANES, B - j * LANES);
      for (let q = 0; q < R; q++) {
        const src = (outAddr + q * RUN_STRIDE) >> 3;
        out.set(f64.subarray(src, src + len), offset + runs[q]! * runStride + j * LANES);
      }
    }
    return true;
  }

  /**
   * Replicates of one variable for the runs `runs` whose item scores are real numbers: run r's
   * score of report idx[k] is runItems[r][idx[k]] (finite, checked by the caller); replicate b
   * of run r goes to out[offset + r·runStride + b]. Per replicate, the reports with w > 0 are
   * listed once in segment order and each (run, group) numerator is the scalar definition's
   * left-to-right sum of fl(w·x), 2 runs per f64x2 vector and 2 · REAL_TILE runs per pass, so
   * the replicates are bit-identical to the scalar kernel's. Returns false, writing nothing, when
   * the tables would not fit in memory (or G > 65535). O(B · (n_annotated / 2 + ⌈R / 14⌉ ·
   * #{w > 0} · 7)) vector operations, O(n · R) memory beside the matrix.
   *
   * @throws AnalyticsError BAD_INPUT when no matrix is loaded.
   */
  realReplicates(
    seg: KernelSegments,
    runItems: readonly ArrayLike<number>[],
    runs: readonly number[],
    out: Float64Array,
    offset: number,
    runStride: number,
  ): boolean {
    if (!this.loaded) throw new AnalyticsError('BAD_INPUT', 'ReplicateKernel: no multiplicity matrix loaded');
    const { idx, segStart, G } = seg;
    const R = runs.length;
    const nv = idx.length;
    const { n, B, blocks } = this;
    // realList returns two 16-bit group counts.
    if (G > 0xffff) return false;
    const tileRuns = 2 * REAL_TILE;
    const T = Math.ceil(R / tileRuns);
    const tileBytes = nv * REAL_TILE_BYTES;
    const listStride = 16 * nv;
    const denStride = 16 * G;
    const sumsStride = T * REAL_TILE_BYTES;
    // Layout after the matrix: group table, report list, per replicate of a batch its pair list,
    // denominators and sums, then the scores tile by tile (tile t, report k: the tile's runs).
    const groupTab = MULTIPLICITY_ADDR + blocks * n * LANES;
    const all = groupTab + 8 * G;
    const lists = align16(all + 4 * nv);
    const dens = lists + REAL_BATCH * listStride;
    const sums = align16(dens + REAL_BATCH * denStride);
    const X = sums + REAL_BATCH * sumsStride;
    if (!this.ensure(X + T * tileBytes, groupTab)) return false;
    const buf = this.memory.buffer;
    const i32 = new Int32Array(buf);
    const f64 = new Float64Array(buf);
    for (let k = 0; k < nv; k++) i32[(all >> 2) + k] = idx[k]! * LANES;
    for (let g = 0; g < G; g++) {
      i32[(groupTab >> 2) + 2 * g] = all + 4 * segStart[g]!;
      i32[(groupTab >> 2) + 2 * g + 1] = segStart[g + 1]! - segStart[g]!;
    }
    // Runs past R in the last tile score 0 and are never read.
    const x0 = X >> 3;
    f64.fill(0, x0, x0 + T * (tileBytes >> 3));
    for (let q = 0; q < R; q++) {
      const items = runItems[runs[q]!]!;
      let at = x0 + Math.floor(q / tileRuns) * (tileBytes >> 3) + (q % tileRuns);
      for (let k = 0; k < nv; k++, at += tileRuns) f64[at] = items[idx[k]!]!;
    }
    const present = new Int32Array(REAL_BATCH);
    for (let b0 = 0; b0 < B; b0 += REAL_BATCH) {
      const nb = Math.min(REAL_BATCH, B - b0);
      // Two replicates per call (adjacent lanes of one block: batches start at multiples of 16).
      for (let j = 0; j < nb; j += 2) {
        const b = b0 + j;
        const wbase = MULTIPLICITY_ADDR + (b >> 7) * n * LANES + (b & (LANES - 1));
        const both = this.realList(wbase, G, groupTab, lists + j * listStride, dens + j * denStride, listStride, denStride);
        present[j] = both & 0xffff;
        present[j + 1] = both >>> 16;
      }
      for (let t = 0; t < T; t++) {
        // A last tile of at most REAL_TILE_SHORT runs takes the pass with fewer accumulators.
        const tile = R - t * tileRuns <= REAL_TILE_SHORT ? this.realTile3 : this.realTile;
        tile(nb, G, lists, listStride, dens, denStride, X + t * tileBytes, sums + t * REAL_TILE_BYTES, sumsStride);
      }
      // Replicate by replicate: a replicate's sums are contiguous (run q at q), and each
      // replicate's present count is read once.
      for (let j = 0; j < nb; j++) {
        const p = present[j]!;
        const src = (sums + j * sumsStride) >> 3;
        const at = offset + b0 + j;
        if (p === 0) for (let q = 0; q < R; q++) out[at + runs[q]! * runStride] = NaN;
        else for (let q = 0; q < R; q++) out[at + runs[q]! * runStride] = f64[src + q]! / p;
      }
    }
    return true;
  }
}

function align16(x: number): number {
  return (x + 15) & ~15;
}
