import { EndpointLane, WorkerBudget, type BreakerOptions, type LaneClock } from '../../../src/jobs/endpoint-lane';
import { fairShares } from '../../../src/jobs/endpoint-slots';

/** The lane's clock on jest's fake timers: time moves only when a test advances it. */
const FAKE_CLOCK: LaneClock = {
  now: () => Date.now(),
  schedule(fn, ms) {
    const timer = setTimeout(fn, ms);
    return () => clearTimeout(timer);
  },
};

const BREAKER: BreakerOptions = { failureThreshold: 2, cooldownMs: 30, maxCooldownMs: 120 };

function lane(capacity: number, events = { opened: jest.fn(), closed: jest.fn() }, breaker: BreakerOptions = BREAKER) {
  const l = new EndpointLane('e', 16, new WorkerBudget(100), events, breaker, FAKE_CLOCK);
  l.capacity = capacity;
  return { l, events };
}

/** One report through the lane with the given outcome. */
async function report(l: EndpointLane, signal: 'ANSWERED' | 'FAILED' | 'NO_SIGN', reason?: string): Promise<void> {
  const release = await l.acquire('r', 1);
  l.reportOutcome(signal, reason);
  release();
}

describe('EndpointLane', () => {
  it('serves waiting reports round-robin by run, so a small run is not stuck behind a big one', async () => {
    const { l } = lane(1);
    const order: string[] = [];
    const releases: (() => void)[] = [];
    const ask = (run: string, label: string) =>
      l.acquire(run, 1).then((release) => {
        order.push(label);
        releases.push(release);
      });
    const all = [ask('big', 'b1'), ask('big', 'b2'), ask('big', 'b3'), ask('big', 'b4'), ask('small', 's1'), ask('small', 's2')];
    for (let i = 0; i < 6; i++) {
      await new Promise((r) => setImmediate(r));
      releases.shift()?.();
    }
    await Promise.all(all);
    expect(order).toEqual(['b1', 'b2', 's1', 'b3', 's2', 'b4']);
  });

  it('grants a report as many seats as its concurrent calls, never more than the capacity', async () => {
    const { l } = lane(4);
    const first = await l.acquire('r', 3);
    expect(l.inUse).toBe(3);
    let second = false;
    const pending = l.acquire('r', 3).then((release) => {
      second = true;
      return release;
    });
    await new Promise((r) => setImmediate(r));
    expect(second).toBe(false);
    expect(l.demand()).toBe(6);
    first();
    (await pending)();
    expect(second).toBe(true);
    expect(l.inUse).toBe(0);
  });

  describe('breaker', () => {
    beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
    afterEach(() => jest.useRealTimers());

    it('opens after consecutive failures, lets one probe through after the cooldown, closes on its answer', async () => {
      const { l, events } = lane(4);
      for (let i = 0; i < 2; i++) await report(l, 'FAILED', 'HTTP 500');
      expect(l.breakerState).toBe('OPEN');
      expect(events.opened).toHaveBeenCalledWith('HTTP 500');
      let granted = 0;
      const a = l.acquire('r', 1).then((release) => (granted++, release));
      const b = l.acquire('r', 1).then((release) => (granted++, release));
      await jest.advanceTimersByTimeAsync(29);
      expect(granted).toBe(0);
      await jest.advanceTimersByTimeAsync(10);
      // Half-open: exactly one probe.
      expect(granted).toBe(1);
      expect(l.breakerState).toBe('HALF_OPEN');
      const probe = await a;
      l.reportOutcome('ANSWERED');
      probe();
      expect(l.breakerState).toBe('CLOSED');
      expect(events.closed).toHaveBeenCalledTimes(1);
      (await b)();
      expect(granted).toBe(2);
    });

    it('never opens while the endpoint answers other reports in between, whatever fails', async () => {
      const { l, events } = lane(4, undefined, { failureThreshold: 3, cooldownMs: 5_000, maxCooldownMs: 60_000 });
      // 3 of every 7 reports fail every time (43%), three in a row after four answers.
      for (let i = 0; i < 100; i++) {
        await report(l, i % 7 >= 4 ? 'FAILED' : 'ANSWERED', 'HTTP 500');
        await jest.advanceTimersByTimeAsync(50);
      }
      expect(events.opened).not.toHaveBeenCalled();
      expect(l.breakerState).toBe('CLOSED');
    });

    it('counts failures against the endpoint only once it has answered nothing for quietMs', async () => {
      const { l, events } = lane(4, undefined, { failureThreshold: 3, cooldownMs: 1_000, maxCooldownMs: 8_000, quietMs: 2_000 });
      await report(l, 'ANSWERED');
      // A run of failed reports right after an answer: bad luck of the order, not a dead endpoint.
      for (let i = 0; i < 5; i++) await report(l, 'FAILED', 'HTTP 500');
      expect(l.breakerState).toBe('CLOSED');
      await jest.advanceTimersByTimeAsync(2_000);
      await report(l, 'FAILED', 'HTTP 500');
      expect(l.breakerState).toBe('OPEN');
      expect(events.opened).toHaveBeenCalledTimes(1);
    });

    it('doubles the pause while probes fail, never beyond maxCooldownMs', async () => {
      const { l } = lane(4, undefined, { failureThreshold: 1, cooldownMs: 1_000, maxCooldownMs: 4_000 });
      await report(l, 'FAILED', 'ECONNREFUSED');
      const pauses: number[] = [];
      for (let round = 0; round < 5; round++) {
        const opened = Date.now();
        let granted = false;
        const probe = l.acquire('r', 1).then((release) => ((granted = true), release));
        while (!granted) await jest.advanceTimersByTimeAsync(100);
        pauses.push(Math.round((Date.now() - opened) / 1000) * 1000);
        const release = await probe;
        l.reportOutcome('FAILED', 'ECONNREFUSED');
        release();
      }
      expect(pauses).toEqual([1_000, 2_000, 4_000, 4_000, 4_000]);
    });

    it('a probe that tells nothing about the endpoint makes room for the next probe', async () => {
      const { l } = lane(4, undefined, { failureThreshold: 1, cooldownMs: 100, maxCooldownMs: 100 });
      await report(l, 'FAILED', 'HTTP 503');
      let granted = 0;
      const first = l.acquire('r', 1).then((release) => (granted++, release));
      const second = l.acquire('r', 1).then((release) => (granted++, release));
      await jest.advanceTimersByTimeAsync(200);
      expect(granted).toBe(1);
      const release = await first;
      l.reportOutcome('NO_SIGN');
      release();
      await jest.advanceTimersByTimeAsync(0);
      expect(granted).toBe(2);
      expect(l.breakerState).toBe('HALF_OPEN');
      (await second)();
    });
  });

  it('rejects a waiter whose signal aborts, and frees nothing it never held', async () => {
    const { l } = lane(0);
    const controller = new AbortController();
    const waiting = l.acquire('r', 1, controller.signal);
    controller.abort(new Error('cancelled'));
    await expect(waiting).rejects.toThrow('cancelled');
    expect(l.demand()).toBe(0);
  });
});

describe('fairShares', () => {
  it('is max-min fair: nobody gets more than it wants, the rest is split evenly', () => {
    expect(fairShares(64, [100, 100])).toEqual([32, 32]);
    expect(fairShares(64, [10, 100])).toEqual([10, 54]);
    expect(fairShares(3, [2, 2])).toEqual([2, 1]);
    expect(fairShares(5, [0, 9, 1])).toEqual([0, 4, 1]);
    expect(fairShares(8, [1, 2])).toEqual([1, 2]);
    expect(fairShares(0, [5])).toEqual([0]);
  });

  it('never hands out more than the capacity', () => {
    for (let capacity = 0; capacity < 40; capacity++) {
      const wants = [capacity % 7, (capacity * 3) % 11, 5, 0, 13];
      const shares = fairShares(capacity, wants);
      expect(shares.reduce((a, b) => a + b, 0)).toBe(Math.min(capacity, wants.reduce((a, b) => a + b, 0)));
      shares.forEach((s, i) => expect(s).toBeLessThanOrEqual(wants[i]!));
    }
  });
});
