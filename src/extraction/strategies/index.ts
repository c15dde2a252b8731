/** The strategy registry. */
import { ExtractionError } from '../errors';
import type { ExtractionResult, StrategyContext, StrategyName } from '../types';
import { chainOfThought } from './chain-of-thought';
import type { Strategy } from './common';
import { fewShot } from './few-shot';
import { oneShot } from './one-shot';
import { promptGraph } from './prompt-graph';
import { selfConsistency } from './self-consistency';
import { zeroShot } from './zero-shot';

export const STRATEGIES: Readonly<Record<StrategyName, Strategy>> = {
  ZERO_SHOT: zeroShot,
  ONE_SHOT: oneShot,
  FEW_SHOT: fewShot,
  CHAIN_OF_THOUGHT: chainOfThought,
  SELF_CONSISTENCY: selfConsistency,
  PROMPT_GRAPH: promptGraph,
};

/**
 * Runs one report through a strategy.
 * @throws ExtractionError on invalid configuration; the ChatFn's transport errors propagate
 *   (for SELF_CONSISTENCY and PROMPT_GRAPH only when every call failed).
 */
export function runStrategy(name: StrategyName, ctx: StrategyContext): Promise<ExtractionResult> {
  const s = STRATEGIES[name];
  if (!s) return Promise.reject(new ExtractionError('BAD_INPUT', `unknown strategy ${String(name)}`));
  return s.run(ctx);
}
