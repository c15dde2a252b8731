/** The tie-break between equally optimal orders: higher macro average first, then name, then index. */
import { AnalyticsError } from '../errors';
import { scoreTieClasses, tieClassesAlong } from '../tolerance';

/** Tie-break keys between equally optimal orders: higher macro average first, then name, then index. */
export interface KemenyTieBreak {
  /** Per-candidate macro average; higher is placed first. NaN sorts after every number. */
  macro?: ArrayLike<number> | null;
  /** Per-candidate name; compared by UTF-16 code units (locale independent). */
  names?: readonly string[] | null;
}

/**
 * Total tie-break priority of candidates: priority[c] = position of c when candidates are sorted
 * by macro average descending (NaN last), then name ascending (code-unit order), then index.
 * Macro averages that are the same score within the relative tolerance of docs/scoring.md §6 are
 * equal here: they fall into one tie class of {@link scoreTieClasses} (classes anchored at their
 * highest member, so the order is total and independent of the input order), and the name
 * decides between them. Among equally optimal orders the consensus is the one whose priority
 * sequence is lexicographically smallest, i.e. at the first position where two optimal orders
 * differ, the candidate with the higher macro average (then smaller name) comes first.
 *
 * Complexity: O(n log n).
 * @throws AnalyticsError LENGTH_MISMATCH when a key array does not have n entries.
 */
export function tieBreakPriority(n: number, keys: KemenyTieBreak = {}): Int32Array {
  const macro = keys.macro ?? null;
  const names = keys.names ?? null;
  if (macro !== null && macro.length !== n) {
    throw new AnalyticsError('LENGTH_MISMATCH', `tie-break: ${macro.length} macro averages for ${n} candidates`);
  }
  if (names !== null && names.length !== n) {
    throw new AnalyticsError('LENGTH_MISMATCH', `tie-break: ${names.length} names for ${n} candidates`);
  }
  const classes = macro === null ? null : scoreTieClasses(macro);
  const idx = Array.from({ length: n }, (_, i) => i);
  idx.sort((a, b) => {
    if (classes !== null && classes[a] !== classes[b]) return classes[a]! - classes[b]!;
    if (names !== null) {
      const sa = names[a]!;
      const sb = names[b]!;
      if (sa !== sb) return sa < sb ? -1 : 1;
    }
    return a - b;
  });
  const priority = new Int32Array(n);
  idx.forEach((c, p) => {
    priority[c] = p;
  });
  return priority;
}

/**
 * {@link tieBreakPriority} for many macro-average vectors over one candidate set and one name
 * list: the same priorities, computed without allocation. The candidates' order by macro
 * average (descending, NaN last, then index; the order {@link scoreTieClasses} cuts into tie
 * classes) is kept between calls and insertion-sorted from there, so macro averages close to
 * the previous call's (bootstrap replicates) cost O(n + pairs that changed order); the names
 * are ranked once. Within each tie class the candidates are then ordered by name rank.
 */
export class TieBreakPriorities {
  /** Position of each candidate by name ascending (code-unit order), then index. */
  private readonly nameRank: Int32Array;
  /** Candidates by macro average, kept between calls. */
  private readonly byMacro: Int32Array;
  private readonly tieClass: Int32Array;
  private readonly values: Float64Array;
  private readonly group: Int32Array;

  /** @throws AnalyticsError LENGTH_MISMATCH when `names` does not have n entries. */
  constructor(
    private readonly n: number,
    names: readonly string[] | null = null,
  ) {
    if (names !== null && names.length !== n) {
      throw new AnalyticsError('LENGTH_MISMATCH', `tie-break: ${names.length} names for ${n} candidates`);
    }
    const byName = Array.from({ length: n }, (_, i) => i);
    if (names !== null) {
      byName.sort((a, b) => {
        const sa = names[a]!;
        const sb = names[b]!;
        if (sa !== sb) return sa < sb ? -1 : 1;
        return a - b;
      });
    }
    this.nameRank = new Int32Array(n);
    byName.forEach((c, p) => {
      this.nameRank[c] = p;
    });
    this.byMacro = Int32Array.from({ length: n }, (_, i) => i);
    this.tieClass = new Int32Array(n);
    this.values = new Float64Array(n);
    this.group = new Int32Array(n);
  }

  /**
   * priority[c] = tieBreakPriority(n, { macro, names })[c].
   * @throws AnalyticsError LENGTH_MISMATCH when `macro` does not have n entries.
   */
  into(macro: ArrayLike<number>, priority: Int32Array): void {
    const { n, byMacro, tieClass, values, nameRank, group } = this;
    if (macro.length !== n) throw new AnalyticsError('LENGTH_MISMATCH', `tie-break: ${macro.length} macro averages for ${n} candidates`);
    for (let c = 0; c < n; c++) values[c] = macro[c]!;
    for (let i = 1; i < n; i++) {
      const c = byMacro[i]!;
      const x = values[c]!;
      let j = i - 1;
      for (; j >= 0; j--) {
        const a = byMacro[j]!;
        if (!macroBefore(x, c, values[a]!, a)) break;
        byMacro[j + 1] = a;
      }
      byMacro[j + 1] = c;
    }
    // The classes of scoreTieClasses, read along the same order.
    tieClassesAlong(values, byMacro, tieClass);
    // Classes are non-decreasing along byMacro: order each run of one class by name rank.
    let from = 0;
    while (from < n) {
      const k = tieClass[byMacro[from]!]!;
      let to = from + 1;
      while (to < n && tieClass[byMacro[to]!] === k) to++;
      for (let p = from; p < to; p++) group[p] = byMacro[p]!;
      for (let i = from + 1; i < to; i++) {
        const c = group[i]!;
        let j = i - 1;
        for (; j >= from && nameRank[group[j]!]! > nameRank[c]!; j--) group[j + 1] = group[j]!;
        group[j + 1] = c;
      }
      for (let p = from; p < to; p++) priority[group[p]!] = p;
      from = to;
    }
  }
}

/** Whether macro average x of candidate a comes before y of b: higher first, NaN last, then index. */
function macroBefore(x: number, a: number, y: number, b: number): boolean {
  if (x > y) return true;
  if (x < y) return false;
  if (x === y) return a < b;
  const nx = Number.isNaN(x);
  const ny = Number.isNaN(y);
  if (nx && ny) return a < b;
  return ny;
}

export function givenPriority(n: number, given: ArrayLike<number>): Int32Array {
  if (given.length !== n) throw new AnalyticsError('LENGTH_MISMATCH', `kemeny: ${given.length} priorities for ${n} candidates`);
  const priority = Int32Array.from(given);
  const sorted = priority.slice().sort();
  for (let k = 0; k < n; k++) {
    if (priority[k] !== given[k] || (k > 0 && sorted[k] === sorted[k - 1])) {
      throw new AnalyticsError('BAD_INPUT', 'kemeny: priorities must be distinct integers');
    }
  }
  return priority;
}

/** Sorts candidates[from..to) by priority ascending (distinct priorities: one result). */
export function sortByPriority(candidates: Int32Array, from: number, to: number, priority: ArrayLike<number>): void {
  if (to - from > 32) {
    candidates.subarray(from, to).sort((x, y) => priority[x]! - priority[y]!);
    return;
  }
  for (let i = from + 1; i < to; i++) {
    const c = candidates[i]!;
    const pc = priority[c]!;
    let j = i - 1;
    for (; j >= from && priority[candidates[j]!]! > pc; j--) candidates[j + 1] = candidates[j]!;
    candidates[j + 1] = c;
  }
}
