/**
 * Entry of a statistics thread (statistics-threads.ts): answers each task message with its
 * result or its failure, one at a time. A release message (ReleaseMessage) gets no answer:
 * the thread drops the kernel memory it keeps between tasks and stays, with its compiled code;
 * it also collects its heap when that kernel memory was COLLECT_KERNEL_BYTES or more, or when
 * it holds more than the message's `collectAbove` bytes.
 */
import os from 'node:os';
import v8 from 'node:v8';
import { parentPort } from 'node:worker_threads';
import { releaseKernelMemory } from '../../analytics/bootstrap-kernel';
import { runStatisticsTask, STATISTICS_THREAD_NICE, taskFailure, type ReleaseMessage, type StatisticsTask } from './statistics-tasks';

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
 * Dropped kernel memory from which the heap is collected at once: 37 MB at 20,000 reports ×
 * 1,000 resamples, which would otherwise stay while the thread is idle; 3 MB at 1,252 reports,
 * where keeping the optimised code matters more (statistics-threads.ts, COLLECT_HELD_BYTES).
 */
const COLLECT_KERNEL_BYTES = 16 << 20;

/**
 * What the thread holds: its heap's objects, live or not yet collected, and the memory outside
 * the heap they reach (the kernel's, the shared arrays of its last tasks, even where the
 * request thread holds them too). A computation leaves it there until the thread allocates
 * again, which an idle thread does not.
 */
function heldBytes(): number {
  const heap = v8.getHeapStatistics();
  return heap.used_heap_size + heap.external_memory;
}

port.on('message', (message: { task: StatisticsTask } | ReleaseMessage) => {
  if (!('task' in message)) {
    const held = heldBytes();
    const kernel = releaseKernelMemory();
    // The collector exists where the pool set --expose-gc before this thread started.
    const collect = (globalThis as { gc?: () => void }).gc;
    if (kernel >= COLLECT_KERNEL_BYTES || held > message.collectAbove) collect?.();
    return;
  }
  try {
    const { result, transfer } = runStatisticsTask(message.task);
    port.postMessage({ ok: true, result }, transfer);
  } catch (error) {
    port.postMessage({ ok: false, failure: taskFailure(error) });
  }
});
