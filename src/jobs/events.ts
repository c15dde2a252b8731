/**
 * What the job side tells the rest of the system, and hears from it. `jobs` knows no GraphQL:
 * src/graphql/pubsub.ts implements both interfaces with PostgreSQL LISTEN/NOTIFY, so an event
 * published by a worker in one process reaches subscribers and workers in every other process.
 * Events carry ids only; receivers read the current state from the database.
 */

export interface RunChange {
  runId: string;
  experimentId: string | null;
}

export interface RunEventPublisher {
  /** Counters or status of these runs changed (after the commit). */
  runsChanged(changes: readonly RunChange[]): Promise<void>;
  /** What one commit of the prediction writer changed: its predictions and its runs, in one message round. */
  committed(predictions: readonly { runId: string; ids: readonly string[] }[], changes: readonly RunChange[]): Promise<void>;
  /** A run was cancelled: workers abort its calls in flight. */
  runCancelled(runId: string): Promise<void>;
  /** New work items are in the queue: idle workers fetch now instead of at their next poll. */
  jobsAvailable(): Promise<void>;
}

export interface RunEventListener {
  onRunCancelled(listener: (runId: string) => void): () => void;
  onJobsAvailable(listener: () => void): () => void;
}

/** Publishing never fails the work that publishes: errors are reported and swallowed. */
export function safePublisher(publisher: RunEventPublisher, onError: (error: unknown) => void): RunEventPublisher {
  const guard =
    <A extends unknown[]>(fn: (...args: A) => Promise<void>) =>
    async (...args: A): Promise<void> => {
      try {
        await fn(...args);
      } catch (error) {
        onError(error);
      }
    };
  return {
    runsChanged: guard((changes) => publisher.runsChanged(changes)),
    committed: guard((predictions, changes) => publisher.committed(predictions, changes)),
    runCancelled: guard((runId) => publisher.runCancelled(runId)),
    jobsAvailable: guard(() => publisher.jobsAvailable()),
  };
}
