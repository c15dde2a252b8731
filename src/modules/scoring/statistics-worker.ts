/**
 * Entry of a statistics thread (statistics-threads.ts): answers each task message with its
 * result or its failure, one at a time. A release message (RELEASE_MESSAGE) gets no answer:
 * the thread drops the kernel memory it keeps between tasks and stays, with its compiled code.
 */
import os from 'node:os';
import v8 from 'node:v8';
import vm from 'node:vm';
import { parentPort } from 'node:worker_threads';
import { releaseKernelMemory } from '../../analytics/bootstrap-kernel';
import { RELEASE_MESSAGE, runStatisticsTask, STATISTICS_THREAD_NICE, taskFailure, type StatisticsTask } from './statistics-tasks';

const port = parentPort;
if (!port) throw new Error('statistics-worker runs as a worker thread');

// Below the request thread's priority (STATISTICS_THREAD_NICE more than the process's nice
// value): when the cores are busy, requests are served first and the statistics take what is left. Linux keeps a nice value per thread (elsewhere it is the
// whole process's, so the thread keeps the process's priority there).
if (process.platform === 'linux') {
  try {
    os.setPriority(0, Math.min(19, os.getPriority(0) + STATISTICS_THREAD_NICE));
  } catch {
    // Not permitted here: the thread runs at the process's priority.
  }
}

/**
 * Released kernel memory from which the thread's heap is collected at once. A full collection
 * also drops much of what V8 learnt while optimising the statistics (a cold leaderboard of 90
 * runs after one took 0.6–0.7 s instead of 0.4–0.5 s), so below this the memory waits for the
 * thread's next computation, which collects as it allocates. At 1,252 reports × 1,000
 * resamples the kernel holds 3 MB, at 20,000 reports 37 MB.
 */
const COLLECT_RELEASED_BYTES = 16 << 20;

let collect: (() => void) | null | undefined;

/**
 * A full collection of this thread's heap. V8 gives the collector to contexts made after
 * --expose-gc is set (the flag only adds that function to new contexts); where it cannot be
 * had, the memory waits for the thread's next collection.
 */
function collectGarbage(): void {
  if (collect === undefined) {
    try {
      v8.setFlagsFromString('--expose-gc');
      collect = vm.runInNewContext('gc') as () => void;
    } catch {
      collect = null;
    }
  }
  collect?.();
}

port.on('message', (message: { task: StatisticsTask } | typeof RELEASE_MESSAGE) => {
  if (!('task' in message)) {
    if (releaseKernelMemory() >= COLLECT_RELEASED_BYTES) collectGarbage();
    return;
  }
  try {
    const { result, transfer } = runStatisticsTask(message.task);
    port.postMessage({ ok: true, result }, transfer);
  } catch (error) {
    port.postMessage({ ok: false, failure: taskFailure(error) });
  }
});
