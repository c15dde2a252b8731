import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { DataSource } from 'typeorm';
import type { Logger } from '../logger';
import { AnnotatorKind } from '../modules/annotation/annotator.entity';
import type { Principal } from '../modules/api-key/principal';
import { DuplicatePolicy, ImportFormat } from '../modules/imports/import.types';
import { Project } from '../modules/project/project.entity';
import type { PromptExample } from '../modules/prompt/prompt.entity';
import { PredictionLayout } from '../modules/run/run.input';
import { PromptStrategy } from '../modules/run/run.entity';
import type { UpdateModelInput } from '../modules/endpoint/endpoint.input';
import type { VariableInput } from '../modules/use-case/use-case.input';
import type { Services } from '../services';

const SEED_PRINCIPAL: Principal = { keyId: 'seed', projectId: null, role: null, serverAdmin: true };

/** The repository's seeds/demo folder, found from here in source and compiled layouts alike. */
export function demoSeedDir(): string {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'seeds', 'demo');
    if (existsSync(candidate) && existsSync(path.join(dir, 'package.json'))) return candidate;
  }
  throw new Error('seeds/demo not found');
}

interface UseCaseFile {
  name: string;
  description?: string | null;
  language?: string | null;
  reportType?: string | null;
  tags?: string[];
  missingTokens?: string[] | null;
  variables: VariableInput[];
}

interface RunFile {
  file: string;
  modelName: string;
  strategy: PromptStrategy;
  /** run name; default "<model> · <strategy> (imported)" */
  name?: string;
  note?: string;
  /** the lines carry prompt_tokens, completion_tokens and latency_ms */
  usage?: boolean;
  /** what is known of how the run was made: sampling, thinking, guided (RADS zero-shot: false) */
  config?: Record<string, unknown>;
}

interface AnnotatorFile {
  file: string;
  name: string;
  kind: AnnotatorKind;
  isReference: boolean;
}

/** seeds/demo/models.json: metadata of the demo's models (size class, parameters, …), applied by served name. */
type ModelFile = Omit<UpdateModelInput, 'id'> & { servedName: string };

const DEFAULT_ANNOTATORS: AnnotatorFile[] = [
  { file: 'annotations-annotator-a.csv', name: 'Annotator A', kind: AnnotatorKind.HUMAN, isReference: false },
  { file: 'annotations-annotator-b.csv', name: 'Annotator B', kind: AnnotatorKind.HUMAN, isReference: false },
  { file: 'annotations-consensus.csv', name: 'Consensus', kind: AnnotatorKind.CONSENSUS, isReference: true },
];

const read = (file: string) => readFileSync(file, 'utf8');

/** Advisory lock key of the seed (the migrations use 7423001). */
const SEED_LOCK = 7423002;

/**
 * Loads the demo (seeds/demo/<use case>/…) into an empty database through the same services
 * as the API, so the seed exercises every import path. Returns the demo project, or null when
 * the database already holds projects.
 *
 * Servers starting at the same time against one empty database would both seed: the seed runs
 * under a session advisory lock, and emptiness is checked again once the lock is held.
 */
export async function seedDemo(dataSource: DataSource, services: Services, logger: Logger, dir = demoSeedDir()): Promise<Project | null> {
  const runner = dataSource.createQueryRunner();
  try {
    await runner.connect();
    await runner.query('SELECT pg_advisory_lock($1)', [SEED_LOCK]);
    try {
      if ((await dataSource.getRepository(Project).count()) > 0) return null;
      return await loadDemo(services, logger, dir);
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [SEED_LOCK]);
    }
  } finally {
    await runner.release();
  }
}

/** Use cases loaded at the same time; each import is its own transaction. */
const SEED_CONCURRENCY = 3;

/** The use-case folders in their listing order: seeds/demo/index.json when present, else sorted. */
export function demoFolders(dir: string): string[] {
  const index = path.join(dir, 'index.json');
  if (existsSync(index)) return JSON.parse(read(index)) as string[];
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
}

async function loadDemo(services: Services, logger: Logger, dir: string): Promise<Project> {
  const { project } = await services.projects.create(SEED_PRINCIPAL, { name: 'Demo (synthetic data)' });
  const modelIds = new Map<string, string>();
  // Use cases are created one after the other (lists are ordered by creation), then filled in parallel.
  const created: { folder: string; spec: UseCaseFile; useCaseId: string }[] = [];
  for (const slug of demoFolders(dir)) {
    const folder = path.join(dir, slug);
    const spec = JSON.parse(read(path.join(folder, 'use-case.json'))) as UseCaseFile;
    const useCase = await services.useCases.create(SEED_PRINCIPAL, project.id, {
      projectId: project.id,
      name: spec.name,
      description: spec.description ?? null,
      language: spec.language ?? null,
      reportType: spec.reportType ?? null,
      tags: spec.tags ?? [],
      missingTokens: spec.missingTokens ?? null,
      variables: spec.variables,
    });
    created.push({ folder, spec, useCaseId: useCase.id });
  }
  let next = 0;
  let loaded = 0;
  const worker = async () => {
    while (next < created.length) {
      const item = created[next]!;
      next += 1;
      const started = Date.now();
      await fillUseCase(services, item.folder, item.spec, item.useCaseId, modelIds);
      loaded += 1;
      logger.info({ useCase: item.spec.name, loaded, of: created.length, ms: Date.now() - started }, `demo use case ${loaded} of ${created.length} loaded`);
    }
  };
  await Promise.all(Array.from({ length: SEED_CONCURRENCY }, worker));
  const modelsFile = path.join(dir, 'models.json');
  if (existsSync(modelsFile)) {
    for (const { servedName, ...metadata } of JSON.parse(read(modelsFile)) as ModelFile[]) {
      const id = modelIds.get(servedName);
      if (id) await services.endpoints.updateModel(SEED_PRINCIPAL, id, { id, ...metadata });
    }
  }
  return project;
}

/** Dataset, reports, annotators, prompt and runs of one use case. */
async function fillUseCase(services: Services, folder: string, spec: UseCaseFile, useCaseId: string, modelIds: Map<string, string>): Promise<void> {
  const dataset = await services.datasets.create(SEED_PRINCIPAL, useCaseId, {
    useCaseId,
    name: 'Demo reports',
    language: spec.language ?? null,
    provenance: 'Synthetic reports written for the ReportQL demo; no patient data.',
  });
  await services.datasets.importReports(SEED_PRINCIPAL, dataset.id, {
    datasetId: dataset.id,
    format: ImportFormat.JSONL,
    content: read(path.join(folder, 'reports.jsonl')),
    idField: 'report_id',
    textField: 'text',
    onDuplicate: DuplicatePolicy.REJECT,
  });
  const annotatorsFile = path.join(folder, 'annotators.json');
  const annotators = existsSync(annotatorsFile) ? (JSON.parse(read(annotatorsFile)) as AnnotatorFile[]) : DEFAULT_ANNOTATORS;
  for (const { file, name, kind, isReference } of annotators) {
    await services.annotations.importAnnotations(SEED_PRINCIPAL, dataset.id, {
      datasetId: dataset.id,
      annotatorName: name,
      kind,
      isReference,
      format: ImportFormat.CSV,
      content: read(path.join(folder, file)),
      idField: 'report_id',
    });
  }
  const promptFile = JSON.parse(read(path.join(folder, 'prompt.json'))) as {
    name: string;
    system?: string | null;
    task?: string | null;
    examples?: PromptExample[];
  };
  const prompt = await services.prompts.create(SEED_PRINCIPAL, useCaseId, {
    useCaseId,
    name: promptFile.name,
    system: promptFile.system ?? null,
    task: promptFile.task ?? null,
    examples: promptFile.examples ?? [],
  });
  const runs = JSON.parse(read(path.join(folder, 'runs', 'runs.json'))) as RunFile[];
  for (const run of runs) {
    const { run: imported } = await services.runs.importPredictions(SEED_PRINCIPAL, dataset.id, prompt.id, {
      datasetId: dataset.id,
      modelName: run.modelName,
      ...(run.name ? { name: run.name } : {}),
      strategy: run.strategy,
      format: ImportFormat.JSONL,
      layout: PredictionLayout.RAW_OUTPUT,
      content: read(path.join(folder, 'runs', run.file)),
      idField: 'report_id',
      rawField: 'raw_output',
      ...(run.usage
        ? { reasoningField: 'reasoning', promptTokensField: 'prompt_tokens', completionTokensField: 'completion_tokens', latencyMsField: 'latency_ms' }
        : {}),
      config: { ...(run.config ?? {}), note: run.note ?? 'synthetic demo run' },
    });
    if (imported.modelId) modelIds.set(run.modelName, imported.modelId);
  }
}
