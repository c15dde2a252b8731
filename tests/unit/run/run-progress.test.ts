import { progressOf } from '../../../src/modules/run/run-progress';
import { Run, RunStatus } from '../../../src/modules/run/run.entity';

function runningRun(done: number, total: number, runningForMs: number): Run {
  return Object.assign(new Run(), {
    status: RunStatus.RUNNING,
    totalReports: total,
    succeededCount: done,
    failedCount: 0,
    pausedMs: 0,
    startedAt: new Date(Date.now() - runningForMs),
    finishedAt: null,
  });
}

describe('run progress ETA', () => {
  it('follows the predictions of the last minute', () => {
    // 30 in the last 60 s: 60 pending take about 120 s.
    const eta = progressOf(runningRun(140, 200, 600_000), 30).etaMs!;
    expect(eta).toBeGreaterThan(110_000);
    expect(eta).toBeLessThan(130_000);
  });

  it('promises no finish time while nothing was committed in the last minute', () => {
    // A run stalled at 141/200 after 400 s: the pace since the start would say about 170 s.
    expect(progressOf(runningRun(141, 200, 400_000), 0).etaMs).toBeNull();
  });

  it('has no ETA once nothing is pending', () => {
    expect(progressOf(runningRun(200, 200, 400_000), 0).etaMs).toBeNull();
  });
});
