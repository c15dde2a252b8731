import type { DataSource } from 'typeorm';
import { TimeSlices, yieldToEventLoop } from '../../event-loop';
import type { BootstrapGridResult, GridRun, GridVariable } from '../../analytics/bootstrap';
import type { EmbedderId, SimilarityLookup } from '../../analytics/embedding/embedder';
import { lexicalSimilarity } from '../../analytics/embedding/lexical';
import { codeCells, decodeCells, gridItemScores, gridVariable, RunItemScorer } from '../../analytics/grid-input';
import { cellOf, type RecordCell } from '../../analytics/normalise';
import { bestRunPerModel } from '../../analytics/rank-intervals';
import { badInput, notFound } from '../../domain/errors';
import type { Principal } from '../api-key/principal';
import type { Annotator } from '../annotation/annotator.entity';
import { Dataset } from '../dataset/dataset.entity';
import { Run, RunStatus } from '../run/run.entity';
import type { UseCase } from '../use-case/use-case.entity';
import { AnalyticsCache } from './analytics-cache';
import { jsonDigestInSlices } from './chunked';
import { EmbeddingSimilarity, type EmbedderResolver } from './embedding-similarity';
import { GridJobs, isValidCell } from './grid-jobs';
import { DEFAULT_RUN_CACHE_BYTES, RunItemCache, itemColumn, validColumn, type RunItems } from './run-item-cache';
import {
  loadAnnotatorColumns,
  loadAnnotatorRecords,
  loadFrame,
  loadRunSnapshot,
  loadScoredRuns,
  referenceOf,
  storeRunColumns,
  type DatasetFrame,
  type RecordRow,
  type RunCells,
  type RunFingerprint,
} from './scoring-data';
import { InlineStatistics, runsPerSliceOf, type StatisticsEngine } from './statistics-engine';
import { resolveStatsOptions, type ResolvedStatsOptions } from './stats-options';
import { RankingLevel, ScoringMode, type StatsOptions } from './stats.types';

/** Scoring of prediction cells pauses for other requests about this often (ms). */
const SCORING_SLICE_MS = 20;

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

/** The dataset a use case speaks through, with its grid, and the runs standing for its candidates. */
export interface UseCaseGrid {
  g: DatasetGrid;
  selected: number[];
}

export interface ScoringGridsOptions {
  runCacheBytes?: number;
  /** Runs per read and per grid slice; by default from the number of reports (runsPerSliceOf). */
  runsPerSlice?: number;
  statistics?: StatisticsEngine;
  /** Where failures to store a run's cell columns after a read are reported. */
  onStoreError?: (error: unknown) => void;
}

/**
 * The data and grid layer every scoring question is answered over: the dataset frames and
 * reference standards, the runs' cells and their item scores (cached per run), the bootstrap
 * grids on a dataset's shared resamples, the statistics engine that computes them, and the
 * cache of finished answers by project revision. The question services hold no state of their
 * own: one of each per process shares this layer.
 */
export class ScoringGrids {
  private readonly cache: AnalyticsCache;

  /** Item scores per run by content key, shared by every computation of this process. */
  readonly runItems: RunItemCache;

  /** Where the bootstrap grids, consensus orders and rank intervals are computed. */
  readonly statistics: StatisticsEngine;

  readonly embeddings: EmbeddingSimilarity;

  /** Runs per slice of the grid (and per read of predictions); by default from the number of reports. */
  private readonly runsPerSlice: ((reports: number) => number) | undefined;

  /** Runs whose cell columns are being stored after a read grouped them, and the chain of those stores. */
  private readonly storing = new Set<string>();
  private stores: Promise<void> = Promise.resolve();
  private readonly onStoreError: (error: unknown) => void;
  private closing = false;

  constructor(
    readonly dataSource: DataSource,
    embedderResolver: EmbedderResolver | null = null,
    options: ScoringGridsOptions = {},
  ) {
    this.cache = new AnalyticsCache(dataSource);
    this.statistics = options.statistics ?? new InlineStatistics();
    this.runsPerSlice = options.runsPerSlice === undefined ? undefined : () => options.runsPerSlice!;
    this.runItems = new RunItemCache(options.runCacheBytes ?? DEFAULT_RUN_CACHE_BYTES);
    this.onStoreError = options.onStoreError ?? (() => undefined);
    this.embeddings = new EmbeddingSimilarity(dataSource, embedderResolver);
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
   * again. Nothing new is begun once the layer is closing.
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

  resolveOptions(options: StatsOptions | null | undefined): ResolvedStatsOptions {
    return resolveStatsOptions(options);
  }

  /**
   * A question's answer from the cache of the project's current revision (or computed), once
   * `options` are authorised: a cached answer must not reach a caller who may not use the
   * embedding model behind it. Null options: nothing to authorise, or authorised already.
   */
  async cached<T>(principal: Principal, options: ResolvedStatsOptions | null, projectId: string, kind: string, args: unknown, compute: () => Promise<T>): Promise<T> {
    if (options) await this.embeddings.authorise(principal, options);
    return this.cache.getOrCompute(projectId, kind, args, compute);
  }

  /** Runs of a dataset that have predictions to score, oldest first. */
  scoredRuns(datasetId: string): Promise<Run[]> {
    return loadScoredRuns(this.dataSource, datasetId);
  }

  /** The dataset, if it is one of the use case's. */
  async datasetOf(useCase: UseCase, datasetId: string): Promise<Dataset> {
    const dataset = await this.dataSource.getRepository(Dataset).findOneBy({ id: datasetId });
    if (!dataset || dataset.useCaseId !== useCase.id) throw notFound('Dataset');
    return dataset;
  }

  /**
   * Per use case: the grid of its runs on one dataset and the runs that stand for candidates (all
   * runs at RUN level, each model's best-ranked run at MODEL level). A use case speaks through
   * one dataset, so that it is one voter and a model one member per use case: the dataset with
   * the most scored runs (the oldest among equals) that has a reference standard and annotated
   * variables. Use cases without such a dataset are left out.
   */
  async useCaseGrids(principal: Principal, useCases: UseCase[], level: RankingLevel, options: ResolvedStatsOptions): Promise<UseCaseGrid[]> {
    // A reference named by the caller must be an annotator of one of these use cases; where a
    // use case's dataset does not have it, that dataset's own reference stands in.
    if (options.referenceAnnotatorId !== null) {
      const known = (await this.dataSource.query(
        'SELECT 1 FROM annotators a JOIN datasets d ON d.id = a.dataset_id WHERE a.id = $1 AND d.use_case_id = ANY($2::uuid[]) LIMIT 1',
        [options.referenceAnnotatorId, useCases.map((u) => u.id)],
      )) as unknown[];
      if (known.length === 0) throw notFound('Annotator');
    }
    const units: UseCaseGrid[] = [];
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
        if (level === RankingLevel.RUN) {
          units.push({ g, selected: runs.map((_, r) => r) });
        } else {
          const best = bestRunPerModel(await this.runOrder(g), runs.map((r) => r.modelId ?? `run:${r.id}`));
          units.push({ g, selected: best.map((b) => b.run) });
        }
        break;
      }
    }
    return units;
  }

  /**
   * The bootstrap grid of `datasetGrid` (the same numbers for the same inputs and seed) from
   * item scores cached per run: a run's predictions are read and scored only when its content
   * key is not cached (its predictions, the reference values, the reports, the variables or the
   * options changed), so after one run lands only that run is read. Scores that need an
   * embedding model are computed as in `datasetGrid`.
   */
  async rankingGrid(
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
    const reference = referenceOf(frame, options.referenceAnnotatorId);
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
  async datasetGrid(
    principal: Principal,
    dataset: string | DatasetFrame,
    runs: Run[],
    options: ResolvedStatsOptions,
    bootstrap = true,
  ): Promise<DatasetGrid> {
    const frame = typeof dataset === 'string' ? await loadFrame(this.dataSource, dataset) : dataset;
    if (frame.reportIds.length === 0) throw badInput('The dataset has no reports');
    const reference = referenceOf(frame, options.referenceAnnotatorId);
    const references = await loadAnnotatorRecords(this.dataSource, frame, reference.id);
    const cells = await this.runCells(frame, runs);
    const { similarity, embedder } = await this.embeddings.similarityFor(principal, frame, [references], options, cells);
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

  /** The run-level Kemeny–Young order of a dataset grid with a grid (the leaderboard's order). */
  async runOrder(g: Pick<DatasetGrid, 'grid' | 'runs' | 'variableIndex'>): Promise<number[]> {
    const grid = g.grid!;
    const V = g.variableIndex.length;
    const voterScores = Array.from({ length: V }, (_, v) => Float64Array.from({ length: g.runs.length }, (_, r) => grid.points[r * V + v]!));
    return (await this.statistics.kemeny(voterScores, { macro: grid.macroPoints, names: g.runs.map((r) => `${r.name}\u0000${r.id}`) })).order;
  }
}
