/**
 * The WebAssembly (SIMD) module of the bootstrap replicates (docs/scoring.md §5) and its memory
 * layout. The module's source is wasm/bootstrap-kernel.wat, assembled to
 * wasm/bootstrap-kernel.wasm beside it by scripts/assemble-wasm.mjs (`npm run build`, the test
 * setup and the benchmarks run it); {@link replicateKernelModuleBytes} reads that binary, and
 * bootstrap-kernel.ts instantiates and drives it.
 *
 * Memory layout the kernel expects (byte addresses; the .wat exports the same numbers as
 * globals, and a test compares them):
 * - `ACC_ADDR`: 128 u16 lane sums written by `sumList` (plus 16 bytes of padding read by the
 *   4-lane widening loads).
 * - `PRESENT_ADDR`: f64 per replicate lane, number of groups with D_g > 0.
 * - multiplicity blocks from `MULTIPLICITY_ADDR`: block j, report i → `LANES` u8 multiplicities
 *   of replicates j·LANES … j·LANES + LANES − 1 (report-major inside a block, so one report's
 *   multiplicities in a block are 128 contiguous bytes).
 * - per-call tables and lists anywhere above (see `variableBlock` in the .wat).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** Replicates handled per block: 8 i8x16 accumulators. */
export const LANES = 128;
/** u16 lane sums of one list (256 bytes + padding). */
export const ACC_ADDR = 0;
/** f64 per lane: groups present in the replicate. */
export const PRESENT_ADDR = 512;
/** Per group: den f64[LANES] then mask (all-ones where D > 0) f64[LANES]. */
export const GROUP_STRIDE = 2 * LANES * 8;
/** Per run: f64[LANES] score sums, then scores. */
export const RUN_STRIDE = LANES * 8;
/** First multiplicity block. */
export const MULTIPLICITY_ADDR = 2048;
/** f64x2 vectors of runs per tile of `realTile`: 2 · REAL_TILE runs at a time. */
export const REAL_TILE = 7;
/** Bytes of one report's scores in a tile (2 · REAL_TILE f64). */
export const REAL_TILE_BYTES = 16 * REAL_TILE;

/** Where the build puts the assembled module: beside this file, in src/ and in dist/src/. */
export const REPLICATE_KERNEL_WASM = path.join(__dirname, 'wasm', 'bootstrap-kernel.wasm');

/**
 * Bytes of the replicate-kernel module: it imports its memory as `env.memory` (at least one
 * page) and exports `sumList`, `variableBlock`, `realList`, `realTile` and `realTile3`. The memory is
 * imported, sized by the caller, and never grown: growing detaches the old ArrayBuffer, which
 * makes V8 add detach checks to every optimised typed-array loop in the process from then on
 * (measured: ~40 % slower).
 *
 * @throws Error when the assembled module is missing (a checkout that was neither built nor
 *   tested: `node scripts/assemble-wasm.mjs` makes it).
 */
export function replicateKernelModuleBytes(): Uint8Array<ArrayBuffer> {
  try {
    return new Uint8Array(readFileSync(REPLICATE_KERNEL_WASM));
  } catch (error) {
    throw new Error(
      `bootstrap kernel: ${path.relative(process.cwd(), REPLICATE_KERNEL_WASM)} is missing; ` +
        '`npm run build` (or `node scripts/assemble-wasm.mjs` for the TypeScript sources) assembles it',
      { cause: error },
    );
  }
}
