import { createHash } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { In } from 'typeorm';
import { TimeSlices, yieldToEventLoop } from '../../event-loop';
import { interRaterAgreement } from '../../analytics/agreement';
import { bootstrapStatistic, cohenKappa, fleissKappa, krippendorffAlpha, type Rating } from '../../analytics/chance-agreement';
import {
  bootstrapMultiplicities,
  estimateFrom,
  type BootstrapGridResult,
  type Estimate as AnalyticsEstimate,
  type GridRun,
  type GridVariable,
  type MultiplicityMatrix,
} from '../../analytics/bootstrap';
import type { Embedder, EmbedderId, SimilarityLookup } from '../../analytics/embedding/embedder';
import { similarityFromEmbeddings } from '../../analytics/embedding/embedder';
import { lexicalEmbedderId, lexicalSimilarity } from '../../analytics/embedding/lexical';
import { codeCells, decodeCells, gridItemScores, gridVariable, RunItemScorer } from '../../analytics/grid-input';
import { groupSummary, sizeClass } from '../../analytics/groups';
import { itemScores, perReportScores, scoreVariable } from '../../analytics/metrics';
import { cellOf, type RecordCell } from '../../analytics/normalise';
import { partitionVariance } from '../../analytics/mixed-model';
import type { NormalisedCell } from '../../analytics/types';
import { INVALID_CATEGORIES } from '../../analytics/types';
import { bestRunPerModel } from '../../analytics/rank-intervals';
import { badInput, notFound } from '../../graphql/errors';
import { LlmError } from '../../llm/llm-error';
import { decodeId } from '../../graphql/node';
import { Role } from '../api-key/api-key.entity';
import { requireRole, type Principal } from '../api-key/principal';
import { MAX_ANNOTATORS_PER_DATASET } from '../annotation/annotation.service';
import { AnnotatorKind, type Annotator } from '../annotation/annotator.entity';
import { InvalidCategory } from '../annotation/annotation.entity';
import { Dataset } from '../dataset/dataset.entity';
import { Model } from '../endpoint/model.entity';
import { PromptStrategy, Run, RunStatus } from '../run/run.entity';
import { UseCase } from '../use-case/use-case.entity';
import { AnalyticsCache } from './analytics-cache';
import { gridPairedDifference } from '../../analytics/bootstrap';
import { accuracyContrast, type ContrastEstimate as AnalyticsContrastEstimate } from '../../analytics/contrasts';
import { primaryMetric as primaryMetricOf } from '../../analytics/metrics';
import { benjaminiHochberg } from '../../analytics/multiple-testing';
import { pooledRatio, type PooledPart } from '../../analytics/pooled';
import { AlphaLevel, type AnnotatorPairKappa, type ChanceCorrectedAgreement, type VariableChanceAgreement } from './comparison.types';
import type {
  ContrastEstimate as ContrastEstimateType,
  ContrastTable,
  Difference,
  RunComparison,
  RunGroupingInput,
  RunSelector,
  StrategyEffectTable,
  StratifiedResult,
  StratumInput,
} from './comparison.types';
import { checkSizeBinEdges, checkStratum, groupLabel, selects, stratumLabeller, unitObservations } from './observations';
import { replicatedEstimate, strategyEffectRows, type EffectUnit } from './strategy-effects';
import { concatGrids, jsonDigestInSlices } from './chunked';
import { InlineStatistics, runsPerSliceOf, type StatisticsEngine } from './statistics-engine';
import { DEFAULT_RUN_CACHE_BYTES, RunItemCache, itemColumn, validColumn, type RunItems } from './run-item-cache';
import {
  loadAnnotatorColumns,
  loadAnnotatorRecords,
  loadFrame,
  loadReportMetadata,
  loadRunSnapshot,
  storeRunColumns,
  type DatasetFrame,
  type RecordRow,
  type RunCells,
  type RunFingerprint,
} from './scoring-data';
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
/** The MISSING value as a nominal rating (a category of its own, docs/scoring.md §1). */
const MISSING_RATING = '\u2205MISSING';
/** Scoring of prediction cells pauses for other requests about this often (ms). */
const SCORING_SLICE_MS = 20;

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

function toDifference(e: AnalyticsEstimate, pValue: number, qValue: number, resamples: number): Difference {
  const interval = resamples > 0 && Number.isFinite(e.ciLow) && Number.isFinite(e.ciHigh);
  return {
    value: e.value,
    ciLow: interval ? e.ciLow : null,
    ciHigh: interval ? e.ciHigh : null,
    confidence: interval ? e.confidence : null,
    resamples: interval ? e.resamples : null,
    pValue: resamples > 0 && Number.isFinite(pValue) ? pValue : null,
    qValue: resamples > 0 && Number.isFinite(qValue) ? qValue : null,
  };
}

const finiteOrNull = (x: number): number | null => (Number.isFinite(x) ? x : null);

function contrastEstimate(c: AnalyticsContrastEstimate, estimable: boolean, qValue: number | null): ContrastEstimateType {
  return {
    difference: c.difference,
    standardError: estimable ? finiteOrNull(c.standardError) : null,
    ciLow: estimable ? finiteOrNull(c.ciLower) : null,
    ciHigh: estimable ? finiteOrNull(c.ciUpper) : null,
    pValue: estimable ? finiteOrNull(c.pValue) : null,
    qValue: qValue === null ? null : finiteOrNull(qValue),
    meanA: finiteOrNull(c.meanA),
    meanB: finiteOrNull(c.meanB),
    nA: c.nA,
    nB: c.nB,
    clusters: c.clusters,
    estimable,
  };
}

function emptyContrast(): ContrastEstimateType {
  return { difference: Number.NaN, standardError: null, ciLow: null, ciHigh: null, pValue: null, qValue: null, meanA: null, meanB: null, nA: 0, nB: 0, clusters: 0, estimable: false };
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
export interface DatasetGrid {
  frame: DatasetFrame;
  reference: Annotator;
  references: RecordRow[];
  /** The reference cells of each grid variable (variableIndex order), in report order. */
  referenceCells: (RecordCell | undefined)[][];
  runs: Run[];
  /** Each run's cells by variable key, in report order (see RunCells). */
  cells: RunCells[];
  similarity: SimilarityLookup;
  embedder: EmbedderId;
  /** Effective or conditional grid, per the options; null without runs or variables, or when not asked for. */
  grid: BootstrapGridResult | null;
  /** Index of each grid variable in frame.variables (variables without any reference are left out). */
  variableIndex: number[];
}

export class ScoringService {
  private readonly cache: AnalyticsCache;

  /** Item scores per run by content key, shared by every computation of this process. */
  readonly runItems: RunItemCache;

  /** Where the bootstrap grids, consensus orders and rank intervals are computed. */
  private readonly statistics: StatisticsEngine;

  /** Runs per slice of the grid (and per read of predictions); by default from the number of reports. */
  private readonly runsPerSlice: ((reports: number) => number) | undefined;

  /** Runs whose cell columns are being stored after a read grouped them, and the chain of those stores. */
  private readonly storing = new Set<string>();
  private stores: Promise<void> = Promise.resolve();
  private readonly onStoreError: (error: unknown) => void;
  private closing = false;

  constructor(
    private readonly dataSource: DataSource,
    private embedderResolver: EmbedderResolver | null = null,
    options: { runCacheBytes?: number; runsPerSlice?: number; statistics?: StatisticsEngine; onStoreError?: (error: unknown) => void } = {},
  ) {
    this.cache = new AnalyticsCache(dataSource);
    this.statistics = options.statistics ?? new InlineStatistics();
    this.runsPerSlice = options.runsPerSlice === undefined ? undefined : () => options.runsPerSlice!;
    this.runItems = new RunItemCache(options.runCacheBytes ?? DEFAULT_RUN_CACHE_BYTES);
    this.onStoreError = options.onStoreError ?? (() => undefined);
  }

  /**
   * Stores the cell columns of finished runs that a read found not stored at their version
   * (runs executed, renormalised, or written before stored columns existed), once the read is
   * done and one run at a time, so that the next cold read of them reads them stored. One run:
   * a store brings the run's grouped cells into the server to encode them, a row per distinct
   * cell and variable (320,000 for a 20,000-report run of 16 free-text variables), as much as
   * reading the run grouped holds at once, and no more.
   * A run still executing is left: its next prediction would make them stale at once. A store
   * that fails (the run deleted meanwhile, the database gone) only means the next read groups
   * again. Nothing new is begun once the service is closing.
   */
  private storeColumnsLater(runs: readonly Run[], unstored: readonly string[]): void {
    if (this.closing) return;
    const finished = new Set(runs.filter((r) => r.status !== RunStatus.QUEUED && r.status !== RunStatus.RUNNING).map((r) => r.id));
    const ids = unstored.filter((id) => finished.has(id) && !this.storing.has(id));
    for (const id of ids) {
      this.storing.add(id);
      this.stores = this.stores
        .then(() => this.dataSource.transaction((manager) => storeRunColumns(manager, [id])))
        .catch((error: unknown) => {
          try {
            this.onStoreError(error);
          } catch {
            // A reporter that throws must not break the chain of stores.
          }
        })
        .finally(() => this.storing.delete(id));
    }
  }

  /** Resolves once every store begun by a read so far has ended (stored or failed). */
  async columnStoresSettled(): Promise<void> {
    await this.stores;
  }

  /**
   * The statistics cache of this process: `revisions.currentRevision(projectId)` tells,
   * without a query, a project's current revision token (see AnalyticsCache).
   */
  get revisions(): AnalyticsCache {
    return this.cache;
  }

  /** Stops listening for revisions and ends the statistics threads. */
  async close(): Promise<void> {
    this.closing = true;
    try {
      await this.columnStoresSettled();
      await this.cache.close();
    } finally {
      await this.statistics.close();
    }
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
    const cells = g.cells[r]!;
    const variables: VariableScore[] = [];
    const invalidTotals: Record<string, number> = {};
    let validTotal = 0;
    let nTotal = 0;
    g.variableIndex.forEach((vi, column) => {
      const spec = g.frame.specs[vi]!;
      const refs = g.referenceCells[column]!;
      const preds = cells.get(spec.key)! as readonly (NormalisedCell | undefined)[];
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
      const g = await this.rankingGrid(principal, datasetId, runs, options);
      if (!g.grid) throw badInput('No variable has a reference value in this dataset, so there is nothing to rank by');
      return this.rankDatasetGrid(g, level, options);
    });
  }

  private async rankDatasetGrid(g: Pick<DatasetGrid, 'grid' | 'runs' | 'variableIndex'>, level: RankingLevel, options: ResolvedStatsOptions): Promise<Ranking> {
    const grid = g.grid!;
    const R = g.runs.length;
    const V = g.variableIndex.length;
    const voterScores = Array.from({ length: V }, (_, v) => Float64Array.from({ length: R }, (_, r) => grid.points[r * V + v]!));
    const names = g.runs.map((r) => `${r.name}\u0000${r.id}`);
    const runRanking = await this.statistics.kemeny(voterScores, { macro: grid.macroPoints, names });
    let candidates = g.runs.map((_, r) => r);
    let ranking = runRanking;
    if (level === RankingLevel.MODEL) {
      const best = bestRunPerModel(runRanking.order, g.runs.map((r) => r.modelId ?? `run:${r.id}`));
      candidates = best.map((b) => b.run);
      ranking = await this.statistics.kemeny(
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
    let data = grid.replicates;
    let macro = grid.macroReplicates;
    if (candidates.some((r, k) => r !== k) || candidates.length !== grid.runIds.length) {
      data = this.statistics.float64(K * V * B);
      macro = this.statistics.float64(K * B);
      candidates.forEach((r, k) => {
        data.set(grid.replicates.subarray(r * V * B, (r + 1) * V * B), k * V * B);
        macro.set(grid.macroReplicates.subarray(r * B, (r + 1) * B), k * B);
      });
    }
    const intervals = await this.statistics.rankIntervals(
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
      const ranking = await this.statistics.kemeny(voterRows, { macro: macroPoints, names });
      let intervals: Record<number, { lower: number; upper: number }> | null = null;
      if (B > 0 && K > 1) {
        const VV = voterRows.length;
        const data = this.statistics.float64(K * VV * B);
        voterReplicates.forEach((reps, v) => {
          for (let k = 0; k < K; k++) for (let b = 0; b < B; b++) data[(k * VV + v) * B + b] = reps[k * B + b]!;
        });
        const macroData = this.statistics.float64(K * B);
        for (let i = 0; i < K * B; i++) macroData[i] = macroRepCount[i]! > 0 ? macroReps[i]! / macroRepCount[i]! : Number.NaN;
        const result = await this.statistics.rankIntervals(
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
    // A reference named by the caller must be an annotator of one of these use cases; where a
    // use case's dataset does not have it, that dataset's own reference stands in.
    if (options.referenceAnnotatorId !== null) {
      const known = (await this.dataSource.query(
        'SELECT 1 FROM annotators a JOIN datasets d ON d.id = a.dataset_id WHERE a.id = $1 AND d.use_case_id = ANY($2::uuid[]) LIMIT 1',
        [options.referenceAnnotatorId, useCases.map((u) => u.id)],
      )) as unknown[];
      if (known.length === 0) throw notFound('Annotator');
    }
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
          const order = (await this.statistics.kemeny(voterScores, { macro: grid.macroPoints, names: runs.map((r) => `${r.name}\u0000${r.id}`) })).order;
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

  /** Cohen's κ per pair, Fleiss' κ and Krippendorff's α per variable, bootstrapped over reports. */
  async chanceCorrectedAgreement(principal: Principal, dataset: Dataset, annotatorIds: string[] | null, options: ResolvedStatsOptions): Promise<ChanceCorrectedAgreement> {
    requireRole(principal, dataset.projectId, Role.VIEWER, 'Dataset');
    return this.cache.getOrCompute(dataset.projectId, 'chanceAgreement', { dataset: dataset.id, annotatorIds, options }, async () => {
      const frame = await loadFrame(this.dataSource, dataset.id);
      const chosen = this.agreementAnnotators(frame, annotatorIds);
      if (chosen.length < 2 || frame.reportIds.length === 0) return { annotators: chosen, variables: [] };
      const records = await Promise.all(chosen.map((a) => loadAnnotatorRecords(this.dataSource, frame, a.id)));
      const n = frame.reportIds.length;
      const W = options.resamples > 0 ? bootstrapMultiplicities(n, options.resamples, options.seed) : null;
      const estimate = (statistic: (w: ArrayLike<number> | null) => number): Estimate | null =>
        W ? toEstimate(bootstrapStatistic(statistic, W, n, options.confidence), options.resamples) : pointEstimate(statistic(null));
      const variables: VariableChanceAgreement[] = [];
      frame.specs.forEach((spec, vi) => {
        if (spec.type === 'FREE_TEXT' || spec.type === 'LIST') return;
        const interval = spec.type === 'NUMERIC';
        const cellRating = (a: number, i: number, forInterval: boolean): Rating => {
          const cell = cellOf(records[a]![i], spec.key);
          if (!cell || cell.status === 'INVALID') return null;
          if (cell.status === 'MISSING') return forInterval ? null : MISSING_RATING;
          const v = cell.value;
          return typeof v === 'number' || typeof v === 'string' ? v : JSON.stringify(v);
        };
        const nominalRatings = chosen.map((_, a) => Array.from({ length: n }, (_, i) => cellRating(a, i, false)));
        const alphaUnits = Array.from({ length: n }, (_, i) => chosen.map((_, a) => cellRating(a, i, interval)));
        if (!nominalRatings.some((r) => r.some((x) => x !== null))) return;
        const complete = Array.from({ length: n }, (_, i) => i).filter((i) => nominalRatings.every((r) => r[i] !== null));
        const fleissRows = complete.map((i) => nominalRatings.map((r) => r[i]!));
        const pairs: AnnotatorPairKappa[] = [];
        for (let a = 0; a < chosen.length; a++) {
          for (let b = a + 1; b < chosen.length; b++) {
            const shared = nominalRatings[a]!.filter((x, i) => x !== null && nominalRatings[b]![i] !== null).length;
            pairs.push({ a: chosen[a]!, b: chosen[b]!, n: shared, kappa: shared === 0 ? null : estimate((w) => cohenKappa(nominalRatings[a]!, nominalRatings[b]!, w)) });
          }
        }
        variables.push({
          variable: frame.variables[vi]!,
          alphaLevel: interval ? AlphaLevel.INTERVAL : AlphaLevel.NOMINAL,
          krippendorffAlpha: estimate((w) => krippendorffAlpha(alphaUnits, interval ? 'INTERVAL' : 'NOMINAL', w)),
          fleissKappa: fleissRows.length === 0 ? null : estimate((w) => fleissKappa(fleissRows, w ? complete.map((i) => w[i]!) : null)),
          fleissReports: fleissRows.length,
          pairs,
        });
      });
      return { annotators: chosen, variables };
    });
  }

  private agreementAnnotators(frame: DatasetFrame, annotatorIds: string[] | null): Annotator[] {
    if (annotatorIds) {
      // Each pair of annotators is compared on every resample: the list is a set of the dataset's annotators.
      if (annotatorIds.length > MAX_ANNOTATORS_PER_DATASET) {
        throw badInput(`annotatorIds: at most ${MAX_ANNOTATORS_PER_DATASET} annotators, as many as a dataset can have`, { field: 'annotatorIds' });
      }
      if (new Set(annotatorIds).size !== annotatorIds.length) throw badInput('annotatorIds: an annotator is named twice', { field: 'annotatorIds' });
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
        const items = g.variableIndex.map((vi, column) => {
          const spec = g.frame.specs[vi]!;
          return itemScores(
            spec,
            g.referenceCells[column]!,
            g.cells[r]!.get(spec.key)! as readonly (NormalisedCell | undefined)[],
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
      // Crossed random intercepts for model and for strategy (docs/scoring.md §8): each needs two levels.
      const models = new Set(model).size;
      const strategies = new Set(strategy).size;
      if (models < 2 || strategies < 2) {
        throw badInput(
          `Variance partitioning needs scored runs of at least two models and at least two prompting strategies on this dataset; it has ${models} model${models === 1 ? '' : 's'} and ${strategies} strateg${strategies === 1 ? 'y' : 'ies'}`,
        );
      }
      if (y.length < 3) throw badInput(`Variance partitioning needs at least three per-report scores on this dataset; it has ${y.length}`);
      if (y.every((value) => value === y[0])) throw badInput('Every per-report score on this dataset is the same, so there is no variance to partition');
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

  // ---------------------------------------------------------------- paired comparisons

  /** Run minus baseline on the dataset's shared resamples (docs/scoring.md §5 paired difference). */
  async runComparison(principal: Principal, run: Run, baselineRunId: string, options: ResolvedStatsOptions): Promise<RunComparison> {
    requireRole(principal, run.projectId, Role.VIEWER, 'Run');
    const baseline = await this.dataSource.getRepository(Run).findOneBy({ id: baselineRunId });
    if (!baseline || baseline.projectId !== run.projectId) throw notFound('Run');
    if (!run.datasetId || run.datasetId !== baseline.datasetId) {
      throw badInput('A paired comparison needs two runs over the same dataset', { field: 'baselineRunId' });
    }
    await this.authorise(principal, options);
    return this.cache.getOrCompute(run.projectId, 'comparison', { run: run.id, baseline: baseline.id, options }, async () => {
      const g = await this.datasetGrid(principal, run.datasetId!, [run, baseline], options);
      if (!g.grid) throw badInput('No variable has a reference value in this dataset, so there is nothing to compare');
      const grid = g.grid;
      const perVariable = g.variableIndex.map((vi, v) => ({ vi, v, d: gridPairedDifference(grid, 0, 1, v) }));
      const q = benjaminiHochberg(perVariable.map((x) => (options.resamples > 0 ? x.d.pValue : Number.NaN)));
      const macroA = toEstimate(grid.macro[0]!, options.resamples);
      const macroB = toEstimate(grid.macro[1]!, options.resamples);
      if (!macroA || !macroB) throw badInput('One of the runs has no score on this dataset');
      return {
        run,
        baseline,
        runMacroAverage: macroA,
        baselineMacroAverage: macroB,
        macroAverage: toDifference(gridPairedDifference(grid, 0, 1).estimate, gridPairedDifference(grid, 0, 1).pValue, Number.NaN, options.resamples),
        variables: perVariable
          .filter((x) => Number.isFinite(x.d.estimate.value))
          .map((x) => ({
            variable: g.frame.variables[x.vi]!,
            metric: primaryMetricOf(g.frame.specs[x.vi]!.type) as Metric,
            difference: toDifference(x.d.estimate, x.d.pValue, q[x.v]!, options.resamples),
          })),
      };
    });
  }

  /** The extraction paper's §3.2 table: strategies against a baseline strategy, per model and pooled. */
  async strategyEffects(principal: Principal, projectId: string, useCaseIds: string[], baseline: PromptStrategy, options: ResolvedStatsOptions): Promise<StrategyEffectTable> {
    requireRole(principal, projectId, Role.VIEWER, 'Project');
    const useCases = await this.useCasesOf(projectId, useCaseIds);
    await this.authorise(principal, options);
    return this.cache.getOrCompute(projectId, 'strategyEffects', { useCaseIds, baseline, options }, async () => {
      const units = await this.unitsOf(principal, useCases, RankingLevel.RUN, options);
      const effectUnits: EffectUnit[] = [];
      for (const { g } of units) effectUnits.push({ useCase: g.frame.useCase, runs: g.runs, grid: g.grid!, order: await this.runOrder(g) });
      const models = await this.modelsOf(units.flatMap((u) => u.g.runs));
      const nameOf = (key: string) => models.get(key)?.servedName ?? key;
      const { rows, topRanked } = strategyEffectRows(effectUnits, baseline, (a, b) => (nameOf(a) < nameOf(b) ? -1 : nameOf(a) > nameOf(b) ? 1 : a < b ? -1 : 1));
      const B = options.resamples;
      const estimate = (x: { value: number; replicates: Float64Array }) =>
        B === 0 ? pointEstimate(x.value) : toEstimate(replicatedEstimate(x, options.confidence), B);
      return {
        baseline,
        comparisons: rows.filter((r) => Number.isFinite(r.qValue)).length,
        topRanked: Object.values(PromptStrategy).map((strategy) => ({ strategy, count: topRanked.get(strategy) ?? 0 })),
        rows: rows
          .filter((r) => Number.isFinite(r.difference.value))
          .map((r) => ({
            model: r.modelKey ? (models.get(r.modelKey) ?? null) : null,
            useCase: r.useCase,
            strategy: r.strategy,
            best: r.best,
            bestStrategies: r.bestStrategies,
            run: r.run,
            baselineRun: r.baselineRun,
            memberCount: r.memberCount,
            value: estimate(r.value)!,
            baselineValue: estimate(r.baseline)!,
            difference: toDifference(replicatedEstimate(r.difference, options.confidence), r.pValue, r.qValue, B),
          })),
      };
    });
  }

  // ---------------------------------------------------------------- contrasts and strata

  /**
   * Group contrast (docs/scoring.md §8, RADS paper §2.12): linear probability models of the effective
   * item score and of validity on a group indicator, cluster-robust by report, overall (with
   * stratum fixed effects when stratified) and per stratum (interaction model), BH across strata.
   */
  async contrast(
    principal: Principal,
    projectId: string,
    useCaseIds: string[],
    groupA: RunSelector,
    groupB: RunSelector | null,
    stratifyBy: StratumInput | null,
    variableKeys: string[] | null,
    options: ResolvedStatsOptions,
  ): Promise<ContrastTable> {
    requireRole(principal, projectId, Role.VIEWER, 'Project');
    const useCases = await this.useCasesOf(projectId, useCaseIds);
    const stratum = checkStratum(stratifyBy);
    const idsA = await this.selectorModelIds(projectId, groupA, 'groupA');
    const idsB = groupB ? await this.selectorModelIds(projectId, groupB, 'groupB') : null;
    await this.authorise(principal, options);
    return this.cache.getOrCompute(projectId, 'contrast', { useCaseIds, groupA, groupB, stratifyBy, variableKeys, options }, async () => {
      const units = await this.unitsOf(principal, useCases, RankingLevel.RUN, { ...options, resamples: 0 });
      const models = await this.modelsOf(units.flatMap((u) => u.g.runs));
      const inA: Run[] = [];
      const inB: Run[] = [];
      const group: number[] = [];
      const effective: number[] = [];
      const effGroup: number[] = [];
      const effCluster: string[] = [];
      const effStratum: string[] = [];
      const validity: number[] = [];
      const cluster: string[] = [];
      const strata: string[] = [];
      for (const { g } of units) {
        const obs = unitObservations(g);
        const label = stratum ? stratumLabeller(stratum, g, await loadReportMetadata(this.dataSource, g.frame)) : null;
        const columns = g.variableIndex.map((vi, c) => ({ c, key: g.frame.specs[vi]!.key })).filter((x) => !variableKeys || variableKeys.includes(x.key));
        g.runs.forEach((run, r) => {
          const model = run.modelId ? models.get(run.modelId) : undefined;
          const a = selects(groupA, run, model, idsA);
          const b = groupB ? selects(groupB, run, model, idsB) : !a;
          if (a && b) throw badInput(`Run "${run.name}" is in both groups`, { field: 'groupB' });
          if (!a && !b) return;
          (a ? inA : inB).push(run);
          for (const { c } of columns) {
            const items = obs.items[r]![c]!;
            const valid = obs.valid[r]![c]!;
            for (let i = 0; i < items.length; i++) {
              if (Number.isNaN(items[i]!)) continue;
              const s = label ? label(c, i) : '';
              const reportId = g.frame.reportIds[i]!;
              group.push(a ? 1 : 0);
              validity.push(valid[i]!);
              cluster.push(reportId);
              strata.push(s);
              if (options.scoring === ScoringMode.CONDITIONAL && valid[i] === 0) continue;
              effGroup.push(a ? 1 : 0);
              effective.push(items[i]!);
              effCluster.push(reportId);
              effStratum.push(s);
            }
          }
        });
      }
      if (inA.length === 0) throw badInput('No scored run matches groupA', { field: 'groupA' });
      if (inB.length === 0) throw badInput('No scored run matches groupB', { field: 'groupB' });
      const fit = (g: number[], y: number[], c: string[], s: string[]) =>
        accuracyContrast({ group: g, outcome: y, cluster: c, stratum: stratum ? s : null }, { level: options.confidence });
      const eff = fit(effGroup, effective, effCluster, effStratum);
      const val = fit(group, validity, cluster, strata);
      const labels = [...new Set([...eff.strata.map((s) => String(s.stratum)), ...val.strata.map((s) => String(s.stratum))])];
      const byLabel = (list: typeof eff.strata, l: string) => list.find((s) => String(s.stratum) === l);
      return {
        groupA: inA,
        groupB: inB,
        overall: { stratum: null, effective: contrastEstimate(eff.overall, true, null), validity: contrastEstimate(val.overall, true, null) },
        strata: labels.map((l) => {
          const e = byLabel(eff.strata, l);
          const v = byLabel(val.strata, l);
          return {
            stratum: l,
            effective: e ? contrastEstimate(e, e.estimable, e.qValue) : emptyContrast(),
            validity: v ? contrastEstimate(v, v.estimable, v.qValue) : emptyContrast(),
          };
        }),
      };
    });
  }

  /** Pooled validity, effective and conditional item scores by run group and stratum, with report-bootstrap intervals. */
  async stratifiedResults(
    principal: Principal,
    projectId: string,
    useCaseIds: string[],
    groupBy: RunGroupingInput,
    stratifyBy: StratumInput | null,
    variableKeys: string[] | null,
    options: ResolvedStatsOptions,
  ): Promise<StratifiedResult[]> {
    requireRole(principal, projectId, Role.VIEWER, 'Project');
    const useCases = await this.useCasesOf(projectId, useCaseIds);
    const stratum = checkStratum(stratifyBy);
    const edges = checkSizeBinEdges(groupBy.by, groupBy.sizeBinEdges);
    await this.authorise(principal, options);
    return this.cache.getOrCompute(projectId, 'strata', { useCaseIds, groupBy, stratifyBy, variableKeys, options }, async () => {
      const units = await this.unitsOf(principal, useCases, RankingLevel.RUN, { ...options, scoring: ScoringMode.EFFECTIVE });
      const models = await this.modelsOf(units.flatMap((u) => u.g.runs));
      interface Cell {
        group: string;
        stratum: string | null;
        runs: Set<string>;
        parts: Map<number, { n: Float64Array; valid: Float64Array; sum: Float64Array }>;
        invalid: Record<string, number>;
      }
      const cells = new Map<string, Cell>();
      const cellOf = (group: string, s: string | null): Cell => {
        const key = JSON.stringify([group, s]);
        let cell = cells.get(key);
        if (!cell) cells.set(key, (cell = { group, stratum: s, runs: new Set(), parts: new Map(), invalid: {} }));
        return cell;
      };
      for (const [u, { g }] of units.entries()) {
        const obs = unitObservations(g);
        const label = stratum ? stratumLabeller(stratum, g, await loadReportMetadata(this.dataSource, g.frame)) : null;
        const n = g.frame.reportIds.length;
        const columns = g.variableIndex.map((vi, c) => ({ c, key: g.frame.specs[vi]!.key })).filter((x) => !variableKeys || variableKeys.includes(x.key));
        g.runs.forEach((run, r) => {
          const group = groupLabel(groupBy.by, edges, run, run.modelId ? models.get(run.modelId) : undefined);
          for (const { c } of columns) {
            const items = obs.items[r]![c]!;
            for (let i = 0; i < n; i++) {
              if (Number.isNaN(items[i]!)) continue;
              for (const s of label ? [null, label(c, i)] : [null]) {
                const cell = cellOf(group, s);
                cell.runs.add(run.id);
                let part = cell.parts.get(u);
                if (!part) cell.parts.set(u, (part = { n: new Float64Array(n), valid: new Float64Array(n), sum: new Float64Array(n) }));
                part.n[i]! += 1;
                part.valid[i]! += obs.valid[r]![c]![i]!;
                part.sum[i]! += items[i]!;
                const category = obs.category[r]![c]![i];
                if (category) cell.invalid[category] = (cell.invalid[category] ?? 0) + 1;
              }
            }
          }
        });
      }
      const B = options.resamples;
      const estimate = (parts: PooledPart[]) => {
        const result = pooledRatio(parts, options.confidence);
        return B === 0 ? pointEstimate(result.estimate.value) : toEstimate(result.estimate, B);
      };
      return [...cells.values()]
        .sort((a, b) => (a.group < b.group ? -1 : a.group > b.group ? 1 : a.stratum === null ? -1 : b.stratum === null ? 1 : a.stratum < b.stratum ? -1 : 1))
        .map((cell) => {
          const parts = [...cell.parts.entries()].map(([u, p]) => ({ u, p, W: units[u]!.g.grid!.multiplicities }));
          const predictions = parts.reduce((s, x) => s + x.p.n.reduce((a, b) => a + b, 0), 0);
          const valid = parts.reduce((s, x) => s + x.p.valid.reduce((a, b) => a + b, 0), 0);
          return {
            group: cell.group,
            stratum: cell.stratum,
            runCount: cell.runs.size,
            predictions,
            valid,
            validity: estimate(parts.map((x) => ({ numerator: x.p.valid, denominator: x.p.n, multiplicities: x.W })))!,
            effective: estimate(parts.map((x) => ({ numerator: x.p.sum, denominator: x.p.n, multiplicities: x.W })))!,
            conditional: valid === 0 ? null : estimate(parts.map((x) => ({ numerator: x.p.sum, denominator: x.p.valid, multiplicities: x.W }))),
            invalid: invalidCounts(cell.invalid),
          };
        });
    });
  }

  /** The models a selector names, each one of the project's (another project's answers like an unknown id). */
  private async selectorModelIds(projectId: string, selector: RunSelector, field: string): Promise<Set<string> | null> {
    if (!selector.modelIds) return null;
    const ids = new Set(selector.modelIds.map((id, i) => decodeId(id, 'Model', `${field}.modelIds[${i}]`)));
    const known = await this.dataSource.getRepository(Model).countBy({ id: In([...ids]), projectId });
    if (known !== ids.size) throw notFound('Model');
    return ids;
  }

  /** The run-level Kemeny–Young order of a dataset grid (the leaderboard's order). */
  private async runOrder(g: DatasetGrid): Promise<number[]> {
    const grid = g.grid!;
    const V = g.variableIndex.length;
    const voterScores = Array.from({ length: V }, (_, v) => Float64Array.from({ length: g.runs.length }, (_, r) => grid.points[r * V + v]!));
    return (await this.statistics.kemeny(voterScores, { macro: grid.macroPoints, names: g.runs.map((r) => `${r.name}\u0000${r.id}`) })).order;
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
    runCells: readonly RunCells[] = [],
  ): Promise<{ similarity: SimilarityLookup; embedder: EmbedderId }> {
    if (!options.embeddingModelId) return { similarity: lexicalSimilarity(), embedder: lexicalEmbedderId() };
    if (!this.embedderResolver) throw badInput('No embedding provider is available');
    const embedder = await this.embedderResolver(options.embeddingModelId, principal);
    const texts = new Set<string>();
    const textKeys = frame.specs.filter((s) => s.type === 'FREE_TEXT' || s.type === 'LIST').map((s) => s.key);
    const add = (cell: RecordCell | null | undefined) => {
      if (cell?.status !== 'VALUE') return;
      if (Array.isArray(cell.value)) for (const item of cell.value) texts.add(String(item));
      else texts.add(String(cell.value));
    };
    for (const records of recordSets) for (const record of records) for (const key of textKeys) add(cellOf(record, key));
    for (const cells of runCells) for (const key of textKeys) cells.get(key)?.forEach(add);
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
   * The bootstrap grid of `datasetGrid` (the same numbers for the same inputs and seed) from
   * item scores cached per run: a run's predictions are read and scored only when its content
   * key is not cached (its predictions, the reference values, the reports, the variables or the
   * options changed), so after one run lands only that run is read. Scores that need an
   * embedding model are computed as in `datasetGrid`.
   */
  private async rankingGrid(
    principal: Principal,
    datasetId: string,
    runs: Run[],
    options: ResolvedStatsOptions,
  ): Promise<Pick<DatasetGrid, 'grid' | 'runs' | 'variableIndex'>> {
    if (options.embeddingModelId) return this.datasetGrid(principal, datasetId, runs, options);
    const frame = await loadFrame(this.dataSource, datasetId);
    if (frame.reportIds.length === 0) throw badInput('The dataset has no reports');
    const n = frame.reportIds.length;
    // The resamples are drawn (on a statistics thread) while the reference is read and the grid variables built.
    const multiplicities = runs.length > 0 ? this.statistics.multiplicities(n, Math.max(options.resamples, 1), options.seed) : null;
    multiplicities?.catch(() => undefined);
    const reference = await this.referenceOf(frame, options);
    const references = await loadAnnotatorColumns(this.dataSource, frame, reference.id);
    const variableIndex = frame.specs.map((_, i) => i).filter((i) => references.get(frame.specs[i]!.key)!.some((cell) => cell !== undefined));
    const specs = variableIndex.map((i) => frame.specs[i]!);
    if (runs.length === 0 || specs.length === 0) return { runs, grid: null, variableIndex };
    const referenceCells = specs.map((spec) => references.get(spec.key)!);
    const codedReferences = referenceCells.map(codeCells);
    const context = await jsonDigestInSlices({ reports: frame.reportIds, specs, reference: reference.id, collapsed: options.collapsed }, referenceCells);
    const keyOf = (runId: string, f: RunFingerprint) => `${runId}:${f.rows}:${f.version}:${context}`;
    const found = new Map<string, RunItems>();
    const fingerprints = new Map<string, RunFingerprint>();
    const similarity = lexicalSimilarity();
    // Equal cells of different runs are scored against each reference cell once.
    const scorers = specs.map((spec, v) => new RunItemScorer(spec, codedReferences[v]!, { similarity, collapsed: options.collapsed }));
    // A variable at a time, pausing between: 20,000 reports × 16 variables of reference values.
    const gridVariables: GridVariable[] = [];
    for (const [v, spec] of specs.entries()) {
      gridVariables.push(gridVariable(spec, referenceCells[v]!, { collapsed: options.collapsed }));
      await yieldToEventLoop();
    }
    const runsPerSlice = this.readSliceRuns(n);
    const grids = new GridJobs(this.statistics, await multiplicities!, options.confidence);
    // Each slice of runs is bootstrapped as soon as all its runs are scored (cached or read), on
    // the statistics threads while the next runs are read; runs are read runsPerSlice at a time,
    // and grid slices on threads hold several of those.
    const gridSlice = this.gridSliceRuns(grids, n, runs.length);
    let sliced = 0;
    const bootstrapScoredSlices = async () => {
      while (sliced < runs.length) {
        const slice = runs.slice(sliced, sliced + gridSlice);
        if (!slice.every((r) => found.has(r.id))) return;
        sliced += slice.length;
        const gridRuns = slice.map((r) => {
          const items = found.get(r.id)!;
          return { id: r.id, items: specs.map((_, v) => itemColumn(items, v)) };
        });
        await grids.addSlice(gridVariables, gridRuns, options.scoring === ScoringMode.CONDITIONAL, (i, column) => {
          const valid = validColumn(found.get(slice[i]!.id)!, column);
          return (report) => valid[report] !== 0;
        });
      }
    };
    // The runs not cached are read (as columns of shared cells) and turned into item scores a
    // slice at a time: only one slice's prediction cells are alive at once.
    const snapshot = await loadRunSnapshot(
      this.dataSource,
      frame,
      runs.map((r) => r.id),
      specs.map((spec) => spec.key),
      (runId, fingerprint) => {
        fingerprints.set(runId, fingerprint);
        const hit = this.runItems.get(keyOf(runId, fingerprint));
        if (hit) found.set(runId, hit);
        return !hit;
      },
      async (columns) => {
        // A variable of a run at a time, with a turn of the event loop every SCORING_SLICE_MS:
        // one run at 20,000 reports is 320,000 cells to score.
        const slices = new TimeSlices(SCORING_SLICE_MS);
        for (const [runId, runColumns] of columns) {
          // In memory the statistics threads read without a copy, as long as the run is cached.
          const items: RunItems = { scores: this.statistics.float64(specs.length * n), valid: new Uint8Array(specs.length * n), reports: n };
          for (const [v, spec] of specs.entries()) {
            const column = runColumns.get(spec.key)!;
            scorers[v]!.scoresInto(column, itemColumn(items, v));
            const validCode = Uint8Array.from(column.cells, (cell) => (isValidCell(cell) ? 1 : 0));
            const { codes } = column;
            const valid = validColumn(items, v);
            for (let report = 0; report < n; report++) {
              const code = codes[report]!;
              valid[report] = code < 0 ? 0 : validCode[code]!;
            }
            await slices.pause();
          }
          found.set(runId, items);
          this.runItems.set(keyOf(runId, fingerprints.get(runId)!), items);
        }
        columns.clear();
        await bootstrapScoredSlices();
        await yieldToEventLoop();
      },
      runsPerSlice,
    );
    this.runItems.stats.predictionRowsRead += snapshot.rowsRead;
    this.storeColumnsLater(runs, snapshot.unstored);
    // The slices of cached runs after the last one read (or all of them, when none was read).
    await bootstrapScoredSlices();
    return { runs, grid: await grids.all(), variableIndex };
  }

  /**
   * The runs' cells of every variable (RunCells), read as columns (loadRunSnapshot: the stored
   * ones as stored, the others grouped from their predictions, and stored afterwards), a read
   * slice of runs at a time.
   */
  private async runCells(frame: DatasetFrame, runs: readonly Run[]): Promise<RunCells[]> {
    const byRun = new Map<string, RunCells>();
    const snapshot = await loadRunSnapshot(
      this.dataSource,
      frame,
      runs.map((r) => r.id),
      frame.specs.map((spec) => spec.key),
      () => true,
      async (columns) => {
        for (const [runId, runColumns] of columns) {
          byRun.set(runId, new Map([...runColumns].map(([key, column]) => [key, decodeCells(column)])));
        }
        columns.clear();
        await yieldToEventLoop();
      },
      this.readSliceRuns(frame.reportIds.length),
    );
    this.runItems.stats.predictionRowsRead += snapshot.rowsRead;
    this.storeColumnsLater(runs, snapshot.unstored);
    return runs.map((r) => byRun.get(r.id)!);
  }

  /** Runs read (and scored on the request thread) at a time at `reports` reports. */
  private readSliceRuns(reports: number): number {
    return (this.runsPerSlice ?? runsPerSliceOf)(reports);
  }

  /**
   * Runs per grid slice of a computation over `runs` runs of `reports` reports: the runs read at
   * a time, more on statistics threads (GridJobs.sliceRuns); exactly `runsPerSlice` where the
   * service was given it.
   */
  private gridSliceRuns(grids: GridJobs, reports: number, runs: number): number {
    const minimum = this.readSliceRuns(reports);
    return this.runsPerSlice ? minimum : grids.sliceRuns(minimum, runs);
  }

  /**
   * Loads the dataset, its reference and the runs' predictions, and bootstraps them on the
   * dataset's shared resamples (paired across runs). CONDITIONAL scoring bootstraps each run on
   * its valid predictions only. Without `bootstrap` the grid is left out (null): for callers
   * that read the cells only.
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
    const cells = await this.runCells(frame, runs);
    const { similarity, embedder } = await this.similarityFor(principal, frame, [references], options, cells);
    const variableIndex = frame.specs.map((_, i) => i).filter((i) => references.some((r) => cellOf(r, frame.specs[i]!.key) !== undefined));
    const specs = variableIndex.map((i) => frame.specs[i]!);
    const inputOptions = { similarity, collapsed: options.collapsed };
    // A variable at a time, pausing between: 20,000 reports × 16 variables of reference values.
    const referenceCells: (RecordCell | undefined)[][] = [];
    const gridVariables: GridVariable[] = [];
    for (const spec of specs) {
      const column = references.map((record) => cellOf(record, spec.key));
      referenceCells.push(column);
      if (bootstrap) gridVariables.push(gridVariable(spec, column, inputOptions));
      await yieldToEventLoop();
    }
    let grid: BootstrapGridResult | null = null;
    if (bootstrap && runs.length > 0 && specs.length > 0) {
      const B = Math.max(options.resamples, 1);
      const n = frame.reportIds.length;
      const grids = new GridJobs(this.statistics, await this.statistics.multiplicities(n, B, options.seed), options.confidence);
      const conditional = options.scoring === ScoringMode.CONDITIONAL;
      const gridSlice = this.gridSliceRuns(grids, n, runs.length);
      // A run's item scores a variable at a time, with a turn of the event loop every
      // SCORING_SLICE_MS, and a grid slice handed to the engine as soon as its runs are scored.
      const slices = new TimeSlices(SCORING_SLICE_MS);
      let sliceStart = 0;
      let scored: GridRun[] = [];
      for (const [r, run] of runs.entries()) {
        const items: Float64Array[] = [];
        for (const [v, spec] of specs.entries()) {
          items.push(gridItemScores(spec, referenceCells[v]!, cells[r]!.get(spec.key)!, inputOptions));
          await slices.pause();
        }
        scored.push({ id: run.id, items });
        if (scored.length < gridSlice && r < runs.length - 1) continue;
        const start = sliceStart;
        await grids.addSlice(gridVariables, scored, conditional, (i, column) => {
          const runColumn = cells[start + i]!.get(gridVariables[column]!.key)!;
          return (report) => isValidCell(runColumn[report]);
        });
        sliceStart = r + 1;
        scored = [];
      }
      grid = await grids.all();
    }
    return { frame, reference, references, referenceCells, runs, cells, similarity, embedder, grid, variableIndex };
  }
}

/** A prediction cell that conditional scoring keeps: present and not INVALID. */
function isValidCell(cell: { status: string } | null | undefined): boolean {
  return cell !== undefined && cell !== null && cell.status !== 'INVALID';
}

/**
 * The grids of a computation's slices of runs on one set of resamples, computed by the
 * statistics engine while the next slices are prepared: at most `parallelism` at once, so that
 * a slice's inputs are not all built before the first grid starts. `all` puts them together in
 * the order they were added.
 */
class GridJobs {
  private readonly grids: Promise<BootstrapGridResult>[] = [];
  private readonly computing = new Set<Promise<void>>();
  private readonly parallelism: number;
  /** The first grid that failed: nothing more is started after it. */
  private failure: unknown = null;

  constructor(
    private readonly engine: StatisticsEngine,
    private readonly multiplicities: MultiplicityMatrix,
    private readonly confidence: number,
  ) {
    this.parallelism = engine.gridParallelism(multiplicities.length);
  }

  /**
   * One slice: all its runs in one grid, or (conditional scoring) each run on its own grid
   * whose variables keep only the reports where `validOf(run, variable)` holds.
   */
  async addSlice(
    variables: readonly GridVariable[],
    runs: readonly GridRun[],
    conditional: boolean,
    validOf: (run: number, variable: number) => (report: number) => boolean,
  ): Promise<void> {
    if (!conditional) {
      await this.add(variables, runs);
      return;
    }
    for (const [i, run] of runs.entries()) {
      const kept = variables.map((v, column) => {
        const valid = validOf(i, column);
        return { ...v, groups: Int32Array.from(v.groups as ArrayLike<number>, (g, report) => (valid(report) ? g : -1)) };
      });
      await this.add(kept, [run]);
    }
  }

  /** Runs per slice for a computation over `runs` runs, at least `minimum`. */
  sliceRuns(minimum: number, runs: number): number {
    return this.engine.gridSliceRuns(minimum, runs, this.multiplicities.length);
  }

  all(): Promise<BootstrapGridResult> {
    return Promise.all(this.grids).then((grids) => concatGrids(grids, (length) => this.engine.float64(length)));
  }

  private async add(variables: readonly GridVariable[], runs: readonly GridRun[]): Promise<void> {
    while (this.computing.size >= this.parallelism) await Promise.race(this.computing);
    if (this.failure !== null) throw this.failure;
    const grid = this.engine.grid(variables, runs, this.multiplicities, this.confidence);
    this.grids.push(grid);
    // Handled here (so no rejection goes unhandled) and remembered; `all` reports it too. Not
    // `finally`, which would hand the rejection on to a promise nobody awaits.
    const settled: Promise<void> = grid.then(
      () => void this.computing.delete(settled),
      (error: unknown) => {
        this.failure ??= error;
        this.computing.delete(settled);
      },
    );
    this.computing.add(settled);
  }
}
