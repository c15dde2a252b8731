import { createHash } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { exportFrameworkPromptYaml, importFrameworkConfig, type FrameworkModelConfig } from '../../extraction/config-yaml';
import { ExtractionError } from '../../extraction/errors';
import { buildRunSnapshot, strategyContext, type RunSnapshot, type SnapshotSource } from '../../extraction/run-snapshot';
import { runStrategy } from '../../extraction/strategies';
import { ExecutorAbort } from '../../jobs/failure';
import { predictionOutcome, type PredictionOutcome } from '../../jobs/prediction-outcome';
import { insertPredictions, type PredictionRow, type RowKey } from '../../jobs/prediction-writer';
import { finishedRunStatusSql } from '../../jobs/run-status';
import { decodeId } from '../../domain/global-id';
import { Dataset } from '../dataset/dataset.entity';
import { containsNul, nameProblem } from '../imports/text-checks';
import { PromptStrategy, Run, RunSource, RunStatus } from '../run/run.entity';
import type { ExtractionVariable, PromptExample as EnginePromptExample, PromptParts } from '../../extraction/types';
import { badInput, conflict, fromExtractionError, notFound } from '../../domain/errors';
import { LlmError } from '../../llm/llm-error';
import { Role } from '../api-key/api-key.entity';
import { canSee, requireRole, type Principal } from '../api-key/principal';
import type { EndpointService } from '../endpoint/endpoint.service';
import type { Endpoint } from '../endpoint/endpoint.entity';
import type { Model } from '../endpoint/model.entity';
import { Prompt } from '../prompt/prompt.entity';
import { predictedFields } from '../run/predicted-fields';
import { Prediction, PredictionStatus, type StoredCell } from '../run/prediction.entity';
import type { VariableInput } from '../use-case/use-case.input';
import { UseCase } from '../use-case/use-case.entity';
import type { UseCaseService } from '../use-case/use-case.service';
import { toSpec } from '../use-case/variable-spec';
import { Variable, VariableType, type VariableExtractionMeta } from '../use-case/variable.entity';
import type { ExtractInput, ExtractPayload, ExtractStoreInput, ImportUseCaseConfigInput, StrategySettingsInput } from './extraction.input';

/** The engine's view of a stored variable. */
export function toExtractionVariable(variable: Variable, useCase: UseCase): ExtractionVariable {
  const meta = variable.extraction ?? {};
  return {
    ...toSpec(variable, useCase),
    description: variable.description,
    instructions: variable.instructions,
    ...(variable.default !== null && variable.default !== undefined ? { default: variable.default } : {}),
    order: variable.order,
    graphStep: variable.graphStep,
    dependsOn: variable.dependsOn,
    frameworkType: meta.frameworkType ?? null,
    structure: (meta.structure as ExtractionVariable['structure']) ?? null,
    ...(meta.templateValue !== undefined ? { templateValue: meta.templateValue } : {}),
    frameworkExtra: meta.frameworkExtra ?? null,
  };
}

function partsOf(prompt: Prompt | null): PromptParts {
  if (!prompt) return {};
  const extra = (prompt.settings['parts'] ?? {}) as PromptParts;
  return {
    ...extra,
    system: prompt.system,
    fieldInstructions: prompt.fieldInstructions,
    task: prompt.task,
    exampleIntro: prompt.exampleIntro,
    final: prompt.final,
  };
}

/**
 * Prompt examples with their output keys in variable order: stored as jsonb, objects lose their
 * key order, and the examples must show the model the same order as the JSON template.
 */
function examplesInVariableOrder(prompt: Prompt | null, variables: Variable[]): EnginePromptExample[] {
  const rank = new Map(variables.map((v, i) => [v.key, i]));
  return (prompt?.examples ?? []).map((example) => ({
    ...example,
    output: Object.fromEntries(
      Object.entries(example.output).sort(([a], [b]) => (rank.get(a) ?? Number.MAX_SAFE_INTEGER) - (rank.get(b) ?? Number.MAX_SAFE_INTEGER)),
    ),
  })) as EnginePromptExample[];
}

/** What the run or the extract call is made of, resolved and checked. */
export interface ExtractionTarget {
  useCase: UseCase;
  model: Model;
  endpoint: Endpoint;
  prompt: Prompt | null;
  variables: Variable[];
}

/** The row of an extract call before it has a run and a report: storePrediction gives it those. */
const UNSTORED: RowKey = { projectId: '', runId: '', reportId: '' };

/** What an extract call answers for a report's outcome (the stored prediction and warnings aside). */
function extractAnswer(outcome: PredictionOutcome, variables: readonly Variable[]): Omit<ExtractPayload, 'prediction' | 'warnings'> {
  if (outcome.status === 'FAILED') {
    return {
      status: PredictionStatus.FAILED,
      error: outcome.failure.message,
      errorCode: outcome.failure.code,
      values: {},
      fields: [],
      json: null,
      raw: [],
      reasoning: [],
      parseError: null,
      finishReason: null,
      truncated: false,
      inputTruncated: false,
      latencyMs: outcome.latencyMs,
      promptTokens: null,
      completionTokens: null,
      attempts: outcome.failure.attempts,
      calls: 0,
      samples: null,
      steps: null,
      skipped: [],
    };
  }
  const { result } = outcome;
  const list = (x: string | string[] | null) => (x === null ? [] : Array.isArray(x) ? x : [x]);
  return {
    status: PredictionStatus.SUCCEEDED,
    error: null,
    errorCode: null,
    values: result.values,
    // The stored cells, skipped ones marked: the fields read as the stored prediction's do.
    fields: predictedFields(variables.map((v) => v.key), outcome.row.cells as Record<string, StoredCell>, outcome.row.evidence),
    json: result.json,
    raw: list(result.raw),
    reasoning: list(result.reasoning).filter((r) => r !== null && r !== ''),
    parseError: result.parseError,
    finishReason: result.finishReason,
    truncated: result.truncated,
    inputTruncated: result.inputTruncated,
    latencyMs: outcome.latencyMs,
    promptTokens: result.promptTokens,
    completionTokens: result.completionTokens,
    attempts: result.attempts,
    calls: result.calls,
    samples: result.samples ?? null,
    steps: result.steps ?? null,
    skipped: result.skipped,
  };
}

export class ExtractionService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly endpoints: EndpointService,
    private readonly useCases: UseCaseService,
  ) {}

  /** The use case, model (with its endpoint), prompt and variables of an extraction, with EDITOR access. */
  async target(principal: Principal, useCaseId: string, modelId: string, promptId: string | null): Promise<ExtractionTarget> {
    const useCase = await this.useCases.get(principal, useCaseId, Role.EDITOR);
    const model = await this.endpoints.getModel(principal, modelId);
    if (model.projectId !== useCase.projectId) throw notFound('Model');
    if (!model.endpointId) throw badInput('This model has no endpoint (it is known only from imported runs)', { field: 'modelId' });
    const endpoint = await this.endpoints.getEndpoint(principal, model.endpointId);
    const variables = await this.dataSource.getRepository(Variable).find({ where: { useCaseId: useCase.id }, order: { order: 'ASC' } });
    const prompt = await this.promptFor(useCase, promptId);
    return { useCase, model, endpoint, prompt, variables };
  }

  /**
   * The immutable configuration of a run (or of one extract call) from the target as stored now
   * (see buildRunSnapshot).
   * @throws DomainException BAD_USER_INPUT on settings out of range or examples that do not exist.
   */
  snapshot(target: ExtractionTarget, settings: StrategySettingsInput): { snapshot: RunSnapshot; warnings: string[] } {
    const { useCase, model, endpoint, prompt, variables } = target;
    const source: SnapshotSource = {
      model: { id: model.id, servedName: model.servedName, maxModelLen: model.maxModelLen, defaultSampling: model.defaultSampling },
      endpoint: { id: endpoint.id, kind: endpoint.kind, timeoutMs: endpoint.timeoutMs, capabilities: endpoint.capabilities as SnapshotSource['endpoint']['capabilities'] },
      prompt: prompt
        ? {
            id: prompt.id,
            version: prompt.version,
            parts: partsOf(prompt),
            examples: examplesInVariableOrder(prompt, variables),
            modelConfig: (prompt.settings['modelConfig'] ?? null) as FrameworkModelConfig | null,
          }
        : null,
      variables: variables.map((v) => toExtractionVariable(v, useCase)),
      missingTokens: useCase.customMissingTokens,
    };
    try {
      return buildRunSnapshot(source, settings);
    } catch (error) {
      if (!(error instanceof ExtractionError)) throw error;
      // A setting out of range names its field; examples that do not exist say why too.
      throw fromExtractionError(error);
    }
  }

  /**
   * Synchronous extraction of one text; endpoint failures come back as data (status FAILED with
   * an errorCode). The call ends at its deadline, and when the client goes away (`signal`).
   */
  async extract(principal: Principal, useCaseId: string, modelId: string, promptId: string | null, input: ExtractInput, signal?: AbortSignal): Promise<ExtractPayload> {
    const target = await this.target(principal, useCaseId, modelId, promptId);
    if (!input.text.trim()) throw badInput('text must not be empty', { field: 'text' });
    const store = input.store ? await this.storeTarget(principal, target, input.store, input.reportId, input.text) : null;
    const { snapshot, warnings } = this.snapshot(target, { ...input, contextLimitTokens: input.contextLimitTokens ?? null });
    const apiKey = this.endpoints.connections.apiKeyOf(target.endpoint);
    const started = performance.now();
    const deadline = AbortSignal.timeout(snapshot.deadlineMs);
    const abort = signal ? AbortSignal.any([deadline, signal]) : deadline;
    const outcomeSettings = { deadlineMs: snapshot.deadlineMs, secrets: [apiKey], reportText: input.text };
    let outcome: PredictionOutcome;
    try {
      const result = await runStrategy(input.strategy, strategyContext(snapshot, this.endpoints.connections.chat(target.endpoint), { id: input.reportId, text: input.text }, abort));
      // Refused whether or not it is stored: the answer is the same either way.
      outcome = predictionOutcome(UNSTORED, { result }, outcomeSettings);
    } catch (error) {
      if (error instanceof ExtractionError && error.code !== 'ALL_CALLS_FAILED') throw fromExtractionError(error);
      const reason = deadline.aborted ? new ExecutorAbort('DEADLINE') : error;
      const cause = reason instanceof ExtractionError ? (reason.cause ?? reason) : reason;
      if (!(cause instanceof LlmError) && !(cause instanceof ExtractionError) && !(cause instanceof ExecutorAbort)) throw error;
      outcome = predictionOutcome(UNSTORED, { error: cause, latencyMs: Math.round(performance.now() - started) }, outcomeSettings);
    }
    const prediction = store ? await this.storePrediction(target, snapshot, warnings, store, outcome.row) : null;
    return { prediction, warnings, ...extractAnswer(outcome, target.variables) };
  }

  /** The dataset an extract call stores into, checked before the endpoint is called. */
  private async storeTarget(principal: Principal, target: ExtractionTarget, store: ExtractStoreInput, reportId: string, text: string) {
    const datasetId = decodeId(store.datasetId, 'Dataset', 'store.datasetId');
    const dataset = await this.dataSource.getRepository(Dataset).findOneBy({ id: datasetId });
    if (!dataset || !canSee(principal, dataset.projectId)) throw notFound('Dataset');
    if (dataset.useCaseId !== target.useCase.id) throw badInput('The dataset belongs to another use case', { field: 'store.datasetId' });
    const given = store.externalId ?? reportId;
    const externalId = given.trim();
    if (!externalId || nameProblem(given, 512) !== null || containsNul(externalId)) {
      throw badInput('store.externalId must be 1 to 512 characters without NUL or byte-order mark', { field: 'store.externalId' });
    }
    if (containsNul(text)) throw badInput('text contains a NUL character', { field: 'text' });
    return { dataset, externalId, text };
  }

  /**
   * One transaction: the report (added, or found with the same text), the dataset's run of these
   * settings (found by a fingerprint of the snapshot, or created), and the prediction with the
   * run's counters. A report that already has a prediction in that run is a CONFLICT.
   */
  private async storePrediction(
    target: ExtractionTarget,
    snapshot: RunSnapshot,
    warnings: string[],
    store: { dataset: Dataset; externalId: string; text: string },
    row: PredictionRow,
  ): Promise<Prediction> {
    const { dataset, externalId, text } = store;
    const fingerprint = createHash('sha256').update(JSON.stringify(snapshot)).digest('hex');
    return this.dataSource.transaction(async (manager) => {
      await manager.query('SELECT id FROM datasets WHERE id = $1 FOR UPDATE', [dataset.id]);
      const [existing] = (await manager.query('SELECT id, text FROM reports WHERE dataset_id = $1 AND external_id = $2', [dataset.id, externalId])) as { id: string; text: string }[];
      if (existing && existing.text !== text) throw conflict(`The dataset has a report "${externalId.slice(0, 80)}" with another text`, { field: 'store.externalId' });
      const reportId =
        existing?.id ??
        ((await manager.query(
          `INSERT INTO reports (project_id, dataset_id, ordinal, external_id, text, metadata)
           SELECT $1, $2, coalesce(max(ordinal) + 1, 0), $3, $4, '{}'::jsonb FROM reports WHERE dataset_id = $2 RETURNING id`,
          [dataset.projectId, dataset.id, externalId, text],
        )) as { id: string }[])[0]!.id;
      const runs = manager.getRepository(Run);
      let run = await runs
        .createQueryBuilder('r')
        .setLock('pessimistic_write')
        .where("r.dataset_id = :d AND r.source = 'EXECUTED' AND r.config->>'extractFingerprint' = :f", { d: dataset.id, f: fingerprint })
        .getOne();
      if (!run) {
        const now = new Date();
        run = await runs.save(
          runs.create({
            projectId: dataset.projectId,
            useCaseId: dataset.useCaseId,
            datasetId: dataset.id,
            modelId: target.model.id,
            promptId: target.prompt?.id ?? null,
            experimentId: null,
            name: `${target.model.servedName} · ${snapshot.strategy} (extract calls)`,
            strategy: snapshot.strategy as PromptStrategy,
            config: { ...snapshot, extractFingerprint: fingerprint },
            status: RunStatus.SUCCEEDED,
            source: RunSource.EXECUTED,
            totalReports: 0,
            startedAt: now,
            finishedAt: now,
            error: null,
            warnings,
          }),
        );
      }
      const inserted = await insertPredictions((sql, params) => manager.query(sql, params), [{ ...row, projectId: dataset.projectId, runId: run.id, reportId }]);
      if (inserted.length === 0) throw conflict(`Report "${externalId.slice(0, 80)}" already has a prediction of these settings`, { field: 'store.externalId' });
      await manager.query(
        `UPDATE runs SET total_reports = total_reports + 1, finished_at = now(),
           status = ${finishedRunStatusSql('succeeded_count', 'failed_count')}
         WHERE id = $1`,
        [run.id],
      );
      return manager.getRepository(Prediction).findOneByOrFail({ id: inserted[0]!.id });
    });
  }

  private async promptFor(useCase: UseCase, promptId: string | null): Promise<Prompt | null> {
    const repo = this.dataSource.getRepository(Prompt);
    if (promptId) {
      const prompt = await repo.findOneBy({ id: promptId });
      if (!prompt || prompt.useCaseId !== useCase.id) throw notFound('Prompt');
      return prompt;
    }
    return repo.findOne({ where: { useCaseId: useCase.id }, order: { createdAt: 'DESC', version: 'DESC' } });
  }

  /** A framework prompt YAML (+ model YAML) becomes a use case with its variables and a prompt, in one transaction. */
  async importConfig(principal: Principal, projectId: string, input: ImportUseCaseConfigInput) {
    requireRole(principal, projectId, Role.EDITOR, 'Project');
    let imported: ReturnType<typeof importFrameworkConfig>;
    try {
      imported = importFrameworkConfig(input.promptYaml, input.modelYaml ?? null);
    } catch (error) {
      if (error instanceof ExtractionError) throw fromExtractionError(error, 'promptYaml');
      throw error;
    }
    const variables: VariableInput[] = imported.variables.map((v) => ({
      key: v.key,
      type: v.type as VariableType,
      description: v.description ?? null,
      instructions: v.instructions ?? null,
      options: v.options ? [...v.options] : null,
      aliases: v.aliases ?? null,
      collapseMap: v.collapseMap ?? null,
      default: v.default === undefined ? null : v.default,
      missingTokens: v.missingTokens ? [...v.missingTokens] : null,
      tolerance: v.tolerance ?? null,
      weight: v.weight ?? null,
      graphStep: v.graphStep ?? null,
      dependsOn: v.dependsOn ? { key: v.dependsOn.key, values: [...v.dependsOn.values] } : null,
    }));
    const extraction: Record<string, VariableExtractionMeta> = Object.fromEntries(
      imported.variables.map((v) => [
        v.key,
        {
          frameworkType: v.frameworkType ?? null,
          structure: v.structure ?? null,
          ...(v.templateValue !== undefined ? { templateValue: v.templateValue } : {}),
          frameworkExtra: v.frameworkExtra ?? null,
        },
      ]),
    );
    let prompt: Prompt | undefined;
    const modelConfig = imported.model;
    const useCase = await this.useCases.create(
      principal,
      projectId,
      {
        projectId,
        name: input.name,
        description: input.description ?? null,
        language: input.language ?? null,
        reportType: imported.reportType,
        tags: [],
        missingTokens: null,
        variables,
      },
      {
        extraction,
        within: async (manager, created) => {
          const repo = manager.getRepository(Prompt);
          const { system, fieldInstructions, task, exampleIntro, final, ...rest } = imported.prompt.parts;
          prompt = await repo.save(
            repo.create({
              projectId,
              useCaseId: created.id,
              name: `${input.name} (imported)`,
              version: 1,
              system: system ?? null,
              fieldInstructions: fieldInstructions ?? null,
              task: task ?? null,
              exampleIntro: exampleIntro ?? null,
              final: final ?? null,
              examples: imported.prompt.examples.map((e) => ({ name: e.name ?? null, input: e.input, reasoning: e.reasoning ?? null, output: e.output })),
              settings: { source: input.format, parts: rest, ...(modelConfig ? { modelConfig } : {}) },
            }),
          );
        },
      },
    );
    return { useCase, prompt: prompt!, modelConfig, warnings: imported.warnings };
  }

  /** The use case as the framework's prompt YAML: variables, and the newest prompt's parts and examples. */
  async exportConfig(principal: Principal, useCase: UseCase): Promise<string> {
    requireRole(principal, useCase.projectId, Role.VIEWER, 'Use case');
    const variables = await this.dataSource.getRepository(Variable).find({ where: { useCaseId: useCase.id }, order: { order: 'ASC' } });
    const prompt = await this.promptFor(useCase, null);
    return exportFrameworkPromptYaml({
      variables: variables.map((v) => toExtractionVariable(v, useCase)),
      parts: partsOf(prompt),
      examples: examplesInVariableOrder(prompt, variables),
      reportType: useCase.reportType,
    });
  }
}
