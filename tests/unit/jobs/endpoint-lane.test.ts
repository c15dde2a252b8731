import { EndpointLane, WorkerBudget } from '../../../src/jobs/endpoint-lane';
import { fairShares } from '../../../src/jobs/endpoint-slots';

function lane(capacity: number, events = { opened: jest.fn(), closed: jest.fn() }, breaker = { failureThreshold: 2, cooldownMs: 30, maxCooldownMs: 120 }) {
  const l = new EndpointLane('e', 16, new WorkerBudget(100), events, breaker);
  l.capacity = capacity;
  return { l, events };
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

  it('opens after consecutive failures, lets one probe through after the cooldown, closes on its success', async () => {
    const { l, events } = lane(4);
    for (let i = 0; i < 2; i++) {
      const release = await l.acquire('r', 1);
      l.reportOutcome(false, 'HTTP 500');
      release();
    }
    expect(l.breakerState).toBe('OPEN');
    expect(events.opened).toHaveBeenCalledWith('HTTP 500');
    let granted = 0;
    const a = l.acquire('r', 1).then((release) => (granted++, release));
    const b = l.acquire('r', 1).then((release) => (granted++, release));
    await new Promise((r) => setTimeout(r, 10));
    expect(granted).toBe(0);
    await new Promise((r) => setTimeout(r, 40));
    // Half-open: exactly one probe.
    expect(granted).toBe(1);
    expect(l.breakerState).toBe('HALF_OPEN');
    const probe = await a;
    l.reportOutcome(true);
    probe();
    expect(l.breakerState).toBe('CLOSED');
    expect(events.closed).toHaveBeenCalledTimes(1);
    (await b)();
    expect(granted).toBe(2);
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
