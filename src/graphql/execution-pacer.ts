import { performance } from 'node:perf_hooks';

/** Longest stretch of one request's execution before other work gets the event loop. */
export const EXECUTION_SLICE_MS = 20;
/** Objects completed between two looks at the clock. */
const CHECK_EVERY = 32;
const MAX_BATCH = 1024;

/**
 * Lets other requests in while one request builds a large answer. graphql-js completes an
 * answer's objects synchronously, so a page of 6,000 predictions with their fields kept the event
 * loop for hundreds of milliseconds. Every object of the answer passes `admit()` (the object
 * types' isTypeOf, see schema.ts): while the request's slice lasts it answers `true` at once; once
 * the slice is used up it answers a promise, and graphql-js completes that object later. Waiting
 * objects are let go in batches, one batch per turn of the event loop, each batch opening a new
 * slice; a batch whose work used up its slice halves the next batch, one that did not doubles it.
 * The answer is the same; only its objects are completed in several turns.
 */
export class ExecutionPacer {
  private sliceStart = performance.now();
  private admitted = 0;
  private exhausted = false;
  private readonly waiting: (() => void)[] = [];
  private head = 0;
  private batch = 64;
  private scheduled = false;

  constructor(private readonly sliceMs = EXECUTION_SLICE_MS) {}

  /** `true` while the slice lasts, else a promise of `true` kept in a later turn of the event loop. */
  admit(): true | Promise<true> {
    if (!this.exhausted) {
      if (++this.admitted % CHECK_EVERY !== 0 || performance.now() - this.sliceStart < this.sliceMs) return true;
      this.exhausted = true;
    }
    return new Promise<true>((resolve) => {
      this.waiting.push(() => resolve(true));
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.release);
      }
    });
  }

  /** Objects waiting for a later turn (for tests). */
  get pending(): number {
    return this.waiting.length - this.head;
  }

  private readonly release = (): void => {
    this.scheduled = false;
    // The batch let go in the previous turn used up its slice: let fewer go now.
    this.batch = this.exhausted && this.head > 0 ? Math.max(1, this.batch >> 1) : Math.min(MAX_BATCH, this.batch * 2);
    this.exhausted = false;
    this.sliceStart = performance.now();
    const end = Math.min(this.waiting.length, this.head + this.batch);
    for (; this.head < end; this.head += 1) this.waiting[this.head]!();
    if (this.head === this.waiting.length) {
      this.waiting.length = 0;
      this.head = 0;
    } else {
      this.scheduled = true;
      setImmediate(this.release);
    }
  };
}
