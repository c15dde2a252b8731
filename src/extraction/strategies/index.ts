/** The strategy registry. */
import { ExtractionError } from '../errors';
import type { ExtractionResult, StrategyContext, StrategyName } from '../types';
import type { Strategy } from './common';
import { promptGraph } from './prompt-graph';
import { selfConsistency } from './self-consistency';
import { singleCallStrategy } from './single-call';

export const STRATEGIES: Readonly<Record<StrategyName, Strategy>> = {
  ZERO_SHOT: singleCallStrategy('ZERO_SHOT'),
  ONE_SHOT: singleCallStrategy('ONE_SHOT'),
  FEW_SHOT: singleCallStrategy('FEW_SHOT'),
  CHAIN_OF_THOUGHT: singleCallStrategy('CHAIN_OF_THOUGHT'),
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
