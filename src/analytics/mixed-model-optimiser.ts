/**
 * Derivative-free minimisation for the profiled REML criterion (a smooth function of a handful
 * of relative standard deviations).
 */
import { AnalyticsError } from './errors';

export interface NelderMeadOptions {
  /** Initial simplex edge per coordinate (default 0.1·|x0_i|, or 0.05 when x0_i = 0). */
  step?: number | readonly number[];
  /** Stop when every vertex is within xtol of the best one in every coordinate (default 1e-10)… */
  xtol?: number;
  /** …and every vertex value is within ftol of the best one (default 1e-12). */
  ftol?: number;
  /** Maximum number of iterations (default 2000·dimension). */
  maxIterations?: number;
}

export interface NelderMeadResult {
  x: Float64Array;
  value: number;
  iterations: number;
  evaluations: number;
  converged: boolean;
}

/**
 * Nelder–Mead simplex minimisation with the standard coefficients (reflection 1, expansion 2,
 * contraction ½, shrink ½) and SciPy's stopping rule (simplex spread in x and f).
 *
 * Source: Nelder & Mead (1965); Lagarias et al., SIAM J. Optim. 9 (1998).
 * Complexity: O(d) evaluations per iteration at most d+2 (shrink), plus O(d²) bookkeeping.
 * @throws AnalyticsError EMPTY_INPUT for a zero-dimensional x0; LENGTH_MISMATCH for a step
 *   vector of the wrong length; BAD_INPUT when f(x0) is not finite.
 */
export function nelderMead(
  f: (x: Float64Array) => number,
  x0: ArrayLike<number>,
  options: NelderMeadOptions = {},
): NelderMeadResult {
  const d = x0.length;
  if (d === 0) throw new AnalyticsError('EMPTY_INPUT', 'nelderMead: no coordinates');
  const xtol = options.xtol ?? 1e-10;
  const ftol = options.ftol ?? 1e-12;
  const maxIterations = options.maxIterations ?? 2000 * d;
  const step = options.step;
  if (Array.isArray(step) && step.length !== d) throw new AnalyticsError('LENGTH_MISMATCH', 'nelderMead: step length');

  let evaluations = 0;
  // Non-finite values (e.g. a non-positive-definite system) are treated as +∞ so the simplex
  // retreats from them.
  const evaluate = (x: Float64Array): number => {
    evaluations++;
    const v = f(x);
    return Number.isFinite(v) ? v : Infinity;
  };
  const simplex: Float64Array[] = [Float64Array.from(x0)];
  for (let i = 0; i < d; i++) {
    const v = Float64Array.from(x0);
    const s = typeof step === 'number' ? step : Array.isArray(step) ? (step as number[])[i]! : v[i] !== 0 ? 0.1 * Math.abs(v[i]!) : 0.05;
    v[i] = v[i]! + s;
    simplex.push(v);
  }
  const values = simplex.map(evaluate);
  if (!Number.isFinite(values[0]!)) throw new AnalyticsError('BAD_INPUT', 'nelderMead: f(x0) is not finite');

  const combine = (a: Float64Array, b: Float64Array, t: number): Float64Array => {
    // a + t·(b − a)
    const out = new Float64Array(d);
    for (let i = 0; i < d; i++) out[i] = a[i]! + t * (b[i]! - a[i]!);
    return out;
  };

  let iterations = 0;
  let converged = false;
  const idx = Array.from({ length: d + 1 }, (_, i) => i);
  while (iterations < maxIterations) {
    idx.sort((a, b) => values[a]! - values[b]! || a - b);
    const best = idx[0]!;
    let spreadX = 0;
    let spreadF = 0;
    for (const k of idx) {
      spreadF = Math.max(spreadF, Math.abs(values[k]! - values[best]!));
      for (let i = 0; i < d; i++) spreadX = Math.max(spreadX, Math.abs(simplex[k]![i]! - simplex[best]![i]!));
    }
    if (spreadX <= xtol && spreadF <= ftol) {
      converged = true;
      break;
    }
    iterations++;
    const worst = idx[d]!;
    const second = idx[d - 1]!;
    const centroid = new Float64Array(d);
    for (let r = 0; r < d; r++) {
      const v = simplex[idx[r]!]!;
      for (let i = 0; i < d; i++) centroid[i] += v[i]! / d;
    }
    const reflected = combine(centroid, simplex[worst]!, -1);
    const fr = evaluate(reflected);
    if (fr < values[best]!) {
      const expanded = combine(centroid, simplex[worst]!, -2);
      const fe = evaluate(expanded);
      if (fe < fr) {
        simplex[worst] = expanded;
        values[worst] = fe;
      } else {
        simplex[worst] = reflected;
        values[worst] = fr;
      }
      continue;
    }
    if (fr < values[second]!) {
      simplex[worst] = reflected;
      values[worst] = fr;
      continue;
    }
    const outside = fr < values[worst]!;
    const contracted = outside ? combine(centroid, reflected, 0.5) : combine(centroid, simplex[worst]!, 0.5);
    const fc = evaluate(contracted);
    if (fc < (outside ? fr : values[worst]!)) {
      simplex[worst] = contracted;
      values[worst] = fc;
      continue;
    }
    for (let r = 1; r <= d; r++) {
      const k = idx[r]!;
      simplex[k] = combine(simplex[best]!, simplex[k]!, 0.5);
      values[k] = evaluate(simplex[k]!);
    }
  }
  idx.sort((a, b) => values[a]! - values[b]! || a - b);
  return { x: simplex[idx[0]!]!, value: values[idx[0]!]!, iterations, evaluations, converged };
}
