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
  note?: string;
}

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

async function loadDemo(services: Services, logger: Logger, dir: string): Promise<Project> {
  const { project } = await services.projects.create(SEED_PRINCIPAL, { name: 'Demo (synthetic data)' });
  for (const slug of readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort()) {
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
    const dataset = await services.datasets.create(SEED_PRINCIPAL, useCase.id, {
      useCaseId: useCase.id,
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
    const annotators: [string, string, AnnotatorKind, boolean][] = [
      ['annotations-annotator-a.csv', 'Annotator A', AnnotatorKind.HUMAN, false],
      ['annotations-annotator-b.csv', 'Annotator B', AnnotatorKind.HUMAN, false],
      ['annotations-consensus.csv', 'Consensus', AnnotatorKind.CONSENSUS, true],
    ];
    for (const [file, name, kind, isReference] of annotators) {
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
    const prompt = await services.prompts.create(SEED_PRINCIPAL, useCase.id, {
      useCaseId: useCase.id,
      name: promptFile.name,
      system: promptFile.system ?? null,
      task: promptFile.task ?? null,
      examples: promptFile.examples ?? [],
    });
    const runs = JSON.parse(read(path.join(folder, 'runs', 'runs.json'))) as RunFile[];
    for (const run of runs) {
      await services.runs.importPredictions(SEED_PRINCIPAL, dataset.id, prompt.id, {
        datasetId: dataset.id,
        modelName: run.modelName,
        strategy: run.strategy,
        format: ImportFormat.JSONL,
        layout: PredictionLayout.RAW_OUTPUT,
        content: read(path.join(folder, 'runs', run.file)),
        idField: 'report_id',
        rawField: 'raw_output',
        config: { note: run.note ?? 'synthetic demo run' },
      });
    }
    logger.info({ useCase: spec.name }, 'demo use case loaded');
  }
  return project;
}
