/** FEW_SHOT: three examples by default, named or drawn with the seed. */
import type { Strategy } from './common';
import { singleCallStrategy } from './single-call';

export const fewShot: Strategy = singleCallStrategy('FEW_SHOT');
