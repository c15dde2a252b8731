import type { DataSource } from 'typeorm';
import { exportFrameworkPromptYaml, importFrameworkConfig, type FrameworkModelConfig } from '../../extraction/config-yaml';
import { ExtractionError } from '../../extraction/errors';
import { runStrategy } from '../../extraction/strategies';
import type { ExtractionVariable, PromptExample as EnginePromptExample, PromptParts, SamplingParams as EngineSampling } from '../../extraction/types';
import { badInput, notFound } from '../../graphql/errors';
import { LlmError } from '../../llm/llm-error';
import { Role } from '../api-key/api-key.entity';
import { requireRole, type Principal } from '../api-key/principal';
import { InvalidCategory } from '../annotation/annotation.entity';
import type { EndpointService } from '../endpoint/endpoint.service';
import type { SamplingParams } from '../endpoint/model.entity';
import { Prompt } from '../prompt/prompt.entity';
import { PredictionStatus, type PredictedField } from '../run/prediction.entity';
import type { VariableInput } from '../use-case/use-case.input';
import { UseCase } from '../use-case/use-case.entity';
import type { UseCaseService } from '../use-case/use-case.service';
import { toSpec } from '../use-case/variable-spec';
import { Variable, VariableType, type VariableExtractionMeta } from '../use-case/variable.entity';
import type { ExtractInput, ExtractPayload, ImportUseCaseConfigInput } from './extraction.input';

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

function definedSampling(sampling: SamplingParams | null | undefined): EngineSampling & { seed?: number } {
  const out: Record<string, number> = {};
  for (const [key, value] of Object.entries(sampling ?? {})) if (typeof value === 'number') out[key] = value;
  return out;
}

/** Self-consistency samples per request: each is a model call. */
export const MAX_SAMPLES = 20;
const MAX_EXAMPLES = 20;

export class ExtractionService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly endpoints: EndpointService,
    private readonly useCases: UseCaseService,
  ) {}

  /** Synchronous extraction of one text; transport failures come back as data (status FAILED). */
  async extract(principal: Principal, useCaseId: string, modelId: string, promptId: string | null, input: ExtractInput): Promise<ExtractPayload> {
    const useCase = await this.useCases.get(principal, useCaseId, Role.EDITOR);
    const model = await this.endpoints.getModel(principal, modelId);
    if (model.projectId !== useCase.projectId) throw notFound('Model');
    if (!model.endpointId) throw badInput('This model has no endpoint (it is known only from imported runs)', { field: 'modelId' });
    const endpoint = await this.endpoints.getEndpoint(principal, model.endpointId);
    if (!input.text.trim()) throw badInput('text must not be empty', { field: 'text' });
    const bounded = (field: string, value: number | null | undefined, max: number) => {
      if (value !== null && value !== undefined && (!Number.isInteger(value) || value < 1 || value > max)) {
        throw badInput(`${field} must be an integer from 1 to ${max}`, { field });
      }
    };
    bounded('samples', input.samples, MAX_SAMPLES);
    bounded('temperatures', input.temperatures?.length, MAX_SAMPLES);
    bounded('exampleCount', input.exampleCount, MAX_EXAMPLES);
    bounded('contextLimitTokens', input.contextLimitTokens, 10_000_000);
    bounded('stepTimeoutMs', input.stepTimeoutMs, 3_600_000);
    const variables = await this.dataSource.getRepository(Variable).find({ where: { useCaseId: useCase.id }, order: { order: 'ASC' } });
    const prompt = await this.promptFor(useCase, promptId);
    // The prompt's imported model config (MedicalRecordLLM model YAML) is the experiment's
    // setting: it refines the model's defaults; what the request says wins over both.
    const modelConfig = (prompt?.settings['modelConfig'] ?? null) as FrameworkModelConfig | null;
    const sampling = {
      ...definedSampling(model.defaultSampling),
      ...definedSampling(modelConfig?.sampling as SamplingParams | undefined),
      ...definedSampling(input.sampling),
    };
    const { seed, ...decoding } = sampling;
    const systemMessagesAllowed = input.systemMessagesAllowed ?? modelConfig?.systemMessagesAllowed ?? undefined;
    const mergeConsecutiveMessages = input.mergeConsecutiveMessages ?? modelConfig?.mergeConsecutiveMessages ?? undefined;
    const temperatures = input.temperatures ?? (input.samples ? null : (modelConfig?.selfConsistency?.temperatures ?? null));
    const ctx = {
      chat: this.endpoints.connections.chat(endpoint),
      model: model.servedName,
      variables: variables.map((v) => toExtractionVariable(v, useCase)),
      parts: partsOf(prompt),
      examples: examplesInVariableOrder(prompt, variables),
      exampleSelection: {
        ...(input.exampleNames ? { names: input.exampleNames } : {}),
        ...(input.exampleCount ? { count: input.exampleCount } : {}),
      },
      report: { id: input.reportId, text: input.text },
      sampling: decoding,
      seed: seed ?? null,
      constrained: input.constrained,
      ...(input.thinking !== undefined && input.thinking !== null ? { thinking: input.thinking } : {}),
      guided: input.guided,
      ...(systemMessagesAllowed !== undefined ? { systemMessagesAllowed } : {}),
      ...(mergeConsecutiveMessages !== undefined ? { mergeConsecutiveMessages } : {}),
      contextLimit: input.contextLimitTokens ? { maxTokens: input.contextLimitTokens } : null,
      missingTokens: useCase.customMissingTokens,
      selfConsistency: {
        ...(input.samples ? { samples: input.samples } : {}),
        ...(temperatures ? { temperatures } : {}),
      },
      graph: input.stepTimeoutMs ? { stepTimeoutMs: input.stepTimeoutMs } : null,
    };
    try {
      const result = await runStrategy(input.strategy, ctx);
      const fields: PredictedField[] = variables.map((v) => {
        const cell = result.cells[v.key];
        return {
          key: v.key,
          value: cell?.status === 'VALUE' ? cell.value : null,
          valid: cell !== undefined && cell.status !== 'INVALID',
          missing: cell?.status === 'MISSING',
          invalidCategory: !cell ? InvalidCategory.MISSING : cell.status === 'INVALID' ? (cell.category as InvalidCategory) : null,
          skipped: result.skipped.includes(v.key),
        };
      });
      const list = (x: string | string[] | null) => (x === null ? [] : Array.isArray(x) ? x : [x]);
      return {
        status: PredictionStatus.SUCCEEDED,
        error: null,
        values: result.values,
        fields,
        json: result.json,
        raw: list(result.raw),
        reasoning: list(result.reasoning).filter((r) => r !== null && r !== ''),
        parseError: result.parseError,
        finishReason: result.finishReason,
        truncated: result.truncated,
        inputTruncated: result.inputTruncated,
        latencyMs: Math.round(result.latencyMs),
        promptTokens: result.promptTokens,
        completionTokens: result.completionTokens,
        attempts: result.attempts,
        calls: result.calls,
        samples: result.samples ?? null,
        steps: result.steps ?? null,
        skipped: result.skipped,
      };
    } catch (error) {
      if (error instanceof ExtractionError && error.code !== 'ALL_CALLS_FAILED') throw badInput(error.message, { reason: error.code });
      const cause = error instanceof ExtractionError ? (error.cause ?? error) : error;
      if (!(cause instanceof LlmError) && !(error instanceof ExtractionError)) throw error;
      return {
        status: PredictionStatus.FAILED,
        error: cause instanceof Error ? cause.message : String(cause),
        values: {},
        fields: [],
        json: null,
        raw: [],
        reasoning: [],
        parseError: null,
        finishReason: null,
        truncated: false,
        inputTruncated: false,
        latencyMs: 0,
        promptTokens: null,
        completionTokens: null,
        attempts: cause instanceof LlmError ? cause.attempts : 1,
        calls: 0,
        samples: null,
        steps: null,
        skipped: [],
      };
    }
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
      if (error instanceof ExtractionError) throw badInput(error.message, { reason: error.code });
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
