/** Fixtures of executed runs: a use case whose reports carry their own answers, an endpoint, a worker. */
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { DEFAULT_EXECUTOR_OPTIONS, RunExecutor, type ExecutorOptions } from '../../src/jobs/executor';
import type { RunEventPublisher } from '../../src/jobs/events';
import type { FakeChatBody, FakeResponseSpec } from './fake-llm/fake-llm-server';
import { createDataset, createUseCase, ENDPOINT_API_KEY, importReports, jsonl, ok, rowId } from './graphql-fixtures';
import { testLogger } from './test-log';
import type { TestApp } from './test-app';

export const RUN_VARIABLES = [
  { key: 'diagnosis', type: 'CATEGORICAL', options: ['melanoma', 'naevus', 'carcinoma', 'Not specified'] },
  { key: 'breslow_mm', type: 'NUMERIC', tolerance: 0.05 },
];

/** The answer a report asks for: its text says `ANSWER: {...}` (the fake's answer-from-report convention). */
export function answerOf(text: string): string | null {
  const line = text.split('\n').find((l) => l.includes('ANSWER:'));
  return line ? line.slice(line.indexOf('ANSWER:') + 'ANSWER:'.length).trim() : null;
}

/** The user message that carries the report (the prompt's last section is the final instruction). */
export function lastUserText(body: FakeChatBody): string {
  const messages = (body.messages ?? []) as { role: string; content: string }[];
  const users = [...messages].reverse().filter((m) => m.role === 'user');
  return (users.find((m) => m.content.includes('ANSWER:')) ?? users[0])?.content ?? '';
}

/** A handler answering each request with the answer its report asks for (or a control line's failure). */
export function answerFromReport(extra?: (text: string) => FakeResponseSpec | undefined) {
  return (body: FakeChatBody): FakeResponseSpec => {
    const text = lastUserText(body);
    const special = extra?.(text);
    if (special) return special;
    return { content: answerOf(text) ?? '{}', usage: { promptTokens: 100, completionTokens: 10 } };
  };
}

export function reportText(i: number): string {
  const diagnosis = ['melanoma', 'naevus', 'carcinoma'][i % 3]!;
  const breslow = Math.round((0.1 + i * 0.1) * 10) / 10;
  return `Report ${i}: excision of skin lesion ${i}.\nANSWER: ${JSON.stringify({ diagnosis, breslow_mm: breslow })}`;
}

export function expectedValues(i: number): { diagnosis: string; breslow_mm: number } {
  return { diagnosis: ['melanoma', 'naevus', 'carcinoma'][i % 3]!, breslow_mm: Math.round((0.1 + i * 0.1) * 10) / 10 };
}

export interface RunSetup {
  projectId: string;
  useCaseId: string;
  datasetId: string;
  endpointId: string;
  modelId: string;
}

export async function setUpRuns(t: TestApp, baseUrl: string, opts: { reports: number; maxConcurrency?: number; timeoutMs?: number; texts?: (i: number) => string; model?: string }): Promise<RunSetup> {
  const projectId = ok(await t.gql('mutation { createProject(input: { name: "runs" }) { project { id } } }')).createProject.project.id as string;
  const useCase = await createUseCase(t, projectId, { variables: RUN_VARIABLES });
  const datasetId = await createDataset(t, useCase.id);
  const texts = opts.texts ?? reportText;
  await importReports(t, datasetId, jsonl(Array.from({ length: opts.reports }, (_, i) => ({ id: `R${String(i).padStart(4, '0')}`, text: texts(i) }))));
  const registered = ok(
    await t.gql(
      `mutation($i: RegisterEndpointInput!) { registerEndpoint(input: $i) { endpoint { id } models { id servedName } } }`,
      { i: { projectId, name: 'fake vLLM', baseUrl, kind: 'VLLM', apiKey: ENDPOINT_API_KEY, maxConcurrency: opts.maxConcurrency ?? 4, timeoutMs: opts.timeoutMs ?? 5000, gpuCount: 2 } },
    ),
  ).registerEndpoint;
  const model = (registered.models as { id: string; servedName: string }[]).find((m) => m.servedName === (opts.model ?? 'fake-model'))!;
  return { projectId, useCaseId: useCase.id, datasetId, endpointId: registered.endpoint.id, modelId: model.id };
}

export const FAST_EXECUTOR: ExecutorOptions = {
  ...DEFAULT_EXECUTOR_OPTIONS,
  pollMs: 100,
  tickMs: 50,
  telemetryMs: 50,
  retry: { maxRetries: 2, baseDelayMs: 5, maxDelayMs: 20, maxRetryAfterMs: 2000 },
  breaker: { failureThreshold: 1000, cooldownMs: 200, maxCooldownMs: 1000 },
};

export async function startExecutor(t: TestApp, options: Partial<ExecutorOptions> = {}, publisher: RunEventPublisher = t.services.bus): Promise<RunExecutor> {
  const executor = new RunExecutor(t.dataSource, t.services.queue, publisher, t.services.bus, t.services.secretBox, testLogger(), {
    ...FAST_EXECUTOR,
    ...options,
  });
  await executor.start();
  return executor;
}

export const RUN_STATE = /* GraphQL */ `
  query($id: ID!) { node(id: $id) { ... on Run {
    id status warnings config error
    progress { total succeeded failed pending etaMs startedAt finishedAt elapsedMs }
    usage { promptTokens completionTokens meanLatencyMs latencyP50Ms latencyP95Ms secondsPerReport tokensPerSecond tokensPerSecondPerGpu }
    telemetry { samples meanKvCacheUsage meanRunning meanWaiting prefixCacheHitRate endpointGenerationTokensPerSecond tokensPerSecondAtFullCache }
  } } }`;

export async function runState(t: TestApp, runId: string): Promise<Record<string, any>> {
  return ok(await t.gql(RUN_STATE, { id: runId })).node;
}

/** Polls until the run's status is one of `statuses`. */
export async function waitForStatus(t: TestApp, runId: string, statuses: string[], timeoutMs = 30_000): Promise<Record<string, any>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const state = await runState(t, runId);
    if (statuses.includes(state.status)) return state;
    if (Date.now() > until) throw new Error(`run still ${state.status} (${JSON.stringify(state.progress)}) after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Every prediction row of a run, straight from the database. */
export async function predictionRows(t: TestApp, runId: string): Promise<{ report: string; status: string; values: any; error: string | null; error_code: string | null; attempts: number }[]> {
  return (await t.dataSource.query(
    `SELECT r.external_id AS report, p.status, p."values" AS values, p.error, p.error_code, p.attempts
     FROM predictions p JOIN reports r ON r.id = p.report_id WHERE p.run_id = $1 ORDER BY r.ordinal`,
    [rowId(runId)],
  )) as any[];
}

export function wsClient(t: TestApp, key: string = t.adminKey): Client {
  return createClient({ url: `ws://127.0.0.1:${t.port}/graphql`, webSocketImpl: WebSocket, connectionParams: { Authorization: `Bearer ${key}` }, retryAttempts: 0, lazy: true });
}

/** Every value of a subscription until it completes (or fails). */
export function collect<T = any>(client: Client, query: string, variables: Record<string, unknown>): { values: T[]; done: Promise<T[]> } {
  const values: T[] = [];
  const done = new Promise<T[]>((resolve, reject) => {
    client.subscribe(
      { query, variables },
      {
        next: (value) => {
          if (value.errors) reject(Object.assign(new Error(value.errors[0]!.message), { errors: value.errors }));
          else values.push(value.data as T);
        },
        error: (error) => reject(error),
        complete: () => resolve(values),
      },
    );
  });
  return { values, done };
}
