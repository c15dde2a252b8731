/**
 * Transport failure after retries, with the code of the contract shared with src/extraction.
 *
 * What an endpoint answers is untrusted (an error page of an internal service, a key echoed
 * back): an LlmError carries only what we chose to say, the HTTP status, and a short reason of
 * our own vocabulary (`reason`, e.g. ECONNREFUSED, EGRESS_DENIED, NOT_JSON). It keeps no cause,
 * so no log serializer can reach the upstream text through it either.
 */
import { EGRESS_REFUSALS, type EgressRefusal } from './egress';

export type LlmErrorCode = 'TIMEOUT' | 'HTTP_ERROR' | 'RATE_LIMITED' | 'CONNECTION' | 'BAD_RESPONSE';

export interface LlmErrorDetails {
  status?: number;
  attempts: number;
  /** server-requested wait (Retry-After / retry-after-ms), when it sent one */
  retryAfterMs?: number;
  /** a short code of ours: a system error code (ECONNREFUSED), EGRESS_DENIED, NOT_JSON, TOO_LARGE, … */
  reason?: string;
}

export class LlmError extends Error {
  readonly status?: number;
  readonly attempts: number;
  readonly retryAfterMs?: number;
  readonly reason?: string;

  constructor(
    readonly code: LlmErrorCode,
    message: string,
    details: LlmErrorDetails,
  ) {
    super(message);
    this.name = 'LlmError';
    if (details.status !== undefined) this.status = details.status;
    this.attempts = details.attempts;
    if (details.retryAfterMs !== undefined) this.retryAfterMs = details.retryAfterMs;
    if (details.reason !== undefined) this.reason = details.reason;
  }

  /** Copy carrying the final attempt count (errors are created per attempt, counted at the end). */
  withAttempts(attempts: number): LlmError {
    return new LlmError(this.code, this.message, {
      ...(this.status !== undefined ? { status: this.status } : {}),
      ...(this.retryAfterMs !== undefined ? { retryAfterMs: this.retryAfterMs } : {}),
      ...(this.reason !== undefined ? { reason: this.reason } : {}),
      attempts,
    });
  }
}

/** The text of an HTTP failure: the status only. */
export function httpErrorMessage(status: number): string {
  return status >= 300 && status < 400 ? `HTTP ${status} from the endpoint (redirects are not followed)` : `HTTP ${status} from the endpoint`;
}

export const EGRESS_DENIED_MESSAGE = "the endpoint's address is outside the egress policy (ENDPOINT_ALLOW)";

/** What an endpoint's refused connection says, by why it was refused (see egress.ts). */
export function egressDeniedMessage(refusal: EgressRefusal): string {
  return refusal === 'NOT_ALLOWED' ? EGRESS_DENIED_MESSAGE : `the endpoint's address is refused: ${EGRESS_REFUSALS[refusal].replace(/^the address is /, '')}`;
}

const EGRESS_DENIED_MESSAGES = new Set((Object.keys(EGRESS_REFUSALS) as EgressRefusal[]).map(egressDeniedMessage));

/** The message of an EGRESS_DENIED failure: one of {@link egressDeniedMessage}'s, never other text. */
export function egressDeniedMessageOf(error: LlmError): string {
  return EGRESS_DENIED_MESSAGES.has(error.message) ? error.message : EGRESS_DENIED_MESSAGE;
}
