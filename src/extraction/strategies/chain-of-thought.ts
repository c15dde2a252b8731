/** CHAIN_OF_THOUGHT: reason-then-JSON rules, examples with their reasoning. */
import type { Strategy } from './common';
import { singleCallStrategy } from './single-call';

export const chainOfThought: Strategy = singleCallStrategy('CHAIN_OF_THOUGHT');
