import fc from 'fast-check';
import { AnalyticsError } from '../../../src/analytics/errors';
import { cholesky, choleskySolve, logDetFromCholesky, matMul, symmetricInverse } from '../../../src/analytics/linear-algebra';

describe('linear algebra kernels', () => {
  it('factorises a known matrix', () => {
    // A = L Lᵀ with L = [[2,0,0],[6,1,0],[-8,5,3]] (classic textbook example).
    const A = [4, 12, -16, 12, 37, -43, -16, -43, 98];
    expect(Array.from(cholesky(A, 3)!)).toEqual([2, 0, 0, 6, 1, 0, -8, 5, 3]);
    expect(logDetFromCholesky(cholesky(A, 3)!, 3)).toBeCloseTo(Math.log(36), 12);
    expect(Array.from(choleskySolve(cholesky(A, 3)!, 3, [1, 2, 3])).map((x) => +x.toFixed(10))).toEqual(
      Array.from(matMul(symmetricInverse(A, 3), [1, 2, 3], 3, 3, 1)).map((x) => +x.toFixed(10)),
    );
  });

  it('inverts random SPD matrices (property: A·A⁻¹ = I)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }).chain((n) =>
          fc.array(fc.double({ min: -1, max: 1, noNaN: true }), { minLength: n * n, maxLength: n * n }).map((m) => ({ n, m })),
        ),
        ({ n, m }) => {
          // A = MᵀM + I is symmetric positive definite.
          const mt = new Float64Array(n * n);
          for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) mt[i * n + j] = m[j * n + i]!;
          const A = matMul(mt, m, n, n, n);
          for (let i = 0; i < n; i++) A[i * n + i] += 1;
          const I = matMul(A, symmetricInverse(A, n), n, n, n);
          for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) expect(Math.abs(I[i * n + j]! - (i === j ? 1 : 0))).toBeLessThan(1e-10);
        },
      ),
      { numRuns: 100, seed: 4 },
    );
  });

  it('reports non-positive-definite and malformed input', () => {
    expect(cholesky([1, 2, 2, 1], 2)).toBeNull();
    expect(() => symmetricInverse([1, 1, 1, 1], 2)).toThrow(AnalyticsError);
    expect(() => cholesky([1, 2, 3], 2)).toThrow(AnalyticsError);
    expect(() => choleskySolve(new Float64Array([1]), 1, [1, 2])).toThrow(AnalyticsError);
    expect(() => matMul([1, 2], [1, 2, 3], 1, 2, 2)).toThrow(AnalyticsError);
  });
});
