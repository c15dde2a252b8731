import { ExecutionPacer } from '../../../src/graphql/execution-pacer';

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('the execution pacer', () => {
  it('admits at once while the slice lasts', () => {
    const pacer = new ExecutionPacer(60_000);
    for (let i = 0; i < 1000; i++) expect(pacer.admit()).toBe(true);
    expect(pacer.pending).toBe(0);
  });

  it('once the slice is used up, admits in later turns of the event loop, in batches, with other work in between', async () => {
    const pacer = new ExecutionPacer(0);
    const answers = Array.from({ length: 2000 }, () => pacer.admit());
    // The clock is looked at every 32 objects: the first 31 pass, everything after waits.
    expect(answers.slice(0, 31).every((a) => a === true)).toBe(true);
    expect(answers.slice(31).every((a) => a instanceof Promise)).toBe(true);
    expect(pacer.pending).toBe(2000 - 31);

    const admittedAt: number[] = [];
    let turns = 0;
    answers.forEach((a) => {
      if (a instanceof Promise) void a.then((value) => admittedAt.push(value === true ? turns : -1));
    });
    while (pacer.pending > 0) {
      await turn();
      turns += 1;
    }
    await turn();
    expect(admittedAt).toHaveLength(2000 - 31);
    expect(admittedAt.every((t) => t >= 0)).toBe(true);
    // Not all in one turn: other callbacks ran between the batches.
    expect(new Set(admittedAt).size).toBeGreaterThan(1);
    expect(Math.max(...admittedAt)).toBeGreaterThan(0);
  });
});
