/**
 * Starting, cancelling and resuming executed runs. A run, its snapshot and its work items are
 * created in one transaction, so a run exists iff its work is queued; the workers (src/jobs) do
 * the rest. Counters are only ever changed together with the rows they count.
 */
import type { DataSource, EntityManager } from 'typeorm';
import { checkpoint, controlledTransaction, type WorkControl } from '../../db/work-control';
import type { RunEventPublisher } from '../../jobs/events';
import type { JobQueue } from '../../jobs/queue';
import { finishedRunStatusSql } from '../../jobs/run-status';
import { badInput, conflict, notFound } from '../../domain/errors';
import { Role } from '../api-key/api-key.entity';
import { requireRole, type Principal } from '../api-key/principal';
import { Dataset } from '../dataset/dataset.entity';
import type { DatasetService } from '../dataset/dataset.service';
import type { StrategySettingsInput } from '../extraction/extraction.input';
import type { ExtractionService, ExtractionTarget } from '../extraction/extraction.service';
import { containsNul, nameProblem } from '../imports/text-checks';
import { Experiment } from './experiment.entity';
import type { StartExperimentInput, StartRunInput } from './run-execution.input';
import { PromptStrategy, Run, RunSource, RunStatus } from './run.entity';

export const MAX_AD_HOC_TEXTS = 50_000;
export const MAX_EXPERIMENT_RUNS = 1000;
export const MAX_NAME_LENGTH = 300;
/** Longest external id of an ad-hoc text. */
export const MAX_EXTERNAL_ID_LENGTH = 512;

/** A name given by the caller: trimmed, not empty, not too long; undefined when none was given. */
function givenName(name: string | null | undefined, field: string): string | undefined {
  if (name === null || name === undefined) return undefined;
  const trimmed = name.trim();
  if (!trimmed) throw badInput(`${field} must not be empty (leave it out for the default)`, { field });
  const problem = nameProblem(name, MAX_NAME_LENGTH);
  if (problem) throw badInput(`${field} ${problem}`, { field });
  if (containsNul(trimmed)) throw badInput(`${field} contains a NUL character`, { field });
  return trimmed;
}

const ACTIVE = [RunStatus.QUEUED, RunStatus.RUNNING];

/** Where a run's reports come from: the dataset's reports up to the last ordinal at start. */
interface RunScope {
  datasetId: string;
  maxOrdinal: number;
}

function strategyLabel(s: StrategySettingsInput): string {
  const parts: string[] = [s.strategy];
  if (s.thinking === true) parts.push('thinking');
  if (s.thinking === false) parts.push('no thinking');
  if (s.constrained) parts.push('constrained');
  if (s.guided === false) parts.push('unguided');
  return parts.join(' · ');
}

export class RunExecutionService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly datasets: DatasetService,
    private readonly extraction: ExtractionService,
    private readonly queue: JobQueue,
    private readonly events: RunEventPublisher,
  ) {}

  async startRun(
    principal: Principal,
    input: StartRunInput,
    ids: { modelId: string; datasetId: string | null; useCaseId: string | null; promptId: string | null },
    control?: WorkControl,
  ): Promise<Run> {
    const texts = input.texts ?? null;
    if ((ids.datasetId === null) === (texts === null)) throw badInput('Give either datasetId or texts (with useCaseId)', { field: 'datasetId' });
    let dataset: Dataset | null = null;
    let useCaseId: string;
    if (ids.datasetId) {
      dataset = await this.datasets.get(principal, ids.datasetId, Role.EDITOR);
      useCaseId = dataset.useCaseId;
      if (ids.useCaseId !== null && ids.useCaseId !== useCaseId) {
        // Resolved like any ID first (another project's use case answers NOT_FOUND), never ignored.
        await this.extraction.target(principal, ids.useCaseId, ids.modelId, ids.promptId);
        throw badInput("useCaseId is not the dataset's use case (give useCaseId with texts, or leave it out)", { field: 'useCaseId' });
      }
    } else {
      if (!ids.useCaseId) throw badInput('texts need useCaseId', { field: 'useCaseId' });
      useCaseId = ids.useCaseId;
      this.checkTexts(texts!);
    }
    const target = await this.extraction.target(principal, useCaseId, ids.modelId, ids.promptId);
    const { snapshot, warnings } = this.snapshot(target, input);
    const name = givenName(input.name, 'name') ?? `${target.model.servedName} · ${strategyLabel(input)}`;
    const run = await controlledTransaction(this.dataSource, control, async (manager) => {
      const scopeDataset = dataset ?? (await this.adHocDataset(manager, target, name, texts!, control));
      return this.createRun(manager, target, scopeDataset, null, name, input.strategy, snapshot, warnings);
    });
    await this.events.jobsAvailable();
    return run;
  }

  /**
   * Checks an experiment as startExperiment would (the dataset, the grid, every model and prompt,
   * every snapshot) and returns what it would create; throws what startExperiment would answer.
   */
  async planExperiment(principal: Principal, input: StartExperimentInput, ids: { datasetId: string; modelIds: string[]; promptIds: (string | null)[] }) {
    const dataset = await this.datasets.get(principal, ids.datasetId, Role.EDITOR);
    const name = givenName(input.name, 'name') ?? '';
    if (!name) throw badInput('name must not be empty', { field: 'name' });
    const unique = <T>(values: T[], field: string): T[] => {
      if (values.length === 0) throw badInput(`${field} must not be empty (leave it out for the default)`, { field });
      if (new Set(values).size !== values.length) throw badInput(`${field} lists a value twice`, { field });
      return values;
    };
    const modelIds = unique(ids.modelIds, 'modelIds');
    const promptIds = unique(input.promptIds ? ids.promptIds : [null], 'promptIds');
    const strategies = unique(input.strategies, 'strategies');
    const thinking = unique<boolean | null>(input.thinking ?? [null], 'thinking');
    const constrained = unique(input.constrained ?? [false], 'constrained');
    const guided = unique(input.guided ?? [true], 'guided');
    const size = modelIds.length * promptIds.length * strategies.length * thinking.length * constrained.length * guided.length;
    if (size > MAX_EXPERIMENT_RUNS) throw badInput(`The grid has ${size} runs; at most ${MAX_EXPERIMENT_RUNS} are allowed in one experiment`, { field: 'modelIds' });

    const planned: { target: ExtractionTarget; settings: StrategySettingsInput; promptLabel: string | null }[] = [];
    for (const modelId of modelIds) {
      for (const promptId of promptIds) {
        const target = await this.extraction.target(principal, dataset.useCaseId, modelId, promptId);
        for (const strategy of strategies)
          for (const t of thinking)
            for (const c of constrained)
              for (const g of guided) {
                const settings: StrategySettingsInput = { ...(input.settings ?? {}), strategy, constrained: c, guided: g, ...(t === null ? {} : { thinking: t }) };
                planned.push({ target, settings, promptLabel: promptIds.length > 1 && target.prompt ? `${target.prompt.name} v${target.prompt.version}` : null });
              }
      }
    }
    const snapshots = planned.map((p) => ({ ...p, ...this.snapshot(p.target, p.settings) }));
    return { dataset, name, grid: { modelIds, promptIds, strategies, thinking, constrained, guided }, snapshots };
  }

  /**
   * The experiment and all its runs and work items in one transaction: all of them or, when
   * `control` gives up (checked between runs and before the commit), none.
   */
  async startExperiment(principal: Principal, input: StartExperimentInput, ids: { datasetId: string; modelIds: string[]; promptIds: (string | null)[] }, control?: WorkControl) {
    const { dataset, name, grid, snapshots } = await this.planExperiment(principal, input, ids);
    const waited = control?.waitedLimits?.experimentRuns;
    if (waited !== undefined && snapshots.length > waited) {
      throw badInput(`The grid has ${snapshots.length} runs; startExperiment creates at most ${waited} while you wait: use startExperimentTask for more`, {
        field: 'modelIds',
        reason: 'USE_BACKGROUND_TASK',
      });
    }
    const { modelIds, promptIds, strategies, thinking, constrained, guided } = grid;
    const result = await controlledTransaction(this.dataSource, control, async (manager) => {
      const experiment = await manager.getRepository(Experiment).save(
        manager.getRepository(Experiment).create({
          projectId: dataset.projectId,
          useCaseId: dataset.useCaseId,
          datasetId: dataset.id,
          name,
          config: {
            models: modelIds,
            prompts: promptIds,
            strategies,
            thinking,
            constrained,
            guided,
            settings: input.settings ?? {},
          },
        }),
      );
      const runs: Run[] = [];
      for (const p of snapshots) {
        checkpoint(control);
        const label = [p.target.model.servedName, p.promptLabel, strategyLabel(p.settings)].filter(Boolean).join(' · ');
        runs.push(await this.createRun(manager, p.target, dataset, experiment.id, `${name} · ${label}`, p.settings.strategy, p.snapshot, p.warnings));
        control?.progress?.(runs.length);
      }
      return { experiment, runs };
    });
    await this.events.jobsAvailable();
    return result;
  }

  /** The extraction snapshot with a deadline that fits the work items' lease (half of it at most). */
  private snapshot(target: ExtractionTarget, settings: StrategySettingsInput) {
    const result = this.extraction.snapshot(target, settings);
    const bound = Math.floor((this.queue.options.leaseSeconds * 1000) / 2);
    if (result.snapshot.deadlineMs > bound) {
      if (settings.deadlineMs) throw badInput(`deadlineMs must be at most ${bound}, half the work-item lease (JOB_LEASE_SECONDS)`, { field: 'deadlineMs' });
      result.snapshot.deadlineMs = bound;
    }
    return result;
  }

  async cancelRun(principal: Principal, runId: string): Promise<Run> {
    const run = await this.executedRun(principal, runId);
    if (run.status === RunStatus.CANCELLED) return run;
    if (!ACTIVE.includes(run.status)) throw conflict(`The run is already over (${run.status})`, { status: run.status });
    const cancelled = await this.cancel(run.id);
    return cancelled ?? this.reload(run.id);
  }

  async resumeRun(principal: Principal, runId: string): Promise<{ run: Run; retried: number; queued: number }> {
    const run = await this.executedRun(principal, runId);
    if (ACTIVE.includes(run.status)) throw conflict('The run is still queued or running; cancel it first to resume it', { status: run.status });
    const outcome = await this.dataSource.transaction((manager) => this.requeue(manager, run.id));
    if (outcome.queued > 0) await this.events.jobsAvailable();
    await this.events.runsChanged([{ runId: run.id, experimentId: run.experimentId }]);
    return { run: await this.reload(run.id), ...outcome };
  }

  async cancelExperiment(principal: Principal, experimentId: string): Promise<{ experiment: Experiment; runs: Run[] }> {
    const experiment = await this.experiment(principal, experimentId);
    const runs = await this.dataSource.getRepository(Run).find({ where: { experimentId: experiment.id }, order: { createdAt: 'ASC' } });
    for (const run of runs) if (ACTIVE.includes(run.status)) await this.cancel(run.id);
    return { experiment, runs: await this.dataSource.getRepository(Run).find({ where: { experimentId: experiment.id }, order: { createdAt: 'ASC' } }) };
  }

  async resumeExperiment(principal: Principal, experimentId: string): Promise<{ experiment: Experiment; runs: Run[] }> {
    const experiment = await this.experiment(principal, experimentId);
    const runs = await this.dataSource.getRepository(Run).find({ where: { experimentId: experiment.id }, order: { createdAt: 'ASC' } });
    let queued = 0;
    for (const run of runs) {
      if (ACTIVE.includes(run.status)) continue;
      queued += (await this.dataSource.transaction((manager) => this.requeue(manager, run.id))).queued;
      await this.events.runsChanged([{ runId: run.id, experimentId: experiment.id }]);
    }
    if (queued > 0) await this.events.jobsAvailable();
    return { experiment, runs: await this.dataSource.getRepository(Run).find({ where: { experimentId: experiment.id }, order: { createdAt: 'ASC' } }) };
  }

  async experiment(principal: Principal, experimentId: string, minimum: Role = Role.EDITOR): Promise<Experiment> {
    const experiment = await this.dataSource.getRepository(Experiment).findOneBy({ id: experimentId });
    if (!experiment) throw notFound('Experiment');
    requireRole(principal, experiment.projectId, minimum, 'Experiment');
    return experiment;
  }

  private async executedRun(principal: Principal, runId: string): Promise<Run> {
    const run = await this.dataSource.getRepository(Run).findOneBy({ id: runId });
    if (!run) throw notFound('Run');
    requireRole(principal, run.projectId, Role.EDITOR, 'Run');
    if (run.source !== RunSource.EXECUTED) throw badInput('An imported run has nothing to execute', { field: 'runId' });
    return run;
  }

  private reload(runId: string): Promise<Run> {
    return this.dataSource.getRepository(Run).findOneByOrFail({ id: runId });
  }

  private async cancel(runId: string): Promise<Run | null> {
    const rows = (await this.dataSource.query(
      `UPDATE runs SET status = 'CANCELLED', finished_at = now() WHERE id = $1 AND status IN ('QUEUED', 'RUNNING') RETURNING id, experiment_id`,
      [runId],
    )) as [{ id: string; experiment_id: string | null }[], number];
    const changed = rows[0][0];
    if (!changed) return null;
    await this.events.runCancelled(runId);
    await this.events.runsChanged([{ runId, experimentId: changed.experiment_id }]);
    return this.reload(runId);
  }

  /**
   * Failed predictions are removed, the counters recounted from the rows, and every report of
   * the run's scope without a prediction is queued again; all in the caller's transaction.
   */
  private async requeue(manager: EntityManager, runId: string): Promise<{ retried: number; queued: number }> {
    const [run] = (await manager.query('SELECT id, config, status FROM runs WHERE id = $1 FOR UPDATE', [runId])) as { id: string; config: { scope?: RunScope }; status: string }[];
    if (!run || ACTIVE.includes(run.status as RunStatus)) return { retried: 0, queued: 0 };
    const scope = run.config.scope;
    if (!scope) throw badInput('This run was not started by ReportQL and cannot be resumed', { field: 'runId' });
    const [deleted] = (await manager.query(`DELETE FROM predictions WHERE run_id = $1 AND status = 'FAILED' RETURNING id`, [runId])) as [unknown[], number];
    const pending = ((await manager.query(
      `SELECT r.id FROM reports r WHERE r.dataset_id = $1 AND r.ordinal <= $2
         AND NOT EXISTS (SELECT 1 FROM predictions p WHERE p.run_id = $3 AND p.report_id = r.id)
       ORDER BY r.ordinal`,
      [scope.datasetId, scope.maxOrdinal, runId],
    )) as { id: string }[]).map((r) => r.id);
    await manager.query(
      `UPDATE runs r SET
         succeeded_count = c.succeeded, failed_count = c.failed, prompt_tokens = c.prompt_tokens,
         completion_tokens = c.completion_tokens, latency_ms_sum = c.latency,
         status = CASE WHEN $2::int > 0 THEN 'QUEUED' ELSE ${finishedRunStatusSql('c.succeeded', 'c.failed')} END,
         finished_at = CASE WHEN $2::int > 0 THEN NULL ELSE coalesce(r.finished_at, now()) END,
         paused_ms = r.paused_ms + CASE WHEN $2::int > 0 AND r.started_at IS NOT NULL AND r.finished_at IS NOT NULL
                                        THEN (extract(epoch FROM now() - r.finished_at) * 1000)::bigint ELSE 0 END,
         error = NULL
       FROM (SELECT count(*) FILTER (WHERE status = 'SUCCEEDED') AS succeeded, count(*) FILTER (WHERE status = 'FAILED') AS failed,
                    coalesce(sum(prompt_tokens), 0) AS prompt_tokens, coalesce(sum(completion_tokens), 0) AS completion_tokens,
                    coalesce(sum(latency_ms) FILTER (WHERE status = 'SUCCEEDED'), 0) AS latency
             FROM predictions WHERE run_id = $1) c
       WHERE r.id = $1`,
      [runId, pending.length],
    );
    if (pending.length > 0) await this.queue.enqueue(manager, runId, pending);
    return { retried: deleted.length, queued: pending.length };
  }

  private checkTexts(texts: { externalId?: string | null; text: string }[]): void {
    if (texts.length === 0) throw badInput('texts must not be empty', { field: 'texts' });
    if (texts.length > MAX_AD_HOC_TEXTS) throw badInput(`At most ${MAX_AD_HOC_TEXTS} texts per run`, { field: 'texts' });
    const seen = new Set<string>();
    texts.forEach((t, i) => {
      const id = t.externalId?.trim() || `text-${i + 1}`;
      if (!t.text.trim()) throw badInput(`texts[${i}] is empty`, { field: 'texts', index: i });
      if (containsNul(t.text) || containsNul(id)) throw badInput(`texts[${i}] contains a NUL character`, { field: 'texts', index: i });
      const idProblem = t.externalId ? nameProblem(t.externalId, MAX_EXTERNAL_ID_LENGTH) : null;
      if (idProblem) throw badInput(`texts[${i}].externalId ${idProblem}`, { field: 'texts', index: i });
      if (seen.has(id)) throw badInput(`texts[${i}].externalId "${id.slice(0, 80)}" is given twice`, { field: 'texts', index: i });
      seen.add(id);
    });
  }

  private async adHocDataset(
    manager: EntityManager,
    target: ExtractionTarget,
    runName: string,
    texts: { externalId?: string | null; text: string }[],
    control: WorkControl | undefined,
  ): Promise<Dataset> {
    const dataset = await manager.getRepository(Dataset).save(
      manager.getRepository(Dataset).create({
        projectId: target.useCase.projectId,
        useCaseId: target.useCase.id,
        name: `Ad-hoc texts · ${runName} · ${new Date().toISOString()}`.slice(0, 300),
        language: target.useCase.language,
        provenance: 'Texts sent with startRun',
      }),
    );
    for (let i = 0; i < texts.length; i += 2000) {
      checkpoint(control);
      const chunk = texts.slice(i, i + 2000);
      await manager.query(
        `INSERT INTO reports (project_id, dataset_id, ordinal, external_id, text, metadata)
         SELECT $1, $2, u.ordinal, u.external_id, u.text, '{}'::jsonb FROM unnest($3::int[], $4::text[], $5::text[]) AS u(ordinal, external_id, text)`,
        [dataset.projectId, dataset.id, chunk.map((_, j) => i + j), chunk.map((t, j) => t.externalId?.trim() || `text-${i + j + 1}`), chunk.map((t) => t.text)],
      );
    }
    return dataset;
  }

  private async createRun(
    manager: EntityManager,
    target: ExtractionTarget,
    dataset: Dataset,
    experimentId: string | null,
    name: string,
    strategy: PromptStrategy,
    snapshot: object,
    given: string[],
  ): Promise<Run> {
    let warnings = given;
    const reports = ((await manager.query('SELECT id, ordinal FROM reports WHERE dataset_id = $1 ORDER BY ordinal', [dataset.id])) as { id: string; ordinal: number }[]);
    if (reports.length === 0) throw badInput('The dataset has no reports to run over', { field: 'datasetId' });
    const scope: RunScope = { datasetId: dataset.id, maxOrdinal: reports[reports.length - 1]!.ordinal };
    // An example that is one of the reports shows the model its own answer.
    const examples = ((snapshot as { examples?: { input: string }[] }).examples ?? []).map((e) => e.input.trim());
    const leaked = examples.length
      ? ((await manager.query('SELECT external_id FROM reports WHERE dataset_id = $1 AND btrim(text) = ANY($2::text[]) ORDER BY ordinal LIMIT 20', [dataset.id, examples])) as {
          external_id: string;
        }[])
      : [];
    if (leaked.length > 0) {
      warnings = [
        ...warnings,
        `the prompt's examples include reports of this dataset (${leaked.map((r) => r.external_id.slice(0, 80)).join(', ')}): their predictions saw their own answer`,
      ];
    }
    const repo = manager.getRepository(Run);
    const run = await repo.save(
      repo.create({
        projectId: dataset.projectId,
        useCaseId: dataset.useCaseId,
        datasetId: dataset.id,
        modelId: target.model.id,
        promptId: target.prompt?.id ?? null,
        experimentId,
        name,
        strategy,
        config: { ...snapshot, scope },
        status: RunStatus.QUEUED,
        source: RunSource.EXECUTED,
        totalReports: reports.length,
        succeededCount: 0,
        failedCount: 0,
        startedAt: null,
        finishedAt: null,
        error: null,
        warnings,
      }),
    );
    await this.queue.enqueue(manager, run.id, reports.map((r) => r.id));
    return run;
  }
}
