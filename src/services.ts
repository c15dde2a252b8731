import { AuditService } from './modules/audit/audit.service';
import type { DataSource } from 'typeorm';
import { AnnotationService } from './modules/annotation/annotation.service';
import { BackgroundTaskService } from './modules/background-task/background-task.service';
import { ApiKeyService } from './modules/api-key/api-key.service';
import { DatasetService } from './modules/dataset/dataset.service';
import { safePublisher } from './jobs/events';
import { DEFAULT_QUEUE_OPTIONS, JobQueue, poolOf, type QueueOptions } from './jobs/queue';
import { PgEventBus, type EventBusOptions } from './graphql/pubsub';
import { isIP } from 'node:net';
import { defaultEgressPolicy, isThisMachine, normaliseHost, type EgressPolicy } from './llm/egress';
import { createSecretBox, type SecretBox } from './llm/secret-box';
import { BundleService } from './modules/bundle/bundle.service';
import { ChartUrlSigner } from './modules/chart/chart-url';
import { ChartService } from './modules/chart/chart.service';
import { EndpointConnections } from './modules/endpoint/endpoint-connections';
import { EndpointService } from './modules/endpoint/endpoint.service';
import { ExportService } from './modules/export/export.service';
import { ExtractionService } from './modules/extraction/extraction.service';
import { ProjectService } from './modules/project/project.service';
import { PromptService } from './modules/prompt/prompt.service';
import { RunExecutionService } from './modules/run/run-execution.service';
import { RunProgressService } from './modules/run/run-progress.service';
import { RunService } from './modules/run/run.service';
import { createScoringServices, type ScoringServices } from './modules/scoring/scoring-services';
import { defaultStatisticsThreads } from './config';
import { createStatisticsEngine } from './modules/scoring/statistics-threads';
import { UseCaseService } from './modules/use-case/use-case.service';

/** The scoring questions' services (leaderboards, agreement, contrasts, …) sit beside the others. */
export interface Services extends ScoringServices {
  apiKeys: ApiKeyService;
  audit: AuditService;
  projects: ProjectService;
  useCases: UseCaseService;
  datasets: DatasetService;
  annotations: AnnotationService;
  endpoints: EndpointService;
  prompts: PromptService;
  runs: RunService;
  extraction: ExtractionService;
  /** CSV and JSON exports of predictions, scores and leaderboards. */
  exports: ExportService;
  /** Whole projects as one JSON document, and back into a new project. */
  bundles: BundleService;
  /** Vega-Lite specifications of the papers' figures. */
  charts: ChartService;
  /** Signs chart image URLs for an <img> (which sends no Authorization header). */
  chartUrls: ChartUrlSigner;
  execution: RunExecutionService;
  /** Large imports and experiments as background tasks, run by the workers. */
  tasks: BackgroundTaskService;
  /** Counters, ETA and usage of runs and experiments, and the feeds of their subscriptions. */
  runProgress: RunProgressService;
  /** The work-item queue of executed runs. */
  queue: JobQueue;
  /** Cross-process events (LISTEN/NOTIFY): run progress, predictions, cancellation, new work. */
  bus: PgEventBus;
  secretBox: SecretBox;
  /** Where endpoints may point (egress.ts): ENDPOINT_ALLOW when set, else the default policy. Every connection to an endpoint is checked against it. */
  egress: EgressPolicy;
}

export interface ServiceOptions {
  /** Encrypts endpoint API keys at rest. */
  secretKey: string;
  queue?: QueueOptions;
  /** Where failures to publish an event are reported (they never fail the work that publishes). */
  onEventError?: (error: unknown) => void;
  /** ENDPOINT_ALLOW: hosts and addresses endpoints may be registered at and connected to. */
  egress?: EgressPolicy | undefined;
  /** Where failures to store a run's cell columns after a read are reported (the next read groups them again). */
  onColumnStoreError?: (error: unknown) => void;
  /** ANALYTICS_RUN_CACHE_MB in bytes: budget of the statistics' per-run item-score cache. */
  analyticsRunCacheBytes?: number | undefined;
  /** ANALYTICS_THREADS: worker threads of the statistics (0: on the calling thread); default one per core, at most 4. */
  analyticsThreads?: number | undefined;
  /** Reconnection of the event connection, and how long subscriptions wait for a database that went away. */
  events?: EventBusOptions;
}

export function createServices(dataSource: DataSource, options: ServiceOptions): Services {
  const apiKeys = new ApiKeyService(dataSource);
  const useCases = new UseCaseService(dataSource);
  const secretBox = createSecretBox(options.secretKey);
  const egress = options.egress ?? defaultEgressPolicy();
  const databasePort = localDatabasePort(dataSource);
  if (databasePort !== null) egress.protectPort(databasePort);
  const endpoints = new EndpointService(dataSource, new EndpointConnections(secretBox, egress));
  const onEventError = options.onEventError ?? (() => undefined);
  const bus = new PgEventBus(poolOf(dataSource), { connectionString: (dataSource.options as { url?: string }).url }, onEventError, options.events);
  const queue = new JobQueue(dataSource, options.queue ?? DEFAULT_QUEUE_OPTIONS);
  const datasets = new DatasetService(dataSource);
  const extraction = new ExtractionService(dataSource, endpoints, useCases);
  const scoring = createScoringServices(dataSource, (modelId, principal) => endpoints.embedder(principal, modelId), {
    ...(options.analyticsRunCacheBytes !== undefined ? { runCacheBytes: options.analyticsRunCacheBytes } : {}),
    statistics: createStatisticsEngine(options.analyticsThreads ?? defaultStatisticsThreads()),
    ...(options.onColumnStoreError ? { onStoreError: options.onColumnStoreError } : {}),
  });
  const runs = new RunService(dataSource, datasets);
  const execution = new RunExecutionService(dataSource, datasets, extraction, queue, safePublisher(bus, onEventError));
  return {
    apiKeys,
    audit: new AuditService(dataSource),
    projects: new ProjectService(dataSource, apiKeys),
    useCases,
    datasets,
    annotations: new AnnotationService(dataSource, datasets),
    endpoints,
    prompts: new PromptService(dataSource, useCases),
    runs,
    ...scoring,
    extraction,
    exports: new ExportService(dataSource, runs, useCases, datasets, scoring),
    bundles: new BundleService(dataSource, apiKeys, egress),
    charts: new ChartService(dataSource, useCases, datasets, scoring),
    chartUrls: new ChartUrlSigner(options.secretKey),
    execution,
    tasks: new BackgroundTaskService(dataSource, datasets, execution, bus),
    runProgress: new RunProgressService(runs, execution),
    queue,
    bus,
    secretBox,
    egress,
  };
}

/** The database's port when it runs on this machine (the embedded one always does), else null. */
function localDatabasePort(dataSource: DataSource): number | null {
  const url = (dataSource.options as { url?: string }).url;
  if (!url) return null;
  try {
    const parsed = new URL(url);
    const host = normaliseHost(parsed.hostname);
    const local = host === '' || host === 'localhost' || (isIP(host) !== 0 && isThisMachine(host));
    return local ? (parsed.port ? Number(parsed.port) : 5432) : null;
  } catch {
    return null;
  }
}
