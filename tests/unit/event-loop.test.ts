import { TimeSlices, yieldToEventLoop } from '../../src/event-loop';

describe('TimeSlices', () => {
  /** Whether an immediate queued before `work` ran by the time `work` settled. */
  async function otherWorkRan(work: () => Promise<void>): Promise<boolean> {
    let ran = false;
    setImmediate(() => (ran = true));
    await work();
    return ran;
  }

  it('gives the event loop a turn once its slice has passed, and not before', async () => {
    expect(await otherWorkRan(() => new TimeSlices(0).pause())).toBe(true);
    expect(await otherWorkRan(() => new TimeSlices(60_000).pause())).toBe(false);
    const slices = new TimeSlices(0);
    for (let i = 0; i < 3; i++) expect(await otherWorkRan(() => slices.pause())).toBe(true);
  });

  it('yieldToEventLoop lets queued immediates run first', async () => {
    expect(await otherWorkRan(yieldToEventLoop)).toBe(true);
    expect(await otherWorkRan(() => Promise.resolve())).toBe(false);
  });
});
