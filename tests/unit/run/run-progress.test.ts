import { progressOf, telemetryOf, tokensPerSecondOf, usageOf } from '../../../src/modules/run/run-progress';
import { Run, RunSource, RunStatus } from '../../../src/modules/run/run.entity';

const START = new Date('2026-01-01T00:00:00.000Z');

function run(fields: Partial<Run>): Run {
  return Object.assign(new Run(), {
    status: RunStatus.SUCCEEDED,
    source: RunSource.EXECUTED,
    totalReports: 10,
    succeededCount: 8,
    failedCount: 2,
    promptTokens: 5000,
    completionTokens: 2000,
    startedAt: START,
    // 40 s of which 20 s were paused: 20 s of running
    finishedAt: new Date(START.getTime() + 40_000),
    pausedMs: 20_000,
    ...fields,
  });
}

describe('run progress arithmetic', () => {
  it('measures throughput over the time the run ran, per report and per GPU', () => {
    expect(usageOf(run({}), { mean: 100, p50: 90, p95: 200 }, 4)).toEqual({
      promptTokens: 5000,
      completionTokens: 2000,
      meanLatencyMs: 100,
      latencyP50Ms: 90,
      latencyP95Ms: 200,
      secondsPerReport: 2,
      tokensPerSecond: 100,
      tokensPerSecondPerGpu: 25,
    });
  });

  it('has no throughput for an imported run or one that has not started', () => {
    for (const r of [run({ source: RunSource.IMPORTED }), run({ startedAt: null, finishedAt: null })]) {
      expect(tokensPerSecondOf(r)).toBeNull();
      expect(usageOf(r, null, 4)).toMatchObject({ secondsPerReport: null, tokensPerSecond: null, tokensPerSecondPerGpu: null });
    }
  });

  it('scales the throughput to a full KV cache, and counts no samples when there are none', () => {
    const telemetry = telemetryOf(run({}), { samples: 3, kv: 0.5, running: 2, waiting: 0, hitRate: 0.25, generationTps: 300 });
    expect(telemetry).toMatchObject({ samples: 3, meanKvCacheUsage: 0.5, tokensPerSecondAtFullCache: 200, prefixCacheHitRate: 0.25 });
    expect(telemetryOf(run({}), null)).toMatchObject({ samples: 0, meanKvCacheUsage: null, tokensPerSecondAtFullCache: null });
  });

  it('estimates what is left from the pace of the last minute, or since the start when the recent pace is unknown', () => {
    const running = run({ status: RunStatus.RUNNING, succeededCount: 4, failedCount: 0, finishedAt: null, pausedMs: 0, startedAt: new Date(Date.now() - 120_000) });
    // 6 pending at 3 per 60 s
    expect(progressOf(running, 3).etaMs).toBe(120_000);
    // 6 pending at 4 per ~120 s
    expect(progressOf(running, null).etaMs).toBeGreaterThanOrEqual(180_000);
    expect(progressOf(run({}), 3)).toMatchObject({ pending: 0, etaMs: null, elapsedMs: 20_000 });
  });
});

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
