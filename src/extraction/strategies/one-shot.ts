/** ONE_SHOT: one example, named or drawn with the seed. */
import type { Strategy } from './common';
import { singleCallStrategy } from './single-call';

export const oneShot: Strategy = singleCallStrategy('ONE_SHOT');
