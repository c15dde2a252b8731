import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { bootstrapGrid, bootstrapMultiplicities } from '../../../src/analytics/bootstrap';
import { AnalyticsError } from '../../../src/analytics/errors';
import { kemeny } from '../../../src/analytics/kemeny';
import { kemenyRankIntervals } from '../../../src/analytics/rank-intervals';
import { InlineStatistics } from '../../../src/modules/scoring/statistics-engine';
import { sharedMultiplicities, STATISTICS_THREAD_NICE } from '../../../src/modules/scoring/statistics-tasks';
import { createStatisticsEngine, mapLimited, ThreadedStatistics } from '../../../src/modules/scoring/statistics-threads';

function lcg(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const bits = (a: ArrayLike<number>) => Array.from(new Uint8Array(Float64Array.from(a).buffer));

/**
 * The statistics threads compute what the request thread computes, bit for bit: the tasks are
 * the same pure functions, the replicates of rank intervals are split between threads and put
 * back side by side.
 */
describe('statistics on worker threads', () => {
  const random = lcg(29);
  const n = 57;
  const V = 4;
  const R = 9;
  const B = 203;
  const variables = Array.from({ length: V }, (_, v) => ({ key: `v${v}`, groups: Int32Array.from({ length: n }, () => Math.floor(random() * (v + 2)) - (random() < 0.05 ? 1 : 0)) }));
  // Two 0/1 variables and two with real-valued item scores (the kernel's two paths).
  const runs = Array.from({ length: R }, (_, r) => ({
    id: `r${r}`,
    items: variables.map((_, v) => Float64Array.from({ length: n }, () => (v < 2 ? (random() < 0.4 + r * 0.05 ? 1 : 0) : random() * (0.5 + r * 0.05)))),
  }));
  let threads: ThreadedStatistics;

  beforeAll(() => {
    threads = new ThreadedStatistics(2);
  });
  afterAll(async () => {
    await threads.close();
  });

  it('draws the multiplicity matrix of bootstrapMultiplicities, in shared memory', async () => {
    const w = await threads.multiplicities(n, B, 5);
    expect(Object.prototype.toString.call(w.buffer)).toBe('[object SharedArrayBuffer]');
    expect(Object.prototype.toString.call(w)).toBe('[object Uint8Array]');
    expect(Array.from(w)).toEqual(Array.from(bootstrapMultiplicities(n, B, 5)));
    // An entry above the u8 range (here: above 2) gives the Int32 matrix, the same numbers.
    const wide = sharedMultiplicities(n, B, 5, 2);
    expect(Object.prototype.toString.call(wide)).toBe('[object Int32Array]');
    expect(Array.from(wide)).toEqual(Array.from(bootstrapMultiplicities(n, B, 5)));
    expect(Math.max(...bootstrapMultiplicities(n, B, 5))).toBeGreaterThan(2);
  });

  it('computes grids of run slices bit for bit as bootstrapGrid, from views of larger arrays too', async () => {
    const multiplicities = await threads.multiplicities(n, B, 5);
    const whole = bootstrapGrid({ variables, runs, multiplicities: bootstrapMultiplicities(n, B, 5), confidence: 0.9 });
    // Item columns as views into one array per run, as the per-run cache holds them: in shared
    // memory for some runs, in memory of the request thread for the others.
    const viewed = runs.map((run, r) => {
      const all = r % 2 === 0 ? threads.float64(V * n) : new Float64Array(V * n);
      run.items.forEach((column, v) => all.set(column, v * n));
      return { id: run.id, items: run.items.map((_, v) => all.subarray(v * n, (v + 1) * n)) };
    });
    const parts = await Promise.all([threads.grid(variables, viewed.slice(0, 4), multiplicities, 0.9), threads.grid(variables, viewed.slice(4), multiplicities, 0.9)]);
    expect(bits([...parts[0]!.replicates, ...parts[1]!.replicates])).toEqual(bits(whole.replicates));
    expect(bits([...parts[0]!.macroReplicates, ...parts[1]!.macroReplicates])).toEqual(bits(whole.macroReplicates));
    expect([...parts[0]!.perVariable, ...parts[1]!.perVariable]).toEqual(whole.perVariable);
    expect([...parts[0]!.macro, ...parts[1]!.macro]).toEqual(whole.macro);
    expect(parts[1]!.multiplicities).toBe(multiplicities);
    // The caller's arrays are read or copied, never handed over.
    expect(viewed.every((run) => run.items.every((column) => column.length === n))).toBe(true);
    expect(bits(viewed[1]!.items[2]!)).toEqual(bits(runs[1]!.items[2]!));
  });

  it('keeps each thread\'s matrix across the slices of a computation and tells computations apart', async () => {
    // Slices of two computations on two threads, interleaved: a thread that holds one matrix
    // gets a slice of the other and must not use the one it holds.
    const [first, second] = await Promise.all([threads.multiplicities(n, B, 5), threads.multiplicities(n, B, 6)]);
    const expected = [5, 6].map((seed) => bootstrapGrid({ variables, runs, multiplicities: bootstrapMultiplicities(n, B, seed), confidence: 0.9 }));
    const slices = [runs.slice(0, 3), runs.slice(3, 6), runs.slice(6)];
    for (let round = 0; round < 2; round++) {
      const parts = await Promise.all(
        slices.flatMap((slice) => [threads.grid(variables, slice, first, 0.9), threads.grid(variables, slice, second, 0.9)]),
      );
      [0, 1].forEach((m) => {
        const mine = parts.filter((_, i) => i % 2 === m);
        expect(bits(mine.flatMap((part) => [...part.replicates]))).toEqual(bits(expected[m]!.replicates));
      });
    }
    // Inline too: the request thread's kernel keeps the last matrix it transposed.
    const inline = new InlineStatistics();
    const inlineMatrices = [await inline.multiplicities(n, B, 5), await inline.multiplicities(n, B, 6)];
    for (const slice of slices) {
      for (const m of [0, 1]) {
        const part = await inline.grid(variables, slice, inlineMatrices[m]!, 0.9);
        const at = runs.indexOf(slice[0]!) * V * B;
        expect(bits(part.replicates)).toEqual(bits(expected[m]!.replicates.subarray(at, at + slice.length * V * B)));
      }
    }
  });

  it('gives the Kemeny–Young consensus of kemeny()', async () => {
    const scores = Array.from({ length: V }, () => Float64Array.from({ length: 30 }, () => Math.round(random() * 20) / 20));
    const macro = Float64Array.from({ length: 30 }, () => random());
    const names = Array.from({ length: 30 }, (_, c) => `run ${c}`);
    expect(await threads.kemeny(scores, { macro, names })).toEqual(kemeny(scores, { macro, names }));
  });

  it.each([1, 2, 3])('splits rank-interval replicates over %i threads with the ranks of one computation', async (size) => {
    const engine = new ThreadedStatistics(size);
    try {
      const grid = bootstrapGrid({ variables, runs, multiplicities: bootstrapMultiplicities(n, B, 7) });
      const names = runs.map((r) => r.id);
      const pointOrder = kemeny(
        Array.from({ length: V }, (_, v) => Float64Array.from({ length: R }, (_, r) => grid.points[r * V + v]!)),
        { macro: grid.macroPoints, names },
      ).order;
      const data = engine.float64(grid.replicates.length);
      data.set(grid.replicates);
      const macro = engine.float64(grid.macroReplicates.length);
      macro.set(grid.macroReplicates);
      const expected = kemenyRankIntervals(
        { data: grid.replicates, candidates: R, voters: V, replicates: B },
        { level: 0.9, names, pointOrder, macro: { data: grid.macroReplicates } },
      ).intervals.map(({ candidate, lower, upper }) => ({ candidate, lower, upper }));
      const inline = await new InlineStatistics().rankIntervals({ data: grid.replicates, macro: grid.macroReplicates, candidates: R, voters: V, replicates: B }, { level: 0.9, names, pointOrder });
      const threaded = await engine.rankIntervals({ data, macro, candidates: R, voters: V, replicates: B }, { level: 0.9, names, pointOrder });
      expect(threaded).toEqual(expected);
      expect(inline).toEqual(expected);
      // Arrays not in shared memory are copied into it.
      expect(await engine.rankIntervals({ data: grid.replicates, macro: grid.macroReplicates, candidates: R, voters: V, replicates: B }, { level: 0.9, names, pointOrder })).toEqual(expected);
      expect(engine.running).toBeLessThanOrEqual(size);
    } finally {
      await engine.close();
    }
  });

  it('rejects a task with the analytics error of the thread, code kept, and goes on', async () => {
    const failure = await threads.kemeny([Float64Array.of(1, 2), Float64Array.of(1)], {}).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(AnalyticsError);
    expect((failure as AnalyticsError).code).toBe('LENGTH_MISMATCH');
    expect((await threads.kemeny([Float64Array.of(1, 2)], {})).order).toEqual([1, 0]);
  });

  it('fails only the task of a thread that dies, and starts another for the next', async () => {
    let spawned = 0;
    const engine = new ThreadedStatistics(1, { spawn: () => {
      spawned += 1;
      // The first thread dies on its first task; later ones answer as the real entry does.
      return spawned === 1
        ? new Worker("require('node:worker_threads').parentPort.on('message', () => process.exit(3));", { eval: true })
        : new Worker(
            "const { parentPort } = require('node:worker_threads'); parentPort.on('message', () => parentPort.postMessage({ ok: true, result: { order: [0], rank: [1] } }));",
            { eval: true },
          );
    } });
    try {
      const first = engine.kemeny([Float64Array.of(1)], {});
      const second = engine.kemeny([Float64Array.of(1)], {});
      await expect(first).rejects.toThrow(/statistics thread ended \(exit code 3\)/);
      await expect(second).resolves.toEqual({ order: [0], rank: [1] });
      expect(spawned).toBe(2);
    } finally {
      await engine.close();
    }
  });

  it('rejects what is queued when closed, and everything after', async () => {
    const engine = new ThreadedStatistics(1);
    const scores = [Float64Array.from({ length: 12 }, (_, c) => c % 5)];
    const running = engine.kemeny(scores, {}).catch((error: Error) => error);
    const queued = engine.kemeny(scores, {}).catch((error: Error) => error);
    await engine.close();
    expect(await queued).toEqual(new Error('statistics threads closed'));
    expect(await running).toEqual(new Error('statistics threads closed'));
    await expect(engine.kemeny(scores, {})).rejects.toThrow(/closed/);
    expect(engine.running).toBe(0);
  });

  it('runs its threads below the request thread\'s priority (Linux: a nice value per thread)', async () => {
    await threads.kemeny([Float64Array.of(1, 2)], {});
    // Field 19 of /proc/<pid>/task/<tid>/stat is the thread's nice value.
    const niceOf = (tid: string) => Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]);
    const nices = readdirSync('/proc/self/task').map(niceOf);
    const requestThread = niceOf(String(process.pid));
    expect(requestThread).toBeLessThan(19);
    expect(nices).toContain(Math.min(19, requestThread + STATISTICS_THREAD_NICE));
  });

  it('ends threads that have been idle, and starts them again for the next task', async () => {
    const engine = new ThreadedStatistics(2, { idleMs: 20 });
    try {
      await Promise.all([engine.kemeny([Float64Array.of(1, 2)], {}), engine.kemeny([Float64Array.of(2, 1)], {})]);
      // Both end once idle (the test times out otherwise).
      while (engine.running > 0) await new Promise((resolve) => setTimeout(resolve, 10));
      expect((await engine.kemeny([Float64Array.of(1, 2)], {})).order).toEqual([1, 0]);
      expect(engine.running).toBe(1);
    } finally {
      await engine.close();
    }
  });

  /** Spawns with `spawn` and records every message the pool sends to the thread. */
  function recorded(received: unknown[], spawn: () => Worker): () => Worker {
    return () => {
      const worker = spawn();
      const post = worker.postMessage.bind(worker);
      worker.postMessage = (message: unknown, transfer?: never) => {
        received.push(message);
        post(message, transfer);
      };
      return worker;
    };
  }
  const isRelease = (m: unknown) => (m as { release?: boolean }).release === true;

  it('asks an idle thread to give back its memory and keeps it, ignoring a message while it has no task', async () => {
    const received: unknown[] = [];
    // A thread that records what the pool sends, answers tasks as the real entry does, and
    // answers a release too (the real one does not): the pool must not take that for a result.
    const engine = new ThreadedStatistics(1, {
      releaseMs: 20,
      collectAboveBytes: 1234,
      spawn: recorded(received, () =>
        new Worker(
          `const { parentPort } = require('node:worker_threads');
          parentPort.on('message', (m) => {
            parentPort.postMessage(m.task ? { ok: true, result: { order: [m.task.scores.length], rank: [1] } } : { ok: true, result: 'stray' });
          });`,
          { eval: true },
        ),
      ),
    });
    try {
      expect((await engine.kemeny([Float64Array.of(1)], {})).order).toEqual([1]);
      while (received.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(received[1]).toEqual({ release: true, collectAbove: 1234 });
      // The thread is kept; its stray answer resolved nothing and did not free it again (which
      // would have sent another release after 20 ms): two tasks at once on the one thread still
      // get their own answers, in turn.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(engine.running).toBe(1);
      expect(received.filter(isRelease)).toHaveLength(1);
      const [a, b] = await Promise.all([engine.kemeny([Float64Array.of(1), Float64Array.of(2)], {}), engine.kemeny([Float64Array.of(1)], {})]);
      expect([a.order, b.order]).toEqual([[2], [1]]);
    } finally {
      await engine.close();
    }
  });

  /**
   * The real thread entry with a collector that counts its calls in `counter` (the first of
   * its Int32 entries) instead of collecting.
   */
  function countingCollector(counter: Int32Array): () => Worker {
    const root = path.resolve(__dirname, '../../..');
    return () =>
      new Worker(
        `const { workerData } = require('node:worker_threads');
        const counter = new Int32Array(workerData.counter);
        globalThis.gc = () => Atomics.add(counter, 0, 1);
        require(workerData.register);
        require(workerData.entry);`,
        {
          eval: true,
          workerData: {
            counter: counter.buffer,
            register: path.join(root, 'scripts/ts-register.js'),
            entry: path.join(root, 'src/modules/scoring/statistics-worker.ts'),
          },
        },
      );
  }

  it('computes the same grid after a thread released its kernel, collecting its heap only when it holds much', async () => {
    // Above 0 bytes held the thread collects; below Infinity only for a large kernel memory
    // (20,000 reports × 1,000 resamples: 37 MB), not for a small one.
    const cases = [
      { collectAboveBytes: Infinity, reports: n, resamples: B, collections: 0 },
      { collectAboveBytes: 0, reports: n, resamples: B, collections: 1 },
      { collectAboveBytes: Infinity, reports: 20_000, resamples: 1000, collections: 1 },
    ];
    for (const { collectAboveBytes, reports, resamples, collections } of cases) {
      const received: unknown[] = [];
      const counter = new Int32Array(new SharedArrayBuffer(4));
      const engine = new ThreadedStatistics(1, { releaseMs: 10, collectAboveBytes, spawn: recorded(received, countingCollector(counter)) });
      try {
        const few = [{ key: 'g', groups: Int32Array.from({ length: reports }, (_, i) => i % 3) }];
        const one = [{ id: 'a', items: [Float64Array.from({ length: reports }, (_, i) => ((i * 7) % 5 === 0 ? 1 : 0))] }];
        const multiplicities = await engine.multiplicities(reports, resamples, 9);
        const first = await engine.grid(few, one, multiplicities, 0.95);
        while (!received.some(isRelease)) await new Promise((resolve) => setTimeout(resolve, 10));
        const again = await engine.grid(few, one, multiplicities, 0.95);
        expect(received.filter(isRelease)).toEqual([{ release: true, collectAbove: collectAboveBytes }]);
        // The release was handled before the second grid (one thread, messages in order).
        expect({ reports, collectAboveBytes, collections: Atomics.load(counter, 0) }).toEqual({ reports, collectAboveBytes, collections });
        expect(engine.running).toBe(1);
        expect(bits(again.replicates)).toEqual(bits(first.replicates));
        expect(bits(first.replicates)).toEqual(bits(bootstrapGrid({ variables: few, runs: one, multiplicities }).replicates));
      } finally {
        await engine.close();
      }
    }
  });

  it('gives the threads it starts the heap collector their release calls', () => {
    // In a new process, where nothing has set V8's flag yet: a thread started before the first
    // statistics thread has no collector, one started after it has.
    const script = `
      const { Worker } = require('node:worker_threads');
      const { spawnStatisticsThread } = require('./src/modules/scoring/statistics-threads.ts');
      const probe = () => new Promise((resolve) => {
        const w = new Worker("require('node:worker_threads').parentPort.postMessage(typeof gc)", { eval: true });
        w.once('message', (m) => w.terminate().then(() => resolve(m)));
      });
      (async () => {
        const before = await probe();
        await spawnStatisticsThread().terminate();
        console.log(before + ' ' + (await probe()));
      })();`;
    const output = execFileSync(process.execPath, ['-r', './scripts/ts-register.js', '-e', script], { cwd: path.resolve(__dirname, '../../..'), encoding: 'utf8' });
    expect(output.trim()).toBe('undefined function');
  });

  it('fails what waits, with a message of its own, when no thread can start', async () => {
    const engine = new ThreadedStatistics(2, {
      spawn: () => {
        throw new Error('no more threads');
      },
    });
    await expect(engine.kemeny([Float64Array.of(1)], {})).rejects.toThrow('statistics thread could not start: no more threads');
    await engine.close();
  });

  it('keeps as many grids in computation as their kernels\' memory allows, in about two slices each', () => {
    const engine = new ThreadedStatistics(4);
    expect(engine.gridParallelism(1252 * 1000)).toBe(4);
    expect(engine.gridParallelism(20_000 * 1000)).toBe(2);
    expect(engine.gridParallelism(40_000 * 1000)).toBe(1);
    expect(engine.gridParallelism(1252 * 10_000)).toBe(3);
    expect(new InlineStatistics().gridParallelism()).toBe(1);
    // Slices: at least the runs read at a time, else two per grid that computes at once.
    expect(engine.gridSliceRuns(14, 90, 1252 * 1000)).toBe(14);
    expect(engine.gridSliceRuns(14, 270, 1252 * 1000)).toBe(34);
    expect(engine.gridSliceRuns(1, 30, 20_000 * 1000)).toBe(8);
    expect(engine.gridSliceRuns(1, 30, 40_000 * 1000)).toBe(15);
    expect(new ThreadedStatistics(2).gridSliceRuns(14, 90, 1252 * 1000)).toBe(23);
    // On the request thread slices stay as short as the runs read at a time.
    expect(new InlineStatistics().gridSliceRuns(14)).toBe(14);
  });

  it('maps with at most `limit` calls pending, results in order, and starts nothing after a failure', async () => {
    let pending = 0;
    let most = 0;
    const calls: number[] = [];
    const results = await mapLimited([5, 1, 4, 2, 3], 2, async (x, i) => {
      calls.push(i);
      most = Math.max(most, ++pending);
      await new Promise((resolve) => setTimeout(resolve, x));
      pending--;
      return x * 10;
    });
    expect(results).toEqual([50, 10, 40, 20, 30]);
    expect(most).toBe(2);
    expect(calls.sort()).toEqual([0, 1, 2, 3, 4]);
    const started: number[] = [];
    await expect(
      mapLimited([0, 1, 2, 3, 4, 5], 1, async (x) => {
        started.push(x);
        if (x === 1) throw new Error('part 1 failed');
        return x;
      }),
    ).rejects.toThrow('part 1 failed');
    expect(started).toEqual([0, 1]);
  });

  it('computes on the calling thread for ANALYTICS_THREADS=0', () => {
    expect(createStatisticsEngine(0)).toBeInstanceOf(InlineStatistics);
    expect(createStatisticsEngine(3)).toBeInstanceOf(ThreadedStatistics);
    expect(() => new ThreadedStatistics(0)).toThrow(RangeError);
  });
});
