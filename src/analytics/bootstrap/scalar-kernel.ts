/** The scalar replicate kernel, where the WebAssembly one is missing or declines the matrix. */
import type { MultiplicityMatrix } from './multiplicities';

/**
 * The scalar kernel: per replicate, gather the multiplicities in segment order, then one dot
 * product per (chunk, group); a chunk is one run or several 0/1 runs packed in float64 lanes of
 * width `base`. A function of its own so that V8 optimises it independently of the SIMD path.
 */
export function scalarReplicates(
  chunks: readonly { runs: number[]; data: Float64Array }[],
  lanes: number,
  base: number,
  multiplicities: MultiplicityMatrix,
  idx: Int32Array,
  segStart: Int32Array,
  n: number,
  B: number,
  R: number,
  out: Float64Array,
  offset: number,
  runStride: number,
): void {
  const nv = idx.length;
  const G = segStart.length - 1;
  const wv = new Float64Array(nv);
  const den = new Float64Array(G);
  const acc = new Float64Array(lanes);
  const scoreSum = new Float64Array(R);
  for (let b = 0; b < B; b++) {
    const row = b * n;
    for (let k = 0; k < nv; k++) wv[k] = multiplicities[row + idx[k]!]!;
    let present = 0;
    for (let g = 0; g < G; g++) {
      let s = 0;
      for (let k = segStart[g]!, e = segStart[g + 1]!; k < e; k++) s += wv[k]!;
      den[g] = s;
      if (s > 0) present++;
    }
    scoreSum.fill(0);
    for (const chunk of chunks) {
      const data = chunk.data;
      const L = chunk.runs.length;
      for (let g = 0; g < G; g++) {
        const d = den[g]!;
        if (d === 0) continue;
        let s = 0;
        for (let k = segStart[g]!, e = segStart[g + 1]!; k < e; k++) s += wv[k]! * data[k]!;
        if (L === 1) {
          scoreSum[chunk.runs[0]!]! += s / d;
        } else {
          for (let l = 0; l < L; l++) {
            const q = Math.floor(s / base);
            acc[l] = s - q * base;
            s = q;
          }
          for (let l = 0; l < L; l++) scoreSum[chunk.runs[l]!]! += acc[l]! / d;
        }
      }
    }
    for (const chunk of chunks) {
      for (const r of chunk.runs) out[offset + r * runStride + b] = present === 0 ? NaN : scoreSum[r]! / present;
    }
  }
}
