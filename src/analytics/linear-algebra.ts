/**
 * Small dense linear algebra for the statistics of the analytics layer (mixed models, OLS).
 * Matrices are row-major Float64Arrays of size n×n; the sizes involved are tens to a few
 * hundred, so plain O(n³) kernels are adequate.
 */
import { AnalyticsError } from './errors';

/**
 * Cholesky factorisation A = L·Lᵀ of a symmetric positive-definite matrix.
 *
 * Definition: L lower triangular with positive diagonal; only the lower triangle of `a` is read.
 * Source: Golub & Van Loan, Matrix Computations, Alg. 4.2.1.
 * Complexity: O(n³/3) time, O(n²) memory.
 * @returns L (row-major, upper triangle zero), or null when A is not numerically positive
 *   definite (a pivot ≤ 0 or not finite).
 * @throws AnalyticsError LENGTH_MISMATCH when `a` does not have n² entries.
 */
export function cholesky(a: ArrayLike<number>, n: number): Float64Array | null {
  if (a.length !== n * n) throw new AnalyticsError('LENGTH_MISMATCH', `cholesky: ${a.length} entries for n = ${n}`);
  const L = new Float64Array(n * n);
  for (let j = 0; j < n; j++) {
    const rj = j * n;
    let d = a[rj + j]!;
    for (let k = 0; k < j; k++) d -= L[rj + k]! * L[rj + k]!;
    if (!(d > 0) || !Number.isFinite(d)) return null;
    const ljj = Math.sqrt(d);
    L[rj + j] = ljj;
    for (let i = j + 1; i < n; i++) {
      const ri = i * n;
      let s = a[ri + j]!;
      for (let k = 0; k < j; k++) s -= L[ri + k]! * L[rj + k]!;
      L[ri + j] = s / ljj;
    }
  }
  return L;
}

/**
 * Solves A·x = b given the Cholesky factor L of A (forward then back substitution).
 * Complexity: O(n²).
 * @throws AnalyticsError LENGTH_MISMATCH when b does not have n entries.
 */
export function choleskySolve(L: Float64Array, n: number, b: ArrayLike<number>): Float64Array {
  if (b.length !== n) throw new AnalyticsError('LENGTH_MISMATCH', `choleskySolve: ${b.length} entries for n = ${n}`);
  const x = Float64Array.from(b);
  for (let i = 0; i < n; i++) {
    const ri = i * n;
    let s = x[i]!;
    for (let k = 0; k < i; k++) s -= L[ri + k]! * x[k]!;
    x[i] = s / L[ri + i]!;
  }
  for (let i = n - 1; i >= 0; i--) {
    let s = x[i]!;
    for (let k = i + 1; k < n; k++) s -= L[k * n + i]! * x[k]!;
    x[i] = s / L[i * n + i]!;
  }
  return x;
}

/** log det A = 2 Σ log L_ii from the Cholesky factor. Complexity: O(n). */
export function logDetFromCholesky(L: Float64Array, n: number): number {
  let s = 0;
  for (let i = 0; i < n; i++) s += Math.log(L[i * n + i]!);
  return 2 * s;
}

/**
 * Inverse of a symmetric positive-definite matrix through its Cholesky factor.
 * Complexity: O(n³).
 * @throws AnalyticsError BAD_INPUT when the matrix is not positive definite (singular design);
 *   LENGTH_MISMATCH when `a` does not have n² entries.
 */
export function symmetricInverse(a: ArrayLike<number>, n: number): Float64Array {
  const L = cholesky(a, n);
  if (L === null) throw new AnalyticsError('BAD_INPUT', 'matrix is singular or not positive definite');
  const inv = new Float64Array(n * n);
  const e = new Float64Array(n);
  for (let j = 0; j < n; j++) {
    e.fill(0);
    e[j] = 1;
    const col = choleskySolve(L, n, e);
    for (let i = 0; i < n; i++) inv[i * n + j] = col[i]!;
  }
  // Symmetrise: the two triangles differ by rounding only.
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const m = 0.5 * (inv[i * n + j]! + inv[j * n + i]!);
      inv[i * n + j] = m;
      inv[j * n + i] = m;
    }
  }
  return inv;
}

/**
 * Product C = A·B of an (r×k) and a (k×c) row-major matrix.
 * Complexity: O(r·k·c).
 * @throws AnalyticsError LENGTH_MISMATCH for inconsistent sizes.
 */
export function matMul(a: ArrayLike<number>, b: ArrayLike<number>, r: number, k: number, c: number): Float64Array {
  if (a.length !== r * k || b.length !== k * c) throw new AnalyticsError('LENGTH_MISMATCH', 'matMul: inconsistent sizes');
  const out = new Float64Array(r * c);
  for (let i = 0; i < r; i++) {
    for (let m = 0; m < k; m++) {
      const aim = a[i * k + m]!;
      if (aim === 0) continue;
      const rb = m * c;
      const ro = i * c;
      for (let j = 0; j < c; j++) out[ro + j] += aim * b[rb + j]!;
    }
  }
  return out;
}
