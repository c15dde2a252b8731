/**
 * Oracle: the Kemeny–Young consensus by brute force over every order of the candidates
 * (docs/scoring.md §6 names it the oracle for n ≤ 8): the orders of least disagreement, and among
 * them the first by the tie-break. O(n! · n²).
 */
import { disagreement, preferredOrder } from './kemeny-definition';

export interface OracleConsensus {
  /** Candidates, best first. */
  order: number[];
  /** Its disagreement with the voters, the least over all orders. */
  score: number;
}

/**
 * @param prefer prefer[i][j] = weight of the voters that prefer i to j.
 * @param priority tie-break priority per candidate (lower first, distinct).
 * @param tolerance disagreements within this of the least count as equal (0 for integer weights).
 */
export function bruteForceKemeny(prefer: readonly (readonly number[])[], priority: ArrayLike<number>, tolerance = 0): OracleConsensus {
  const n = prefer.length;
  if (n > 10) throw new Error(`brute force over ${n}! orders`);
  const orders: number[][] = [];
  const permute = (prefix: number[], rest: number[]): void => {
    if (rest.length === 0) orders.push(prefix);
    rest.forEach((c, i) => permute([...prefix, c], [...rest.slice(0, i), ...rest.slice(i + 1)]));
  };
  permute([], Array.from({ length: n }, (_, c) => c));
  const scores = orders.map((order) => disagreement(prefer, order));
  const least = Math.min(...scores);
  let best: number[] | null = null;
  orders.forEach((order, k) => {
    if (scores[k]! <= least + tolerance && (best === null || preferredOrder(order, best, priority))) best = order;
  });
  return { order: best!, score: disagreement(prefer, best!) };
}
