import { performance } from 'node:perf_hooks';

/** A turn of the event loop: I/O and timers waiting behind the current work run first. */
export const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Long synchronous work in pieces: `pause()` between two pieces gives the event loop a turn once
 * `sliceMs` have passed since the last one, so other requests wait at most about a slice.
 */
export class TimeSlices {
  private began = performance.now();

  constructor(private readonly sliceMs: number) {}

  async pause(): Promise<void> {
    if (performance.now() - this.began < this.sliceMs) return;
    await yieldToEventLoop();
    this.began = performance.now();
  }
}
