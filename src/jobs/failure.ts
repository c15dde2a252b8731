/**
 * A failed prediction as data: a code and a short message in our own words. What the endpoint
 * answered is untrusted (it may quote internal pages or echo the API key), so none of its text
 * is kept: only the HTTP status, the kind of failure and the attempts. Every configured secret
 * is still redacted from the message, in case one reached it another way.
 */
import { ExtractionError } from '../extraction/errors';
import { egressDeniedMessageOf, LlmError } from '../llm/llm-error';
import type { EndpointSignal } from './endpoint-lane';
import { UnstorableRowError } from './prediction-writer';

export interface Failure {
  code: string;
  message: string;
  attempts: number;
  /** says something about the endpoint's state (it counts against the endpoint in the circuit breaker), not only about this request */
  transient: boolean;
}

/**
 * What a failed report tells the endpoint's circuit breaker: a failure of the endpoint itself
 * (transient), an answer about this one request (a refusal, an unreadable or unstorable answer:
 * the endpoint is up), or nothing (the egress policy, the run's configuration or an unexpected
 * error of ours stopped the report before the endpoint said anything).
 */
export function breakerSignal(failure: Failure): EndpointSignal {
  if (failure.transient) return 'FAILED';
  return failure.code.startsWith('HTTP_') || failure.code === 'UNREADABLE' || failure.code === 'UNSTORABLE' ? 'ANSWERED' : 'NO_SIGN';
}

/** Why a prediction was abandoned by the executor itself. */
export class ExecutorAbort extends Error {
  constructor(readonly kind: 'DEADLINE' | 'CANCELLED' | 'SHUTDOWN' | 'LEASE' | 'CLAIM_LOST') {
    super(kind);
    this.name = 'ExecutorAbort';
  }
}

export const MAX_FAILURE_MESSAGE = 200;

export function redact(text: string, secrets: readonly (string | null | undefined)[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret && secret.length >= 4) out = out.split(secret).join('[redacted]');
  }
  return out.length > MAX_FAILURE_MESSAGE ? `${out.slice(0, MAX_FAILURE_MESSAGE - 1)}…` : out;
}

function llmFailure(error: LlmError, deadlineMs: number): Failure {
  const tries = `after ${error.attempts} attempt${error.attempts === 1 ? '' : 's'}`;
  switch (error.code) {
    case 'HTTP_ERROR':
      return {
        code: `HTTP_${error.status ?? 'ERROR'}`,
        message: `the endpoint answered HTTP ${error.status ?? '?'}${error.status !== undefined && error.status >= 300 && error.status < 400 ? ', a redirect, which is not followed' : ''} (${tries})`,
        attempts: error.attempts,
        // A 4xx other than 408 is about this request (too long, refused), not the endpoint's state.
        transient: error.status === undefined || error.status >= 500 || error.status === 408,
      };
    case 'RATE_LIMITED':
      return { code: 'HTTP_429', message: `the endpoint kept answering 429 Too Many Requests (${tries})`, attempts: error.attempts, transient: true };
    case 'TIMEOUT':
      return { code: 'TIMEOUT', message: `no answer within the endpoint timeout (${tries})`, attempts: error.attempts, transient: true };
    case 'CONNECTION': {
      if (error.reason === 'EGRESS_DENIED') {
        // The deployment's policy, not the endpoint's state.
        return { code: 'EGRESS_DENIED', message: `${egressDeniedMessageOf(error)} (${tries})`, attempts: error.attempts, transient: false };
      }
      const system = error.reason ?? /\(([A-Z][A-Z0-9_]+)\)/.exec(error.message)?.[1];
      return { code: 'CONNECTION', message: `connection to the endpoint failed${system ? ` (${system})` : ''} (${tries})`, attempts: error.attempts, transient: true };
    }
    case 'BAD_RESPONSE':
      // The endpoint answered, about this request: a model that rambles past the size limit or
      // an answer cut short is the report's failure, not a sign that the endpoint is down.
      if (error.reason === 'TOO_LARGE') {
        return { code: 'UNREADABLE', message: `the endpoint's answer is larger than the limit (${tries})`, attempts: error.attempts, transient: false };
      }
      return { code: 'UNREADABLE', message: `the endpoint's answer is not a chat completion (${tries})`, attempts: error.attempts, transient: false };
  }
  return { code: 'ERROR', message: `the call failed within ${deadlineMs} ms`, attempts: error.attempts, transient: true };
}

/** The failure a prediction records for what its strategy threw. */
export function describeFailure(error: unknown, deadlineMs: number, attempts: number): Failure {
  if (error instanceof ExecutorAbort && error.kind === 'DEADLINE') {
    return { code: 'DEADLINE', message: `the report did not finish within its deadline of ${deadlineMs} ms`, attempts, transient: true };
  }
  if (error instanceof LlmError) return llmFailure(error, deadlineMs);
  if (error instanceof UnstorableRowError) return { code: 'UNSTORABLE', message: error.message, attempts, transient: false };
  if (error instanceof ExtractionError) {
    if (error.code === 'ALL_CALLS_FAILED' && error.cause instanceof LlmError) return llmFailure(error.cause, deadlineMs);
    return { code: error.code, message: redact(error.message, []), attempts, transient: error.code === 'ALL_CALLS_FAILED' };
  }
  // Our own unexpected failure says nothing about the endpoint.
  return { code: 'ERROR', message: 'the report could not be processed', attempts, transient: false };
}
