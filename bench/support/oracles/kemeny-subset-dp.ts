/**
 * Oracle: the Kemeny–Young consensus by the textbook dynamic programme over subsets (Held–Karp
 * style), written from the definition of docs/scoring.md §6 for fields too large for the brute
 * force. The disagreement of an order is the sum, over its positions, of what placing that
 * candidate after the ones already placed costs: Σ_{a placed} prefer[c][a]. That cost depends on
 * the set placed, not on its order, so
 *
 *   rest(Q) = least disagreement of placing every candidate not in Q after the set Q
 *           = min over c ∉ Q of [Σ_{a∈Q} prefer[c][a] + rest(Q ∪ {c})],   rest(all) = 0,
 *
 * and rest(∅) is the optimum. The consensus is rebuilt front to back, taking at each step the
 * candidate of lowest tie-break priority that keeps the optimum, which gives the first optimal
 * order by the tie-break. O(2^n · n²) time (each cost summed afresh), O(2^n) memory.
 */
import type { OracleConsensus } from './kemeny-brute-force';

/**
 * @param prefer prefer[i][j] = weight of the voters that prefer i to j.
 * @param priority tie-break priority per candidate (lower first, distinct).
 * @param tolerance totals within this of each other count as equal (0 for integer weights).
 */
export function subsetDpKemeny(prefer: readonly (readonly number[])[], priority: ArrayLike<number>, tolerance = 0): OracleConsensus {
  const n = prefer.length;
  if (n > 20) throw new Error(`subset DP over 2^${n} sets`);
  const all = 2 ** n - 1;
  const placingCost = (c: number, placed: number): number => {
    let cost = 0;
    for (let a = 0; a < n; a++) if ((placed >> a) & 1) cost += prefer[c]![a]!;
    return cost;
  };
  const rest = new Float64Array(all + 1);
  // Q ∪ {c} is numerically larger than Q: going down, every rest(Q ∪ {c}) is known before rest(Q).
  for (let placed = all - 1; placed >= 0; placed--) {
    let least = Infinity;
    for (let c = 0; c < n; c++) {
      if ((placed >> c) & 1) continue;
      least = Math.min(least, placingCost(c, placed) + rest[placed | (1 << c)]!);
    }
    rest[placed] = least;
  }
  const order: number[] = [];
  let placed = 0;
  let score = 0;
  while (placed !== all) {
    let chosen = -1;
    for (let c = 0; c < n; c++) {
      if ((placed >> c) & 1) continue;
      const total = placingCost(c, placed) + rest[placed | (1 << c)]!;
      if (total <= rest[placed]! + tolerance && (chosen === -1 || priority[c]! < priority[chosen]!)) chosen = c;
    }
    score += placingCost(chosen, placed);
    order.push(chosen);
    placed |= 1 << chosen;
  }
  return { order, score };
}
