/**
 * Choosing the examples of a one-shot / few-shot / reasoning prompt: by name, or drawn at random
 * with the run's seed (pure-rand xoroshiro128+, a partial Fisher–Yates shuffle), so the same seed
 * always gives the same examples in the same order.
 */
import { unsafeUniformIntDistribution, xoroshiro128plus } from 'pure-rand';
import { ExtractionError } from './errors';
import type { ExampleSelection, PromptExample, StrategyName } from './types';

export const DEFAULT_EXAMPLE_SEED = 42;

/** Examples per strategy when not named or counted explicitly (paper §2.3: one, three). */
export const DEFAULT_EXAMPLE_COUNT: Readonly<Record<StrategyName, number>> = {
  ZERO_SHOT: 0,
  ONE_SHOT: 1,
  FEW_SHOT: 3,
  CHAIN_OF_THOUGHT: 3,
  SELF_CONSISTENCY: 3,
  PROMPT_GRAPH: 3,
};

/**
 * Draws `count` distinct indices of `0..n-1` (all of them, shuffled, when count ≥ n).
 * Deterministic for a given seed. O(n).
 */
export function drawIndices(n: number, count: number, seed: number): number[] {
  if (!Number.isInteger(n) || n < 0) throw new ExtractionError('BAD_INPUT', `bad population size ${n}`);
  if (!Number.isInteger(count) || count < 0) throw new ExtractionError('BAD_INPUT', `bad example count ${count}`);
  const rng = xoroshiro128plus(seed | 0);
  const idx = Array.from({ length: n }, (_, i) => i);
  const k = Math.min(count, n);
  for (let i = 0; i < k; i++) {
    const j = unsafeUniformIntDistribution(i, n - 1, rng);
    const t = idx[i]!;
    idx[i] = idx[j]!;
    idx[j] = t;
  }
  return idx.slice(0, k);
}

/**
 * The examples for a prompt: `names` picks examples by name in the given order (unknown names
 * throw); otherwise `count` examples are drawn with `seed`, in draw order.
 * @throws ExtractionError NO_EXAMPLES when a name is unknown; BAD_INPUT on a bad count.
 */
export function selectExamples(
  examples: readonly PromptExample[],
  opts: { names?: readonly string[] | null; count: number; seed?: number | null },
): PromptExample[] {
  if (opts.names && opts.names.length > 0) {
    return opts.names.map((name) => {
      const hit = examples.find((e) => e.name === name);
      if (!hit) throw Object.assign(new ExtractionError('NO_EXAMPLES', `no example named "${name}"`), { field: 'exampleNames' });
      return hit;
    });
  }
  if (opts.count === 0 || examples.length === 0) return [];
  return drawIndices(examples.length, opts.count, opts.seed ?? DEFAULT_EXAMPLE_SEED).map((i) => examples[i]!);
}

/**
 * The examples a strategy shows, for a run's snapshot and for a strategy run from a bare context
 * alike: none for ZERO_SHOT; those already chosen, by name, or drawn with the seed (the
 * strategy's default count) otherwise. ONE_SHOT and FEW_SHOT need at least one.
 * @throws ExtractionError NO_EXAMPLES (with the input it is in) when a name is unknown or a
 *   strategy that needs examples has none.
 */
export function strategyExamples(
  strategy: StrategyName,
  examples: readonly PromptExample[],
  selection: ExampleSelection & { seed?: number | null },
): PromptExample[] {
  if (strategy === 'ZERO_SHOT') return [];
  const chosen = selection.chosen
    ? [...examples]
    : selectExamples(examples, { names: selection.names ?? null, count: selection.count ?? DEFAULT_EXAMPLE_COUNT[strategy], seed: selection.seed ?? null });
  if ((strategy === 'ONE_SHOT' || strategy === 'FEW_SHOT') && chosen.length === 0) {
    throw Object.assign(new ExtractionError('NO_EXAMPLES', `${strategy} needs at least one example; the prompt has none`), { field: 'promptId' });
  }
  return chosen;
}
