import { RateLimitedError } from '../../src/domain/errors';
import { RateLimits } from '../../src/graphql/rate-limits';
import { startTestApp, type TestApp } from '../support/test-app';

describe('rate limits taken in leases from PostgreSQL', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  /** Admits as many requests of `key` as `limits` allow, alternating between the processes given. */
  async function drain(processes: RateLimits[], key: string, attempts: number): Promise<{ admitted: number; refused: number }> {
    let admitted = 0;
    let refused = 0;
    for (let i = 0; i < attempts; i++) {
      try {
        // Several requests at once on each process, as under load.
        await Promise.all(processes.map((limits) => limits.admitKey(key)));
        admitted += processes.length;
      } catch (error) {
        if (!(error instanceof RateLimitedError)) throw error;
        refused += 1;
      }
    }
    return { admitted, refused };
  }

  it('all processes together admit no more than the limit, with far fewer writes than requests', async () => {
    const settings = { perKeyPerMinute: 400, perAddressPerMinute: 0, authFailuresPerMinute: 0 };
    const processes = [new RateLimits(t.dataSource, settings), new RateLimits(t.dataSource, settings)];
    t.queries.length = 0;
    const outcome = await drain(processes, 'busy-key', 300);
    const writes = t.queries.filter((sql) => /rate_limits/i.test(sql)).length;
    expect(outcome.refused).toBeGreaterThan(0);
    expect(outcome.admitted).toBeLessThanOrEqual(400);
    // Unspent leases of the other process are all that can be lost (at most 1/16 of the window each).
    expect(outcome.admitted).toBeGreaterThanOrEqual(400 - 2 * 25);
    expect(writes).toBeLessThan(400 / 4);
    const [{ points }] = (await t.dataSource.query(`SELECT points FROM rate_limits WHERE key = 'key:busy-key'`)) as [{ points: number }];
    expect(points).toBeGreaterThanOrEqual(400);
  });

  it('a small limit is counted one request at a time, exactly', async () => {
    const settings = { perKeyPerMinute: 5, perAddressPerMinute: 0, authFailuresPerMinute: 0 };
    const a = new RateLimits(t.dataSource, settings);
    const b = new RateLimits(t.dataSource, settings);
    for (let i = 0; i < 3; i++) await a.admitKey('small-key');
    await b.admitKey('small-key');
    await b.admitKey('small-key');
    await expect(a.admitKey('small-key')).rejects.toBeInstanceOf(RateLimitedError);
    await expect(b.admitKey('small-key')).rejects.toBeInstanceOf(RateLimitedError);
  });
});
