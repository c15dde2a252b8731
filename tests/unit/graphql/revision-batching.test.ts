import { batchedRevisions } from '../../../src/graphql/response-cache';

describe('revision lookups batched per project', () => {
  it('at most one lookup in flight per project, and each caller gets one that started after it asked', async () => {
    let revision = 1;
    const started: { project: string; resolve: () => void }[] = [];
    const lookup = (project: string) =>
      new Promise<string>((resolve) => {
        const seen = String(revision);
        started.push({ project, resolve: () => resolve(seen) });
      });
    const revisions = batchedRevisions(lookup);
    const first = revisions('p');
    expect(started).toHaveLength(1);
    // A write commits while the first lookup is in flight; later callers must see it.
    revision = 2;
    const second = revisions('p');
    const third = revisions('p');
    const other = revisions('q');
    expect(started.map((s) => s.project)).toEqual(['p', 'q']);
    started[0]!.resolve();
    await expect(first).resolves.toBe('1');
    // The second and third callers share one new lookup, started after they asked.
    await new Promise((resolve) => setImmediate(resolve));
    expect(started.map((s) => s.project)).toEqual(['p', 'q', 'p']);
    started[2]!.resolve();
    started[1]!.resolve();
    await expect(second).resolves.toBe('2');
    await expect(third).resolves.toBe('2');
    await expect(other).resolves.toBe('2');
  });

  it('a failed lookup fails its callers only; the next caller asks again', async () => {
    let calls = 0;
    const revisions = batchedRevisions(async () => {
      calls += 1;
      if (calls === 1) throw new Error('connection lost');
      return '7';
    });
    await expect(revisions('p')).rejects.toThrow('connection lost');
    await expect(revisions('p')).resolves.toBe('7');
  });
});
