/**
 * Entry of a statistics thread (statistics-threads.ts): answers each task message with its
 * result or its failure, one at a time.
 */
import os from 'node:os';
import { parentPort } from 'node:worker_threads';
import { runStatisticsTask, STATISTICS_THREAD_NICE, taskFailure, type StatisticsTask } from './statistics-tasks';

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

port.on('message', (message: { task: StatisticsTask }) => {
  try {
    const { result, transfer } = runStatisticsTask(message.task);
    port.postMessage({ ok: true, result }, transfer);
  } catch (error) {
    port.postMessage({ ok: false, failure: taskFailure(error) });
  }
});
