/**
 * Typed error of the analytics layer. Every pure function throws this (never a bare `Error`) on
 * input outside its domain, so callers can map `code` to an API error once.
 */
export type AnalyticsErrorCode =
  | 'BAD_INPUT'
  | 'BAD_SPEC'
  | 'LENGTH_MISMATCH'
  | 'EMPTY_INPUT'
  | 'OUT_OF_RANGE';

export class AnalyticsError extends Error {
  constructor(
    readonly code: AnalyticsErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'AnalyticsError';
  }
}
