import { TERMINAL_RUN_STATUSES } from '../../jobs/run-status';
import { Role } from '../api-key/api-key.entity';
import type { Principal } from '../api-key/principal';
import type { Experiment } from './experiment.entity';
import type { Prediction } from './prediction.entity';
import type { ExperimentProgressEvent, RunProgressEvent } from './run-execution.input';
import { progressOf, RECENT_WINDOW_SECONDS, tokensPerSecondOf, usageOf, type LatencySummary } from './run-progress';
import { Run, RunStatus, type RunProgress, type RunUsage } from './run.entity';
import type { RunService } from './run.service';

/** Feeds reload this often without events: a missed notification or a deleted run is noticed. */
export const FEED_REFRESH_MS = 5000;

/** The events of the bus a run feed reads (src/graphql/pubsub.ts publishes them with others). */
export type RunFeedEvent = { kind: 'run'; runId: string; experimentId: string | null } | { kind: 'predictions'; runId: string; ids: string[] };

/**
 * What a subscription sends, without the bus: which events wake it, what it sends first (the
 * current state, for late subscribers) and after the events that came. `load` and `initial` may
 * call `end()`: the feed finishes after the values they return. Values with the key of the value
 * sent last are not sent again.
 */
export interface RunFeed<T> {
  wakesOn(event: RunFeedEvent): boolean;
  initial(end: () => void): Promise<T[]>;
  load(events: RunFeedEvent[], end: () => void): Promise<T[]>;
  refreshMs: number;
  key?: (value: T) => string;
}

/** How the usage of runs is looked up: per request, batched (the resolvers pass their loaders). */
export interface UsageLookups {
  latency(runId: string): Promise<LatencySummary | null>;
  /** GPUs of the endpoint that serves the model; null when unknown. */
  gpus(modelId: string): Promise<number | null>;
}

/** Progress of runs and experiments: their counters, ETA and usage, and the feeds of their subscriptions. */
export class RunProgressService {
  constructor(
    private readonly runs: RunService,
    private readonly experiments: { experiment(principal: Principal, id: string, minimum: Role): Promise<Experiment> },
  ) {}

  /** The run's counters and ETA; `recentPredictions` counts what it committed in the last RECENT_WINDOW_SECONDS. */
  async progress(run: Run, recentPredictions: (runId: string) => Promise<number>): Promise<RunProgress> {
    return progressOf(run, run.status === RunStatus.RUNNING ? await recentPredictions(run.id) : null);
  }

  async usage(run: Run, lookups: UsageLookups): Promise<RunUsage> {
    // Only a throughput is divided by GPUs: other runs need no endpoint lookup.
    const gpus = tokensPerSecondOf(run) !== null && run.modelId ? await lookups.gpus(run.modelId) : null;
    return usageOf(run, await lookups.latency(run.id), gpus);
  }

  private async runProgressEvent(run: Run): Promise<RunProgressEvent> {
    const progress = await this.progress(run, (id) => this.runs.recentPredictions(id, RECENT_WINDOW_SECONDS));
    return { run, status: run.status, progress, lastError: await this.runs.lastError(run.id) };
  }

  /** A run's state now and after every change, until the run is over; NOT_FOUND unless the principal may read it. */
  async runFeed(principal: Principal, runId: string): Promise<RunFeed<RunProgressEvent>> {
    await this.runs.get(principal, runId);
    const load = async (_events: RunFeedEvent[], end: () => void): Promise<RunProgressEvent[]> => {
      const run = await this.runs.get(principal, runId);
      if (TERMINAL_RUN_STATUSES.has(run.status)) end();
      return [await this.runProgressEvent(run)];
    };
    return {
      wakesOn: (e) => e.kind === 'run' && e.runId === runId,
      initial: (end) => load([], end),
      load,
      refreshMs: FEED_REFRESH_MS,
      key: (e) => JSON.stringify([e.status, e.progress.succeeded, e.progress.failed, e.progress.total, e.lastError]),
    };
  }

  /** A run's predictions as they are committed, until the run is over (at once for a run that is). */
  async predictionFeed(principal: Principal, runId: string): Promise<RunFeed<Prediction>> {
    const run = await this.runs.get(principal, runId);
    if (TERMINAL_RUN_STATUSES.has(run.status)) {
      return { wakesOn: () => false, initial: async (end) => (end(), []), load: async () => [], refreshMs: 0 };
    }
    return {
      wakesOn: (e) => (e.kind === 'predictions' || e.kind === 'run') && e.runId === runId,
      initial: async () => [],
      load: async (events, end) => {
        // The run's status travels with its own events; refreshes check it too (and that it still exists).
        if (events.length === 0 || events.some((e) => e.kind === 'run')) {
          const current = await this.runs.get(principal, runId);
          if (TERMINAL_RUN_STATUSES.has(current.status)) end();
        }
        const ids = events.flatMap((e) => (e.kind === 'predictions' ? e.ids : []));
        return this.runs.predictionsByIds(runId, ids);
      },
      refreshMs: FEED_REFRESH_MS,
    };
  }

  /** An experiment's progress over its runs now and after every change, until every run is over. */
  async experimentFeed(principal: Principal, experimentId: string): Promise<RunFeed<ExperimentProgressEvent>> {
    await this.experiments.experiment(principal, experimentId, Role.VIEWER);
    const load = async (_events: RunFeedEvent[], end: () => void): Promise<ExperimentProgressEvent[]> => {
      const experiment = await this.experiments.experiment(principal, experimentId, Role.VIEWER);
      const progress = await this.runs.experimentProgress(experiment.id);
      if (progress.finished) end();
      return [{ experiment, progress }];
    };
    return {
      wakesOn: (e) => e.kind === 'run' && e.experimentId === experimentId,
      initial: (end) => load([], end),
      load,
      refreshMs: FEED_REFRESH_MS,
      key: (e) => JSON.stringify(e.progress),
    };
  }
}
