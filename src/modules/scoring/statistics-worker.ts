/**
 * Entry of a statistics thread (statistics-threads.ts): answers each task message with its
 * result or its failure, one at a time.
 */
import { parentPort } from 'node:worker_threads';
import { runStatisticsTask, taskFailure, type StatisticsTask } from './statistics-tasks';

const port = parentPort;
if (!port) throw new Error('statistics-worker runs as a worker thread');

port.on('message', (message: { task: StatisticsTask }) => {
  try {
    const { result, transfer } = runStatisticsTask(message.task);
    port.postMessage({ ok: true, result }, transfer);
  } catch (error) {
    port.postMessage({ ok: false, failure: taskFailure(error) });
  }
});
