/**
 * How much one use case and one prompt may hold. Request pricing assumes these maxima for the
 * lists it cannot count in advance (src/graphql/query-cost.ts LIST_SIZES), and statements that
 * write a use case's variables stay far below the driver's 65,535 parameters.
 */
export const MAX_VARIABLES = 200;
/** Options of one categorical or binary variable, and values of one prompt-graph condition. */
export const MAX_OPTIONS = 1_000;
export const MAX_TAGS = 100;
/** Missing tokens of a use case, and of one variable. */
export const MAX_MISSING_TOKENS = 100;
/** Few-shot examples of one prompt. */
export const MAX_PROMPT_EXAMPLES = 100;
