import type { DataSource, EntityManager } from 'typeorm';
import { In } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { normaliseValue } from '../../analytics/normalise';
import type { NormalisedCell, VariableSpec } from '../../analytics/types';
import { MAX_MISSING_TOKENS, MAX_TAGS } from '../../extraction/limits';
import { parseOutput } from '../../extraction/output-parser';
import { paginate, type PageRequest } from '../../db/pagination';
import { lockProject } from '../../db/parents';
import { badInput, conflict, notFound } from '../../domain/errors';
import { Role } from '../api-key/api-key.entity';
import { requireRole, type Principal } from '../api-key/principal';
import { Annotation, ValueStatus, type InvalidCategory } from '../annotation/annotation.entity';
import { Prediction } from '../run/prediction.entity';
import type { CreateUseCaseInput, UpdateUseCaseInput } from './use-case.input';
import { UseCase } from './use-case.entity';
import { validateVariables, type VariableDraft } from './variable-rules';
import { normalisePrediction, toSpec, valuesOf } from './variable-spec';
import { Variable, type VariableExtractionMeta } from './variable.entity';
import { BOM, BOM_REASON } from '../imports/text-checks';

function cleanTags(tags: string[] | null | undefined): string[] {
  return [...new Set((tags ?? []).map((t) => t.trim()).filter(Boolean))];
}

/** Tags and missing tokens of a use case are capped (their lists are priced by these maxima). */
function checkListSizes(input: { tags?: string[] | null; missingTokens?: string[] | null }): void {
  if ((input.tags?.length ?? 0) > MAX_TAGS) throw badInput(`tags: a use case has at most ${MAX_TAGS} tags`, { field: 'tags' });
  // Trimming would take a leading byte-order mark away: the tag would silently differ from what was given.
  if (input.tags?.some((tag) => tag.includes(BOM))) throw badInput(`tags: a tag ${BOM_REASON}`, { field: 'tags' });
  if ((input.missingTokens?.length ?? 0) > MAX_MISSING_TOKENS) {
    throw badInput(`missingTokens: a use case has at most ${MAX_MISSING_TOKENS} missing tokens`, { field: 'missingTokens' });
  }
}

/**
 * A prediction's cells under new variable rules, from what the model gave: the parsed object; a
 * raw output parsed again; or, when only an unreadable object was imported, OUT_OF_FORMAT kept.
 */
function renormalisedCells(specs: VariableSpec[], p: Prediction): Record<string, NormalisedCell> {
  if (p.parsed !== null) return normalisePrediction(specs, p.parsed);
  if (p.raw !== null && p.samples === null) {
    return parseOutput({ content: p.raw, reasoning: p.reasoning, finishReason: p.finishReason }, specs).cells;
  }
  const unreadable = Object.values(p.cells).find((c) => c.status === 'INVALID' && c.category === 'OUT_OF_FORMAT');
  if (unreadable?.status === 'INVALID') {
    const cell: NormalisedCell = { status: 'INVALID', category: 'OUT_OF_FORMAT', ...(unreadable.detail ? { detail: unreadable.detail } : {}) };
    return Object.fromEntries(specs.map((spec) => [spec.key, cell]));
  }
  return normalisePrediction(specs, null);
}

function variableRow(draft: VariableDraft, useCase: Pick<UseCase, 'id' | 'projectId'>): QueryDeepPartialEntity<Variable> {
  return { ...draft, default: draft.default as QueryDeepPartialEntity<unknown>, useCaseId: useCase.id, projectId: useCase.projectId };
}

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string }).code === '23505';
}

export class UseCaseService {
  constructor(private readonly dataSource: DataSource) {}

  async get(principal: Principal, id: string, minimum: Role = Role.VIEWER): Promise<UseCase> {
    const useCase = await this.dataSource.getRepository(UseCase).findOneBy({ id });
    if (!useCase) throw notFound('Use case');
    requireRole(principal, useCase.projectId, minimum, 'Use case');
    return useCase;
  }

  list(projectId: string, args: PageRequest & { search?: string | null }) {
    const query = this.dataSource.getRepository(UseCase).createQueryBuilder('e').where('e.project_id = :projectId', { projectId });
    if (args.search?.trim()) {
      query.andWhere("(e.name ILIKE :search ESCAPE '\\' OR e.description ILIKE :search ESCAPE '\\')", {
        search: `%${args.search.trim().replace(/[\\%_]/g, (c) => `\\${c}`)}%`,
      });
    }
    return paginate(query, args, { column: 'e.created_at', scope: projectId, value: (u) => u.createdAt });
  }

  /**
   * `extra` lets a config import write framework round-trip data and its prompt in the same
   * transaction as the use case.
   */
  async create(
    principal: Principal,
    projectId: string,
    input: CreateUseCaseInput,
    extra?: { extraction?: Record<string, VariableExtractionMeta>; within?: (manager: EntityManager, useCase: UseCase) => Promise<void> },
  ): Promise<UseCase> {
    requireRole(principal, projectId, Role.EDITOR, 'Project');
    const name = input.name.trim();
    if (!name) throw badInput('name must not be empty', { field: 'name' });
    checkListSizes(input);
    const drafts = this.checkVariables(input.variables);
    try {
      return await this.dataSource.transaction(async (manager) => {
        await lockProject(manager, projectId);
        const useCase = await manager.getRepository(UseCase).save(
          manager.getRepository(UseCase).create({
            projectId,
            name,
            description: input.description?.trim() || null,
            language: input.language?.trim() || null,
            reportType: input.reportType?.trim() || null,
            tags: cleanTags(input.tags),
            customMissingTokens: input.missingTokens ?? null,
          }),
        );
        await manager
          .getRepository(Variable)
          .insert(drafts.map((d) => ({ ...variableRow(d, useCase), extraction: (extra?.extraction?.[d.key] ?? {}) as QueryDeepPartialEntity<VariableExtractionMeta> })));
        await extra?.within?.(manager, useCase);
        return useCase;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict(`A use case named "${name}" already exists in this project`);
      throw error;
    }
  }

  async update(principal: Principal, id: string, input: UpdateUseCaseInput): Promise<UseCase> {
    const useCase = await this.get(principal, id, Role.EDITOR);
    checkListSizes(input);
    const drafts = input.variables ? this.checkVariables(input.variables) : null;
    if (input.name !== undefined && input.name !== null) {
      if (!input.name.trim()) throw badInput('name must not be empty', { field: 'name' });
      useCase.name = input.name.trim();
    }
    if (input.description !== undefined) useCase.description = input.description?.trim() || null;
    if (input.language !== undefined) useCase.language = input.language?.trim() || null;
    if (input.reportType !== undefined) useCase.reportType = input.reportType?.trim() || null;
    if (input.tags !== undefined) useCase.tags = cleanTags(input.tags);
    const tokensChanged = input.missingTokens !== undefined;
    if (tokensChanged) useCase.customMissingTokens = input.missingTokens ?? null;
    try {
      return await this.dataSource.transaction(async (manager) => {
        // Excludes imports that normalised against this use case until commit (they hold FOR SHARE).
        await manager.query('SELECT id FROM use_cases WHERE id = $1 FOR UPDATE', [useCase.id]);
        useCase.updatedAt = new Date();
        await manager.getRepository(UseCase).save(useCase);
        if (drafts) await this.replaceVariables(principal, manager, useCase, drafts);
        if (drafts || tokensChanged) await this.renormalise(manager, useCase);
        return useCase;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict(`A use case named "${useCase.name}" already exists in this project`);
      throw error;
    }
  }

  async delete(principal: Principal, id: string): Promise<void> {
    const useCase = await this.get(principal, id, Role.ADMIN);
    await this.dataSource.getRepository(UseCase).delete({ id: useCase.id });
  }

  private checkVariables(inputs: CreateUseCaseInput['variables']): VariableDraft[] {
    const { drafts, problems } = validateVariables(inputs);
    if (problems.length > 0) {
      throw badInput(`Invalid variables: ${problems.map((p) => `${p.field}: ${p.reason}`).join('; ')}`, { field: problems[0]!.field, problems });
    }
    return drafts;
  }

  /** Matches the new list by key: kept variables keep their id (and their annotations). */
  private async replaceVariables(principal: Principal, manager: EntityManager, useCase: UseCase, drafts: VariableDraft[]): Promise<void> {
    const repo = manager.getRepository(Variable);
    const existing = await repo.findBy({ useCaseId: useCase.id });
    const byKey = new Map(existing.map((v) => [v.key, v]));
    const keep = new Set(drafts.map((d) => d.key));
    const removed = existing.filter((v) => !keep.has(v.key));
    if (removed.length > 0) {
      // Removing a variable deletes its annotations: a deletion, so ADMIN only.
      requireRole(principal, useCase.projectId, Role.ADMIN, 'Use case');
      await repo.delete({ id: In(removed.map((v) => v.id)) });
    }
    for (const draft of drafts) {
      const current = byKey.get(draft.key);
      if (current) await repo.update({ id: current.id }, variableRow(draft, useCase));
      else await repo.insert(variableRow(draft, useCase));
    }
  }

  /**
   * Variables or missing tokens changed: stored annotations and predictions are normalised
   * again from what was imported or parsed, so scores never mix old and new rules.
   */
  private async renormalise(manager: EntityManager, useCase: UseCase): Promise<void> {
    const variables = await manager.getRepository(Variable).find({ where: { useCaseId: useCase.id }, order: { order: 'ASC' } });
    const specs = variables.map((v) => toSpec(v, useCase));
    const specById = new Map(variables.map((v, i) => [v.id, specs[i]!]));

    const annotations = await manager
      .getRepository(Annotation)
      .createQueryBuilder('a')
      .select(['a.id', 'a.variableId', 'a.raw'])
      .where('a.variable_id IN (:...ids)', { ids: variables.map((v) => v.id) })
      .getMany();
    const updates = annotations.map((a) => {
      const cell = normaliseValue(specById.get(a.variableId)!, a.raw);
      return {
        id: a.id,
        value: cell.status === 'VALUE' ? JSON.stringify(cell.value) : null,
        status: cell.status as ValueStatus,
        category: cell.status === 'INVALID' ? (cell.category as InvalidCategory) : null,
      };
    });
    for (let i = 0; i < updates.length; i += 5000) {
      const chunk = updates.slice(i, i + 5000);
      await manager.query(
        `UPDATE annotations a SET value = u.value::jsonb, status = u.status, invalid_category = u.category
         FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[]) AS u(id, value, status, category)
         WHERE a.id = u.id`,
        [chunk.map((u) => u.id), chunk.map((u) => u.value), chunk.map((u) => u.status), chunk.map((u) => u.category)],
      );
    }

    // The runs first, in id order as the prediction writer locks them: each statement below
    // also locks the cell versions of the runs it touches (a trigger), and a writer holding a
    // run while this transaction held its version would otherwise deadlock with it.
    const runIds = ((await manager.query('SELECT id FROM runs WHERE use_case_id = $1 ORDER BY id FOR UPDATE', [useCase.id])) as { id: string }[]).map((r) => r.id);
    if (runIds.length === 0) return;
    const predictions = await manager
      .getRepository(Prediction)
      .createQueryBuilder('p')
      .select(['p.id', 'p.parsed', 'p.status', 'p.cells', 'p.raw', 'p.reasoning', 'p.finishReason', 'p.samples'])
      .where('p.run_id IN (:...runIds)', { runIds })
      .getMany();
    const rows = predictions
      .filter((p) => p.status === 'SUCCEEDED')
      .map((p) => {
        const cells = renormalisedCells(specs, p);
        for (const [key, cell] of Object.entries(p.cells)) {
          if (cell.skipped && cells[key]) (cells[key] as { skipped?: boolean }).skipped = true;
        }
        return { id: p.id, cells: JSON.stringify(cells), values: JSON.stringify(valuesOf(cells)) };
      });
    for (let i = 0; i < rows.length; i += 2000) {
      const chunk = rows.slice(i, i + 2000);
      await manager.query(
        `UPDATE predictions p SET cells = u.cells::jsonb, "values" = u.values::jsonb
         FROM unnest($1::uuid[], $2::text[], $3::text[]) AS u(id, cells, values) WHERE p.id = u.id`,
        [chunk.map((r) => r.id), chunk.map((r) => r.cells), chunk.map((r) => r.values)],
      );
    }
  }
}
