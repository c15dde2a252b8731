import { createHash } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { In } from 'typeorm';
import { interRaterAgreement } from '../../analytics/agreement';
import {
  bootstrapGrid,
  bootstrapMultiplicities,
  estimateFrom,
  type BootstrapGridResult,
  type Estimate as AnalyticsEstimate,
} from '../../analytics/bootstrap';
import type { Embedder, EmbedderId, SimilarityLookup } from '../../analytics/embedding/embedder';
import { similarityFromEmbeddings } from '../../analytics/embedding/embedder';
import { lexicalEmbedderId, lexicalSimilarity } from '../../analytics/embedding/lexical';
import { buildGridInput } from '../../analytics/grid-input';
import { groupSummary, sizeClass } from '../../analytics/groups';
import { kemeny } from '../../analytics/kemeny';
import { itemScores, perReportScores, scoreVariable } from '../../analytics/metrics';
import { partitionVariance } from '../../analytics/mixed-model';
import type { NormalisedCell } from '../../analytics/types';
import { INVALID_CATEGORIES } from '../../analytics/types';
import { bestRunPerModel } from '../../analytics/rank-intervals';
import { badInput, notFound } from '../../graphql/errors';
import { LlmError } from '../../llm/llm-error';
import { decodeId } from '../../graphql/node';
import { Role } from '../api-key/api-key.entity';
import { requireRole, type Principal } from '../api-key/principal';
import { AnnotatorKind, type Annotator } from '../annotation/annotator.entity';
import { InvalidCategory } from '../annotation/annotation.entity';
import { Dataset } from '../dataset/dataset.entity';
import { Model } from '../endpoint/model.entity';
import { Run } from '../run/run.entity';
import { UseCase } from '../use-case/use-case.entity';
import { AnalyticsCache } from './analytics-cache';
import { concatGrids, rankIntervalsInSlices, yieldToEventLoop } from './chunked';
import { loadAnnotatorRecords, loadFrame, loadRunRecords, type DatasetFrame, type RecordRow } from './scoring-data';
import {
  Metric,
  ModelGrouping,
  RankingLevel,
  RankingMethod,
  ScoringMode,
  VoterScheme,
  type AgreementSummary,
  type Estimate,
  type GroupSummary,
  type InvalidCount,
  type Ranking,
  type RankingEntry,
  type RunScores,
  type StatsOptions,
  type VarianceDecomposition,
  type VariableScore,
} from './stats.types';

export interface ResolvedStatsOptions {
  resamples: number;
  seed: number;
  confidence: number;
  referenceAnnotatorId: string | null;
  embeddingModelId: string | null;
  scoring: ScoringMode;
  collapsed: boolean;
}

/** Resolves an embedding model (registered on an endpoint) to an Embedder; wired by the endpoint module. */
export type EmbedderResolver = (modelId: string, principal: Principal) => Promise<Embedder>;

const MAX_RESAMPLES = 10_000;
const RUNS_PER_SLICE = 16;

function toEstimate(e: AnalyticsEstimate | null, resamples: number): Estimate | null {
  if (!e || !Number.isFinite(e.value)) return null;
  const hasInterval = resamples > 0 && Number.isFinite(e.ciLow) && Number.isFinite(e.ciHigh);
  return {
    value: e.value,
    ciLow: hasInterval ? e.ciLow : null,
    ciHigh: hasInterval ? e.ciHigh : null,
    confidence: hasInterval ? e.confidence : null,
    resamples: hasInterval ? e.resamples : null,
  };
}

function pointEstimate(value: number | null): Estimate | null {
  return value === null || !Number.isFinite(value) ? null : { value, ciLow: null, ciHigh: null, confidence: null, resamples: null };
}

function invalidCounts(counts: Record<string, number>): InvalidCount[] {
  return INVALID_CATEGORIES.map((category) => ({ category: category as InvalidCategory, count: counts[category] ?? 0 })).filter((c) => c.count > 0);
}

function rankingOf(result: { exact: boolean; score: number; lowerBound: number; voterCount: number }, entries: RankingEntry[]): Ranking {
  return {
    method: RankingMethod.KEMENY_YOUNG,
    exact: result.exact,
    score: Math.round(result.score),
    lowerBound: Math.round(result.lowerBound),
    voterCount: result.voterCount,
    entries,
  };
}

/** A grid of runs over one dataset with everything derived from it. */
interface DatasetGrid {
  frame: DatasetFrame;
  reference: Annotator;
  references: RecordRow[];
  runs: Run[];
  records: RecordRow[][];
  similarity: SimilarityLookup;
  embedder: EmbedderId;
  /** Effective or conditional grid, per the options; null when there are no runs. */
  grid: BootstrapGridResult | null;
  /** Index of each grid variable in frame.variables (variables without any reference are left out). */
  variableIndex: number[];
}

export class ScoringService {
  private readonly cache: AnalyticsCache;

  constructor(
    private readonly dataSource: DataSource,
    private embedderResolver: EmbedderResolver | null = null,
  ) {
    this.cache = new AnalyticsCache(dataSource);
  }

  setEmbedderResolver(resolver: EmbedderResolver): void {
    this.embedderResolver = resolver;
  }

  /**
   * Checks what the options refer to before any cached result is served: a cached result must
   * not answer a caller who may not use the embedding model behind it.
   */
  private async authorise(principal: Principal, options: ResolvedStatsOptions): Promise<void> {
    if (options.embeddingModelId) {
      if (!this.embedderResolver) throw badInput('No embedding provider is available');
      await this.embedderResolver(options.embeddingModelId, principal);
    }
  }

  resolveOptions(options: StatsOptions | null | undefined): ResolvedStatsOptions {
    const o = options ?? ({} as Partial<StatsOptions>);
    const resamples = o.resamples ?? 1000;
    const confidence = o.confidence ?? 0.95;
    if (!Number.isInteger(resamples) || resamples < 0 || resamples > MAX_RESAMPLES) {
      throw badInput(`options.resamples must be an integer from 0 to ${MAX_RESAMPLES}`, { field: 'options.resamples' });
    }
    if (!(confidence > 0 && confidence < 1)) throw badInput('options.confidence must be between 0 and 1', { field: 'options.confidence' });
    const seed = o.seed ?? 42;
    if (!Number.isInteger(seed)) throw badInput('options.seed must be an integer', { field: 'options.seed' });
    return {
      resamples,
      seed,
      confidence,
      referenceAnnotatorId: o.referenceAnnotatorId ? decodeId(o.referenceAnnotatorId, 'Annotator', 'options.referenceAnnotatorId') : null,
      embeddingModelId: o.embeddingModelId ? decodeId(o.embeddingModelId, 'Model', 'options.embeddingModelId') : null,
      scoring: o.scoring ?? ScoringMode.EFFECTIVE,
      collapsed: o.collapsed ?? false,
    };
  }

  // ---------------------------------------------------------------- run scores

  async runScores(principal: Principal, run: Run, options: ResolvedStatsOptions): Promise<RunScores> {
    const [scores] = await this.runScoresMany(principal, [run], options);
    if (scores instanceof Error) throw scores;
    return scores!;
  }

  /**
   * Scores of several runs, one computation per dataset: the dataset, its reference and
   * agreement are loaded once and the runs bootstrapped together (each run's numbers are the
   * same as alone: the resamples are shared). A run that cannot be scored gets its error.
   */
  async runScoresMany(principal: Principal, runs: readonly Run[], options: ResolvedStatsOptions): Promise<(RunScores | Error)[]> {
    await this.authorise(principal, options);
    const byDataset = new Map<string, Run[]>();
    const out = new Map<string, RunScores | Error>();
    for (const run of runs) {
      try {
        requireRole(principal, run.projectId, Role.VIEWER, 'Run');
        if (!run.datasetId) throw badInput('This run has no dataset, so there is nothing to score it against');
        byDataset.set(run.datasetId, [...(byDataset.get(run.datasetId) ?? []), run]);
      } catch (error) {
        out.set(run.id, error as Error);
      }
    }
    for (const [datasetId, group] of byDataset) {
      const ids = [...new Set(group.map((r) => r.id))].sort();
      const unique = ids.map((id) => group.find((r) => r.id === id)!);
      try {
        const results = await this.cache.getOrCompute(unique[0]!.projectId, 'runScores', { runs: ids, options }, async () => {
          const g = await this.datasetGrid(principal, datasetId, unique, options);
          const ira = await this.agreementByVariable(principal, g.frame, options);
          return unique.map((_, r) => this.scoresOf(g, r, ira, options));
        });
        unique.forEach((run, r) => out.set(run.id, results[r]!));
      } catch (error) {
        for (const run of unique) out.set(run.id, error as Error);
      }
    }
    return runs.map((run) => out.get(run.id)!);
  }

  private scoresOf(g: DatasetGrid, r: number, ira: Map<string, Estimate>, options: ResolvedStatsOptions): RunScores | Error {
    const records = g.records[r]!;
    const variables: VariableScore[] = [];
    const invalidTotals: Record<string, number> = {};
    let validTotal = 0;
    let nTotal = 0;
    g.variableIndex.forEach((vi, column) => {
      const spec = g.frame.specs[vi]!;
      const refs = g.references.map((x) => x?.[spec.key]);
      const preds = records.map((x) => x?.[spec.key] as NormalisedCell | undefined);
      const detail = scoreVariable(spec, refs, preds, { similarity: g.similarity, embedder: g.embedder });
      for (const [category, count] of Object.entries(detail.invalid)) invalidTotals[category] = (invalidTotals[category] ?? 0) + count;
      validTotal += detail.valid;
      nTotal += detail.n;
      const fromGrid = g.grid ? g.grid.perVariable[r]![column]! : null;
      const conditionalValue = options.collapsed && detail.collapsed ? detail.collapsed.primary.conditional : detail.primary.conditional;
      const effective = options.scoring === ScoringMode.EFFECTIVE ? toEstimate(fromGrid, options.resamples) : null;
      const conditional = options.scoring === ScoringMode.CONDITIONAL ? toEstimate(fromGrid, options.resamples) : pointEstimate(conditionalValue);
      const effectivePoint = options.collapsed && detail.collapsed ? detail.collapsed.primary.effective : detail.primary.effective;
      variables.push({
        variable: g.frame.variables[vi]!,
        metric: detail.metric as Metric,
        n: detail.n,
        estimate: effective ?? pointEstimate(effectivePoint)!,
        conditional,
        collapsed: detail.collapsed ? pointEstimate(detail.collapsed.primary.effective) : null,
        validity: detail.validity,
        invalid: invalidCounts(detail.invalid),
        interRaterAgreement: ira.get(spec.key) ?? null,
        embedder: detail.embedder ? { ...detail.embedder } : null,
      });
    });
    const macro = g.grid ? toEstimate(g.grid.macro[r]!, options.resamples) : null;
    if (!macro) return badInput('No variable of this run has a reference value in the dataset, so it has no score');
    return {
      macroAverage: macro,
      validity: nTotal === 0 ? 0 : validTotal / nTotal,
      invalid: invalidCounts(invalidTotals),
      variables,
      reference: g.reference,
      embedder: { ...g.embedder },
    };
  }

  // ---------------------------------------------------------------- leaderboard

  async leaderboard(principal: Principal, useCase: UseCase, datasetId: string, level: RankingLevel, options: ResolvedStatsOptions): Promise<Ranking> {
    requireRole(principal, useCase.projectId, Role.VIEWER, 'Use case');
    const dataset = await this.dataSource.getRepository(Dataset).findOneBy({ id: datasetId });
    if (!dataset || dataset.useCaseId !== useCase.id) throw notFound('Dataset');
    await this.authorise(principal, options);
    return this.cache.getOrCompute(useCase.projectId, 'leaderboard', { dataset: datasetId, level, options }, async () => {
      const runs = await this.scoredRuns(datasetId);
      if (runs.length === 0) return { method: RankingMethod.KEMENY_YOUNG, exact: true, score: 0, lowerBound: 0, voterCount: 0, entries: [] };
      const g = await this.datasetGrid(principal, datasetId, runs, options);
      if (!g.grid) throw badInput('No variable has a reference value in this dataset, so there is nothing to rank by');
      return this.rankDatasetGrid(g, level, options);
    });
  }

  private async rankDatasetGrid(g: DatasetGrid, level: RankingLevel, options: ResolvedStatsOptions): Promise<Ranking> {
    const grid = g.grid!;
    const R = g.runs.length;
    const V = g.variableIndex.length;
    const voterScores = Array.from({ length: V }, (_, v) => Float64Array.from({ length: R }, (_, r) => grid.points[r * V + v]!));
    const names = g.runs.map((r) => `${r.name}\u0000${r.id}`);
    const runRanking = kemeny(voterScores, { macro: grid.macroPoints, names });
    let candidates = g.runs.map((_, r) => r);
    let ranking = runRanking;
    if (level === RankingLevel.MODEL) {
      const best = bestRunPerModel(runRanking.order, g.runs.map((r) => r.modelId ?? `run:${r.id}`));
      candidates = best.map((b) => b.run);
      ranking = kemeny(
        voterScores.map((s) => Float64Array.from(candidates, (r) => s[r]!)),
        { macro: Float64Array.from(candidates, (r) => grid.macroPoints[r]!), names: candidates.map((r) => names[r]!) },
      );
    }
    const intervals = await this.rankIntervals(grid, candidates, V, ranking.order, names, options);
    const models = await this.modelsOf(g.runs);
    const entries: RankingEntry[] = ranking.order.map((c, position) => {
      const run = g.runs[candidates[c]!]!;
      return {
        rank: position + 1,
        rankCiLow: intervals?.[c]?.lower ?? null,
        rankCiHigh: intervals?.[c]?.upper ?? null,
        run,
        model: run.modelId ? (models.get(run.modelId) ?? null) : null,
        strategy: run.strategy,
        macroAverage: toEstimate(grid.macro[candidates[c]!]!, options.resamples),
      };
    });
    return rankingOf(ranking, entries);
  }

  private async rankIntervals(grid: BootstrapGridResult, candidates: number[], V: number, order: number[], names: string[], options: ResolvedStatsOptions) {
    if (options.resamples === 0 || candidates.length < 2) return null;
    const B = grid.resamples;
    const K = candidates.length;
    const data = new Float64Array(K * V * B);
    const macro = new Float64Array(K * B);
    candidates.forEach((r, k) => {
      data.set(grid.replicates.subarray(r * V * B, (r + 1) * V * B), k * V * B);
      macro.set(grid.macroReplicates.subarray(r * B, (r + 1) * B), k * B);
    });
    const intervals = await rankIntervalsInSlices(
      { data, macro, candidates: K, voters: V, replicates: B },
      { level: options.confidence, names: candidates.map((r) => names[r]!), pointOrder: order },
    );
    return Object.fromEntries(intervals.map((i) => [i.candidate, { lower: i.lower, upper: i.upper }])) as Record<number, { lower: number; upper: number }>;
  }

  // ---------------------------------------------------------------- across use cases

  async consensusRanking(
    principal: Principal,
    projectId: string,
    useCaseIds: string[],
    level: RankingLevel,
    voters: VoterScheme,
    options: ResolvedStatsOptions,
  ): Promise<Ranking> {
    requireRole(principal, projectId, Role.VIEWER, 'Project');
    const useCases = await this.useCasesOf(projectId, useCaseIds);
    await this.authorise(principal, options);
    return this.cache.getOrCompute(projectId, 'consensus', { useCaseIds, level, voters, options }, async () => {
      const units = await this.unitsOf(principal, useCases, level, options);
      // Candidates: model (MODEL level) or model × strategy (RUN level), matched across use cases.
      const keyOf = (run: Run) => (level === RankingLevel.MODEL ? (run.modelId ?? `run:${run.id}`) : `${run.modelId ?? `run:${run.id}`}|${run.strategy}`);
      const candidateKeys: string[] = [];
      const candidateIndex = new Map<string, number>();
      const sample = new Map<number, Run>();
      for (const unit of units) {
        for (const r of unit.selected) {
          const key = keyOf(unit.g.runs[r]!);
          if (!candidateIndex.has(key)) {
            candidateIndex.set(key, candidateKeys.length);
            sample.set(candidateKeys.length, unit.g.runs[r]!);
            candidateKeys.push(key);
          }
        }
      }
      const K = candidateKeys.length;
      if (K === 0) return { method: RankingMethod.KEMENY_YOUNG, exact: true, score: 0, lowerBound: 0, voterCount: 0, entries: [] };
      const B = options.resamples;
      const voterRows: Float64Array[] = [];
      const voterReplicates: Float64Array[] = [];
      const macroSum = new Float64Array(K);
      const macroCount = new Float64Array(K);
      const macroReps = new Float64Array(K * Math.max(B, 1));
      const macroRepCount = new Float64Array(K * Math.max(B, 1));
      for (const unit of units) {
        const grid = unit.g.grid!; // unitsOf keeps only datasets with a grid
        const V = unit.g.variableIndex.length;
        const GB = grid.resamples;
        const addVoter = (point: (r: number) => number, replicate: (r: number, b: number) => number) => {
          const row = new Float64Array(K).fill(Number.NaN);
          const reps = new Float64Array(K * Math.max(B, 1)).fill(Number.NaN);
          for (const r of unit.selected) {
            const k = candidateIndex.get(keyOf(unit.g.runs[r]!))!;
            row[k] = point(r);
            for (let b = 0; b < B; b++) reps[k * B + b] = replicate(r, b);
          }
          voterRows.push(row);
          voterReplicates.push(reps);
        };
        if (voters === VoterScheme.USE_CASES) {
          addVoter((r) => grid.macroPoints[r]!, (r, b) => grid.macroReplicates[r * GB + b]!);
        } else {
          for (let v = 0; v < V; v++) addVoter((r) => grid.points[r * V + v]!, (r, b) => grid.replicates[(r * V + v) * GB + b]!);
        }
        for (const r of unit.selected) {
          const k = candidateIndex.get(keyOf(unit.g.runs[r]!))!;
          if (Number.isFinite(grid.macroPoints[r]!)) {
            macroSum[k]! += grid.macroPoints[r]!;
            macroCount[k]! += 1;
          }
          for (let b = 0; b < B; b++) {
            const x = grid.macroReplicates[r * GB + b]!;
            if (Number.isFinite(x)) {
              macroReps[k * B + b]! += x;
              macroRepCount[k * B + b]! += 1;
            }
          }
        }
      }
      const macroPoints = Float64Array.from(macroSum, (s, k) => (macroCount[k]! > 0 ? s / macroCount[k]! : Number.NaN));
      const names = candidateKeys.map((key, k) => `${sample.get(k)!.name}\u0000${key}`);
      const ranking = kemeny(voterRows, { macro: macroPoints, names });
      let intervals: Record<number, { lower: number; upper: number }> | null = null;
      if (B > 0 && K > 1) {
        const VV = voterRows.length;
        const data = new Float64Array(K * VV * B);
        voterReplicates.forEach((reps, v) => {
          for (let k = 0; k < K; k++) for (let b = 0; b < B; b++) data[(k * VV + v) * B + b] = reps[k * B + b]!;
        });
        const macroData = Float64Array.from(macroReps, (s, i) => (macroRepCount[i]! > 0 ? s / macroRepCount[i]! : Number.NaN));
        const result = await rankIntervalsInSlices(
          { data, macro: macroData, candidates: K, voters: VV, replicates: B },
          { level: options.confidence, names, pointOrder: ranking.order },
        );
        intervals = {};
        for (const i of result) intervals[i.candidate] = { lower: i.lower, upper: i.upper };
      }
      const models = await this.modelsOf([...sample.values()]);
      const entries: RankingEntry[] = ranking.order.map((k, position) => {
        const run = sample.get(k)!;
        const macroEstimate = this.meanEstimate(macroPoints[k]!, macroReps, macroRepCount, k, B, options);
        return {
          rank: position + 1,
          rankCiLow: intervals?.[k]?.lower ?? null,
          rankCiHigh: intervals?.[k]?.upper ?? null,
          run: units.length === 1 ? run : null,
          model: run.modelId ? (models.get(run.modelId) ?? null) : null,
          strategy: level === RankingLevel.RUN ? run.strategy : null,
          macroAverage: macroEstimate,
        };
      });
      return rankingOf(ranking, entries);
    });
  }

  private meanEstimate(value: number, sums: Float64Array, counts: Float64Array, k: number, B: number, options: ResolvedStatsOptions): Estimate | null {
    if (!Number.isFinite(value)) return null;
    if (B === 0) return pointEstimate(value);
    const reps: number[] = [];
    for (let b = 0; b < B; b++) if (counts[k * B + b]! > 0) reps.push(sums[k * B + b]! / counts[k * B + b]!);
    return toEstimate(estimateFrom(value, reps, options.confidence), B);
  }


  async groupSummary(principal: Principal, projectId: string, useCaseIds: string[], groupBy: ModelGrouping, options: ResolvedStatsOptions): Promise<GroupSummary[]> {
    requireRole(principal, projectId, Role.VIEWER, 'Project');
    const useCases = await this.useCasesOf(projectId, useCaseIds);
    await this.authorise(principal, options);
    return this.cache.getOrCompute(projectId, 'groups', { useCaseIds, groupBy, options }, async () => {
      const units = await this.unitsOf(principal, useCases, RankingLevel.MODEL, options);
      const runs = units.flatMap((u) => u.selected.map((r) => u.g.runs[r]!));
      const models = await this.modelsOf(runs);
      const groups = new Map<string, { members: { model: string; value: number; replicates: Float64Array }[]; models: Set<string> }>();
      for (const unit of units) {
        const grid = unit.g.grid!; // unitsOf keeps only datasets with a grid
        const B = grid.resamples;
        for (const r of unit.selected) {
          const run = unit.g.runs[r]!;
          const model = run.modelId ? models.get(run.modelId) : undefined;
          const group = this.groupOf(groupBy, run, model);
          if (group === null || !model) continue;
          const entry = groups.get(group) ?? { members: [], models: new Set<string>() };
          entry.members.push({
            model: `${model.id}@${unit.g.frame.useCase.id}`,
            value: grid.macroPoints[r]!,
            replicates: grid.macroReplicates.slice(r * B, (r + 1) * B),
          });
          entry.models.add(model.id);
          groups.set(group, entry);
        }
      }
      return [...groups.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([group, entry]) => ({
          group,
          models: [...entry.models].map((id) => models.get(id)!).sort((a, b) => a.servedName.localeCompare(b.servedName)),
          memberCount: entry.members.length,
          estimate:
            options.resamples === 0
              ? pointEstimate(entry.members.reduce((s, m) => s + m.value, 0) / entry.members.length)!
              : toEstimate(groupSummary(group, entry.members, options.confidence).estimate, options.resamples)!,
        }))
        .filter((g) => g.estimate !== null);
    });
  }

  private groupOf(groupBy: ModelGrouping, run: Run, model: Model | undefined): string | null {
    if (!model) return null;
    switch (groupBy) {
      case ModelGrouping.SIZE_CLASS:
        return model.sizeClass ?? (model.parameterCountB !== null ? sizeClass(model.parameterCountB) : 'UNKNOWN');
      case ModelGrouping.SPECIALISATION:
        return model.specialisation ?? 'UNKNOWN';
      case ModelGrouping.FAMILY:
        return model.family ?? 'UNKNOWN';
      case ModelGrouping.REASONING_MODE: {
        const thinking = (run.config as { thinking?: unknown }).thinking;
        return thinking === true ? 'THINKING' : thinking === false ? 'NON_THINKING' : model.supportsThinking ? 'THINKING' : 'NON_THINKING';
      }
      case ModelGrouping.QUANTISATION:
        return model.quantisation ?? 'NONE';
    }
  }

  /**
   * Per use case: the grid of its runs on one dataset and the runs that stand for candidates (all
   * runs at RUN level, each model's best-ranked run at MODEL level). A use case speaks through
   * one dataset, so that it is one voter and a model one member per use case: the dataset with
   * the most scored runs (the oldest among equals) that has a reference standard and annotated
   * variables. Use cases without such a dataset are left out.
   */
  private async unitsOf(principal: Principal, useCases: UseCase[], level: RankingLevel, options: ResolvedStatsOptions) {
    const units: { g: DatasetGrid; selected: number[] }[] = [];
    for (const useCase of useCases) {
      const datasets = await this.dataSource.getRepository(Dataset).find({ where: { useCaseId: useCase.id }, order: { createdAt: 'ASC', id: 'ASC' } });
      const candidates: { dataset: Dataset; runs: Run[] }[] = [];
      for (const dataset of datasets) {
        const runs = await this.scoredRuns(dataset.id);
        if (runs.length > 0) candidates.push({ dataset, runs });
      }
      candidates.sort((a, b) => b.runs.length - a.runs.length);
      for (const { dataset, runs } of candidates) {
        const frame = await loadFrame(this.dataSource, dataset.id);
        const ownReference = options.referenceAnnotatorId !== null && frame.annotators.some((a) => a.id === options.referenceAnnotatorId);
        if (!ownReference && !frame.annotators.some((a) => a.isReference)) continue;
        const g = await this.datasetGrid(principal, frame, runs, ownReference ? options : { ...options, referenceAnnotatorId: null });
        if (!g.grid) continue;
        const grid = g.grid;
        if (level === RankingLevel.RUN) {
          units.push({ g, selected: runs.map((_, r) => r) });
        } else {
          const V = g.variableIndex.length;
          const voterScores = Array.from({ length: V }, (_, v) => Float64Array.from({ length: runs.length }, (_, r) => grid.points[r * V + v]!));
          const order = kemeny(voterScores, { macro: grid.macroPoints, names: runs.map((r) => `${r.name}\u0000${r.id}`) }).order;
          const best = bestRunPerModel(order, runs.map((r) => r.modelId ?? `run:${r.id}`));
          units.push({ g, selected: best.map((b) => b.run) });
        }
        break;
      }
    }
    return units;
  }

  // ---------------------------------------------------------------- agreement

  async interRaterAgreement(principal: Principal, dataset: Dataset, annotatorIds: string[] | null, options: ResolvedStatsOptions): Promise<AgreementSummary> {
    requireRole(principal, dataset.projectId, Role.VIEWER, 'Dataset');
    await this.authorise(principal, options);
    return this.cache.getOrCompute(dataset.projectId, 'agreement', { dataset: dataset.id, annotatorIds, options }, async () => {
      const frame = await loadFrame(this.dataSource, dataset.id);
      const chosen = this.agreementAnnotators(frame, annotatorIds);
      if (chosen.length < 2) return { annotators: chosen, macroAverage: null, variables: [] };
      const result = await this.computeAgreement(principal, frame, chosen, options);
      const byId = new Map(chosen.map((a) => [a.id, a]));
      return {
        annotators: chosen,
        macroAverage: toEstimate(result.macro, options.resamples),
        variables: result.perVariable.flatMap((v, i) => {
          const estimate = toEstimate(v.estimate, options.resamples);
          if (!estimate) return [];
          return [
            {
              variable: frame.variables[i]!,
              metric: v.metric as Metric,
              estimate,
              pairs: v.pairs.filter((p) => p.n > 0).map((p) => ({ a: byId.get(p.a)!, b: byId.get(p.b)!, n: p.n, value: p.value })),
            },
          ];
        }),
      };
    });
  }

  private agreementAnnotators(frame: DatasetFrame, annotatorIds: string[] | null): Annotator[] {
    if (annotatorIds) {
      const chosen = annotatorIds.map((id) => frame.annotators.find((a) => a.id === id));
      if (chosen.some((a) => !a)) throw notFound('Annotator');
      return chosen as Annotator[];
    }
    // The human ceiling: people against people; a consensus is derived from them.
    const humans = frame.annotators.filter((a) => a.kind === AnnotatorKind.HUMAN);
    return humans.length >= 2 ? humans : frame.annotators;
  }

  private async computeAgreement(principal: Principal, frame: DatasetFrame, annotators: Annotator[], options: ResolvedStatsOptions) {
    const records = await Promise.all(annotators.map(async (a) => ({ id: a.id, records: await loadAnnotatorRecords(this.dataSource, frame, a.id) })));
    const { similarity, embedder } = await this.similarityFor(principal, frame, records.map((r) => r.records), options);
    return interRaterAgreement({
      specs: frame.specs,
      annotators: records,
      similarity,
      embedder,
      ...(options.resamples > 0 ? { multiplicities: bootstrapMultiplicities(frame.reportIds.length, options.resamples, options.seed) } : { resamples: 1 }),
      confidence: options.confidence,
    });
  }

  private async agreementByVariable(principal: Principal, frame: DatasetFrame, options: ResolvedStatsOptions): Promise<Map<string, Estimate>> {
    const chosen = this.agreementAnnotators(frame, null).filter((a) => a.kind === AnnotatorKind.HUMAN);
    if (chosen.length < 2 || frame.reportIds.length === 0) return new Map();
    const result = await this.computeAgreement(principal, frame, chosen, options);
    const out = new Map<string, Estimate>();
    result.perVariable.forEach((v, i) => {
      const e = toEstimate(v.estimate, options.resamples);
      if (e) out.set(frame.specs[i]!.key, e);
    });
    return out;
  }

  // ---------------------------------------------------------------- variance

  async varianceDecomposition(principal: Principal, useCase: UseCase, datasetId: string): Promise<VarianceDecomposition> {
    requireRole(principal, useCase.projectId, Role.VIEWER, 'Use case');
    const dataset = await this.dataSource.getRepository(Dataset).findOneBy({ id: datasetId });
    if (!dataset || dataset.useCaseId !== useCase.id) throw notFound('Dataset');
    return this.cache.getOrCompute(useCase.projectId, 'variance', { dataset: datasetId }, async () => {
      const runs = await this.scoredRuns(datasetId);
      const options = this.resolveOptions({ resamples: 0 } as StatsOptions);
      const g = await this.datasetGrid(principal, datasetId, runs, options, false);
      const y: number[] = [];
      const model: string[] = [];
      const strategy: string[] = [];
      g.runs.forEach((run, r) => {
        const items = g.variableIndex.map((vi) => {
          const spec = g.frame.specs[vi]!;
          return itemScores(
            spec,
            g.references.map((x) => x?.[spec.key]),
            g.records[r]!.map((x) => x?.[spec.key] as NormalisedCell | undefined),
            { similarity: g.similarity },
          );
        });
        const scores = perReportScores(items, g.variableIndex.map((vi) => g.frame.specs[vi]!.weight ?? 1));
        scores.forEach((s) => {
          if (!Number.isFinite(s)) return;
          y.push(s);
          model.push(run.modelId ?? `run:${run.id}`);
          strategy.push(run.strategy);
        });
      });
      if (new Set(model).size < 2 && new Set(strategy).size < 2) {
        throw badInput('Variance partitioning needs runs of at least two models or two strategies on this dataset');
      }
      const warnings: string[] = [];
      const strategiesOf = new Map<string, Set<string>>();
      const modelsOf = new Map<string, Set<string>>();
      model.forEach((m, i) => {
        strategiesOf.set(m, (strategiesOf.get(m) ?? new Set()).add(strategy[i]!));
        modelsOf.set(strategy[i]!, (modelsOf.get(strategy[i]!) ?? new Set()).add(m));
      });
      if ([...strategiesOf.values()].every((s) => s.size === 1) || [...modelsOf.values()].every((m) => m.size === 1)) {
        warnings.push('Model and strategy are not crossed on this dataset (no model was run with two strategies, or no strategy with two models): their shares cannot be told apart.');
      }
      const fit = partitionVariance(Float64Array.from(y), [
        { name: 'model', levels: model },
        { name: 'strategy', levels: strategy },
      ]);
      return {
        observations: fit.n,
        intercept: fit.intercept,
        components: fit.components.map((c) => ({ name: c.name, levelCount: c.levelCount, variance: c.variance, share: c.share })),
        residualVariance: fit.residualVariance,
        residualShare: fit.residualShare,
        converged: fit.converged,
        warnings,
      };
    });
  }

  // ---------------------------------------------------------------- shared

  /** Runs of a dataset that have predictions to score, oldest first. */
  private async scoredRuns(datasetId: string): Promise<Run[]> {
    return this.dataSource
      .getRepository(Run)
      .createQueryBuilder('r')
      .where('r.dataset_id = :datasetId', { datasetId })
      .andWhere('EXISTS (SELECT 1 FROM predictions p WHERE p.run_id = r.id)')
      .orderBy('r.created_at', 'ASC')
      .addOrderBy('r.id', 'ASC')
      .getMany();
  }

  private async useCasesOf(projectId: string, useCaseIds: string[]): Promise<UseCase[]> {
    if (useCaseIds.length === 0) throw badInput('useCaseIds must name at least one use case', { field: 'useCaseIds' });
    const ids = [...new Set(useCaseIds)];
    const useCases = await this.dataSource.getRepository(UseCase).findBy({ id: In(ids) });
    const byId = new Map(useCases.filter((u) => u.projectId === projectId).map((u) => [u.id, u]));
    return ids.map((id) => {
      const useCase = byId.get(id);
      if (!useCase) throw notFound('Use case');
      return useCase;
    });
  }

  private async modelsOf(runs: Run[]): Promise<Map<string, Model>> {
    const ids = [...new Set(runs.map((r) => r.modelId).filter((id): id is string => id !== null))];
    if (ids.length === 0) return new Map();
    const models = await this.dataSource.getRepository(Model).findBy({ id: In(ids) });
    return new Map(models.map((m) => [m.id, m]));
  }

  private async referenceOf(frame: DatasetFrame, options: ResolvedStatsOptions): Promise<Annotator> {
    if (options.referenceAnnotatorId) {
      const chosen = frame.annotators.find((a) => a.id === options.referenceAnnotatorId);
      if (!chosen) throw notFound('Annotator');
      return chosen;
    }
    const reference = frame.annotators.find((a) => a.isReference);
    if (!reference) throw badInput('The dataset has no reference annotator: import annotations with isReference: true, or pass options.referenceAnnotatorId');
    return reference;
  }

  private async similarityFor(
    principal: Principal,
    frame: DatasetFrame,
    recordSets: RecordRow[][],
    options: ResolvedStatsOptions,
  ): Promise<{ similarity: SimilarityLookup; embedder: EmbedderId }> {
    if (!options.embeddingModelId) return { similarity: lexicalSimilarity(), embedder: lexicalEmbedderId() };
    if (!this.embedderResolver) throw badInput('No embedding provider is available');
    const embedder = await this.embedderResolver(options.embeddingModelId, principal);
    const texts = new Set<string>();
    const textKeys = frame.specs.filter((s) => s.type === 'FREE_TEXT' || s.type === 'LIST').map((s) => s.key);
    for (const records of recordSets) {
      for (const record of records) {
        for (const key of textKeys) {
          const cell = record?.[key];
          if (cell?.status !== 'VALUE') continue;
          if (Array.isArray(cell.value)) for (const item of cell.value) texts.add(String(item));
          else texts.add(String(cell.value));
        }
      }
    }
    const map = await this.cachedEmbeddings(embedder, [...texts]);
    return { similarity: similarityFromEmbeddings(map), embedder: embedder.id };
  }

  /** Embeddings by (provider, model, text): read from the database, computed only for texts not seen before. */
  private async cachedEmbeddings(embedder: Embedder, texts: string[]): Promise<Map<string, Float32Array>> {
    const { provider, model } = embedder.id;
    const hashOf = (text: string) => createHash('sha256').update(text, 'utf8').digest();
    const hashes = texts.map(hashOf);
    const map = new Map<string, Float32Array>();
    const stored = (await this.dataSource.query(
      'SELECT text_hash, vector FROM embeddings WHERE provider = $1 AND model = $2 AND text_hash = ANY($3)',
      [provider, model, hashes],
    )) as { text_hash: Buffer; vector: Buffer }[];
    const byHash = new Map(stored.map((row) => [row.text_hash.toString('hex'), row.vector]));
    const missing: string[] = [];
    texts.forEach((text, i) => {
      const vector = byHash.get(hashes[i]!.toString('hex'));
      if (vector) map.set(text, new Float32Array(vector.buffer.slice(vector.byteOffset, vector.byteOffset + vector.byteLength)));
      else missing.push(text);
    });
    if (missing.length > 0) {
      let vectors: Float32Array[];
      try {
        vectors = await embedder.embed(missing);
      } catch (error) {
        if (error instanceof LlmError) {
          throw badInput(`The embedding model ${model} could not embed the texts: ${error.message}`, { field: 'options.embeddingModelId', reason: error.code });
        }
        throw error;
      }
      missing.forEach((text, i) => map.set(text, vectors[i]!));
      for (let i = 0; i < missing.length; i += 1000) {
        const chunk = missing.slice(i, i + 1000);
        await this.dataSource.query(
          `INSERT INTO embeddings (provider, model, text_hash, vector)
           SELECT $1, $2, u.hash, u.vector FROM unnest($3::bytea[], $4::bytea[]) AS u(hash, vector)
           ON CONFLICT DO NOTHING`,
          [provider, model, chunk.map(hashOf), chunk.map((text) => { const v = map.get(text)!; return Buffer.from(v.buffer, v.byteOffset, v.byteLength); })],
        );
      }
    }
    return map;
  }

  /**
   * Loads the dataset, its reference and the runs' predictions, and bootstraps them on the
   * dataset's shared resamples (paired across runs). CONDITIONAL scoring bootstraps each run on
   * its valid predictions only.
   */
  private async datasetGrid(
    principal: Principal,
    dataset: string | DatasetFrame,
    runs: Run[],
    options: ResolvedStatsOptions,
    bootstrap = true,
  ): Promise<DatasetGrid> {
    const frame = typeof dataset === 'string' ? await loadFrame(this.dataSource, dataset) : dataset;
    if (frame.reportIds.length === 0) throw badInput('The dataset has no reports');
    const reference = await this.referenceOf(frame, options);
    const references = await loadAnnotatorRecords(this.dataSource, frame, reference.id);
    const recordMap = await loadRunRecords(this.dataSource, frame, runs.map((r) => r.id));
    const records = runs.map((r) => recordMap.get(r.id)!);
    const { similarity, embedder } = await this.similarityFor(principal, frame, [references, ...records], options);
    const variableIndex = frame.specs.map((_, i) => i).filter((i) => references.some((r) => r?.[frame.specs[i]!.key] !== undefined));
    const specs = variableIndex.map((i) => frame.specs[i]!);
    let grid: BootstrapGridResult | null = null;
    if (runs.length > 0 && specs.length > 0) {
      const B = Math.max(options.resamples, 1);
      const multiplicities = bootstrapMultiplicities(frame.reportIds.length, B, options.seed);
      const parts: BootstrapGridResult[] = [];
      for (let start = 0; start < runs.length; start += RUNS_PER_SLICE) {
        const slice = runs.slice(start, start + RUNS_PER_SLICE);
        const input = buildGridInput(
          specs,
          references,
          slice.map((r, i) => ({ id: r.id, records: records[start + i]! })),
          { similarity, collapsed: options.collapsed },
        );
        if (!bootstrap || options.scoring === ScoringMode.EFFECTIVE) {
          parts.push(bootstrapGrid({ ...input, multiplicities, confidence: options.confidence }));
          await yieldToEventLoop();
          continue;
        }
        // Conditional: each run keeps only the reports where its prediction is valid.
        for (const [i, gridRun] of input.runs.entries()) {
          const runRecords = records[start + i]!;
          const variables = input.variables.map((v) => ({
            ...v,
            groups: Int32Array.from(v.groups as ArrayLike<number>, (g, report) => {
              const cell = runRecords[report]?.[v.key];
              return cell === undefined || cell.status === 'INVALID' ? -1 : g;
            }),
          }));
          parts.push(bootstrapGrid({ variables, runs: [gridRun], multiplicities, confidence: options.confidence }));
          await yieldToEventLoop();
        }
      }
      grid = concatGrids(parts);
    }
    return { frame, reference, references, runs, records, similarity, embedder, grid, variableIndex };
  }
}
