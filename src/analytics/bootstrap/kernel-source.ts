/** The WebAssembly replicate kernel with one multiplicity matrix loaded, shared by a grid's variables. */
import { ReplicateKernel } from '../bootstrap-kernel';
import type { MultiplicityMatrix } from './multiplicities';

/**
 * The SIMD kernel with one multiplicity matrix loaded, created on first use and shared by every
 * variable of a grid (so the matrix is transposed once); null when unavailable or declined.
 */
export class KernelSource {
  private kernel: ReplicateKernel | null | undefined;
  constructor(
    private readonly W: MultiplicityMatrix,
    private readonly matrixId: number | null = null,
  ) {}
  get(n: number, B: number): ReplicateKernel | null {
    if (this.kernel === undefined) {
      const k = ReplicateKernel.acquire();
      this.kernel = k && k.load(this.W, n, B, this.matrixId) ? k : null;
      if (k && !this.kernel) k.release();
    }
    return this.kernel;
  }
  private rowSumBound: number | undefined;
  /** Largest row sum of the matrix, or −1 when an entry is negative. O(B·n) once. */
  maxRowSum(n: number, B: number): number {
    if (this.rowSumBound === undefined) {
      let max = 0;
      for (let b = 0; b < B && max >= 0; b++) {
        let sum = 0;
        for (let i = b * n, e = i + n; i < e; i++) {
          const w = this.W[i]!;
          if (w < 0) {
            sum = -1;
            break;
          }
          sum += w;
        }
        max = sum < 0 ? -1 : Math.max(max, sum);
      }
      this.rowSumBound = max;
    }
    return this.rowSumBound;
  }
  /** Hand the kernel back; call once the grid is done (also after an error). */
  release(): void {
    this.kernel?.release();
    this.kernel = null;
  }
}
