/** ZERO_SHOT: no examples, JSON-only rules. */
import type { Strategy } from './common';
import { singleCallStrategy } from './single-call';

export const zeroShot: Strategy = singleCallStrategy('ZERO_SHOT');
