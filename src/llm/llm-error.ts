/** Transport failure after retries, with the code of the contract shared with src/extraction. */
export type LlmErrorCode = 'TIMEOUT' | 'HTTP_ERROR' | 'RATE_LIMITED' | 'CONNECTION' | 'BAD_RESPONSE';

export interface LlmErrorDetails {
  status?: number;
  attempts: number;
  /** server-requested wait (Retry-After / retry-after-ms), when it sent one */
  retryAfterMs?: number;
  cause?: unknown;
}

export class LlmError extends Error {
  readonly status?: number;
  readonly attempts: number;
  readonly retryAfterMs?: number;

  constructor(
    readonly code: LlmErrorCode,
    message: string,
    details: LlmErrorDetails,
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'LlmError';
    if (details.status !== undefined) this.status = details.status;
    this.attempts = details.attempts;
    if (details.retryAfterMs !== undefined) this.retryAfterMs = details.retryAfterMs;
  }

  /** Copy carrying the final attempt count (errors are created per attempt, counted at the end). */
  withAttempts(attempts: number): LlmError {
    return new LlmError(this.code, this.message, {
      ...(this.status !== undefined ? { status: this.status } : {}),
      ...(this.retryAfterMs !== undefined ? { retryAfterMs: this.retryAfterMs } : {}),
      attempts,
      cause: this.cause,
    });
  }
}
