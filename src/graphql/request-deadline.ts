import type { EntityManager } from 'typeorm';
import { DEFAULT_WAITED_LIMITS, type WaitedLimits, type WorkControl } from '../db/work-control';
import { DomainException } from '../domain/errors';

/**
 * BAD_USER_INPUT with reason DEADLINE_EXCEEDED, HTTP 503 (domain/errors.ts maps it): the request took
 * longer than the server gives one; what its writes throw once its deadline passed.
 */
export function deadlinePassed(deadlineMs: number): DomainException {
  return new DomainException(
    'DEADLINE_EXCEEDED',
    `The request did not finish within ${Math.round(deadlineMs / 1000)} s: ask for less (smaller pages, fewer statistics) or try again`,
    { deadlineMs },
  );
}

/**
 * The deadline of one request, shared by the code that answers it and the writes it makes. A
 * deadline error must mean that nothing was written, so the two race for one decision: either
 * the deadline passes first (the writes see the abort and roll back, the client gets the
 * deadline error) or a write claims its commit first (the deadline then lets the request's own
 * answer through, later than the deadline by the time the commit takes).
 */
export class RequestDeadline implements WorkControl {
  private readonly controller = new AbortController();
  private committing = false;

  constructor(
    readonly ms: number,
    readonly waitedLimits: WaitedLimits = DEFAULT_WAITED_LIMITS,
  ) {}

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The time is up: true when the request answers the deadline error; false when a write already claimed its commit. */
  expire(): boolean {
    if (this.committing) return false;
    if (!this.signal.aborted) this.controller.abort(deadlinePassed(this.ms));
    return true;
  }

  async beforeCommit(_manager: EntityManager): Promise<void> {
    this.signal.throwIfAborted();
    this.committing = true;
  }
}
