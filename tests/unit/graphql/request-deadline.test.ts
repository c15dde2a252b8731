import type { EntityManager } from 'typeorm';
import { apiErrorOf, DomainException } from '../../../src/domain/errors';
import { RequestDeadline } from '../../../src/graphql/request-deadline';

const manager = {} as EntityManager;

describe('RequestDeadline: the deadline error and a commit exclude each other', () => {
  it('once the deadline passed, a write may not commit: it throws the coded deadline error', async () => {
    const deadline = new RequestDeadline(1000);
    expect(deadline.expire()).toBe(true);
    expect(deadline.signal.aborted).toBe(true);
    const refusal = await deadline.beforeCommit(manager).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(DomainException);
    expect(refusal).toMatchObject({ code: 'DEADLINE_EXCEEDED', details: { deadlineMs: 1000 } });
    expect(apiErrorOf(refusal as DomainException)).toMatchObject({ status: 503, extensions: { code: 'BAD_USER_INPUT', reason: 'DEADLINE_EXCEEDED', deadlineMs: 1000 } });
  });

  it('once a write claimed its commit, the deadline lets the answer through and aborts nothing', async () => {
    const deadline = new RequestDeadline(1000);
    await deadline.beforeCommit(manager);
    expect(deadline.expire()).toBe(false);
    expect(deadline.signal.aborted).toBe(false);
  });

  it('carries the limits of work a waiting client is given', () => {
    expect(new RequestDeadline(1000, { importRecords: 5, experimentRuns: 2 }).waitedLimits).toEqual({ importRecords: 5, experimentRuns: 2 });
    expect(new RequestDeadline(1000).waitedLimits.importRecords).toBeGreaterThan(0);
  });
});
