/**
 * Vega-Lite specifications of the figures of the extraction and RADS papers, built from plain
 * data: no I/O, no GraphQL. Every value is inline (`data.values`); no specification names a URL
 * to load, so rendering one fetches nothing. `$schema` is an identifier that tools read to tell
 * Vega-Lite from Vega; nothing fetches it.
 */
import type { TopLevelSpec } from 'vega-lite';

export const VEGA_LITE_SCHEMA = 'https://vega.github.io/schema/vega-lite/v5.json';

export interface Interval {
  value: number;
  ciLow: number | null;
  ciHigh: number | null;
}

/** One run of a leaderboard, as the charts need it. */
export interface ChartRun {
  /** Shown on the axis; made unique within a chart by the builders. */
  label: string;
  model: string | null;
  strategy: string | null;
  rank: number;
  rankCiLow: number | null;
  rankCiHigh: number | null;
  macroAverage: Interval | null;
  /** Effective score by variable key. */
  scores: Record<string, Interval | null>;
}

export interface HeatmapData {
  title: string;
  variables: string[];
  runs: ChartRun[];
  /** The human ceiling: agreement between annotators, macro and per variable; null when unknown. */
  agreement: { macroAverage: Interval | null; variables: Record<string, Interval | null> } | null;
}

export const MACRO_COLUMN = 'Macro average';
export const RANK_COLUMN = 'Rank';
export const AGREEMENT_ROW = 'Inter-rater agreement';

const fixed = (x: number) => x.toFixed(2);
const withInterval = (e: Interval, separator = ' ') => (e.ciLow !== null && e.ciHigh !== null ? `${fixed(e.value)}${separator}[${fixed(e.ciLow)}–${fixed(e.ciHigh)}]` : fixed(e.value));
const rankLabel = (r: ChartRun) => (r.rankCiLow !== null && r.rankCiHigh !== null ? `${r.rank} [${r.rankCiLow}–${r.rankCiHigh}]` : String(r.rank));

/** Labels made unique in order of appearance ("name", "name (2)", …), so that two runs never share a row. */
export function uniqueLabels(labels: string[]): string[] {
  const seen = new Map<string, number>();
  const taken = new Set(labels);
  return labels.map((label) => {
    const count = (seen.get(label) ?? 0) + 1;
    seen.set(label, count);
    if (count === 1) return label;
    let candidate = `${label} (${count})`;
    while (taken.has(candidate)) candidate = `${candidate}′`;
    taken.add(candidate);
    return candidate;
  });
}

/**
 * The use-case heatmap of the extraction paper's Figures C1–C7: one row per run (model ×
 * strategy) in leaderboard order, one column per variable between the macro average and the
 * Kemeny–Young rank with its interval; the inter-rater agreement as the first row.
 */
export function heatmapSpec(data: HeatmapData): TopLevelSpec {
  const labels = uniqueLabels(data.runs.map((r) => r.label));
  const rows = [...(data.agreement ? [AGREEMENT_ROW] : []), ...labels];
  const columns = [MACRO_COLUMN, ...data.variables, RANK_COLUMN];
  const cells: Record<string, unknown>[] = [];
  const cell = (row: string, column: string, kind: string, e: Interval | null, label?: string) =>
    cells.push({ row, column, kind, value: e?.value ?? null, ciLow: e?.ciLow ?? null, ciHigh: e?.ciHigh ?? null, label: label ?? (e ? fixed(e.value) : '–') });
  if (data.agreement) {
    cell(AGREEMENT_ROW, MACRO_COLUMN, 'agreement', data.agreement.macroAverage, data.agreement.macroAverage ? withInterval(data.agreement.macroAverage, '\n') : '–');
    for (const key of data.variables) {
      const e = data.agreement.variables[key] ?? null;
      cell(AGREEMENT_ROW, key, 'agreement', e, e ? withInterval(e, '\n') : '–');
    }
  }
  data.runs.forEach((run, i) => {
    const row = labels[i]!;
    cell(row, MACRO_COLUMN, 'macro', run.macroAverage);
    for (const key of data.variables) cell(row, key, 'score', run.scores[key] ?? null);
    cells.push({ row, column: RANK_COLUMN, kind: 'rank', value: null, rank: run.rank, rankCiLow: run.rankCiLow, rankCiHigh: run.rankCiHigh, label: rankLabel(run), model: run.model, strategy: run.strategy });
  });
  return {
    $schema: VEGA_LITE_SCHEMA,
    title: data.title,
    description: 'Effective score per run and variable, macro average and Kemeny–Young rank with its interval; the first row is the agreement between annotators.',
    data: { values: cells },
    width: { step: 64 },
    height: { step: 26 },
    encoding: {
      x: { field: 'column', type: 'nominal', sort: columns, axis: { orient: 'top', labelAngle: -35, title: null, labelLimit: 240 } },
      y: { field: 'row', type: 'nominal', sort: rows, axis: { title: null, labelLimit: 0 } },
    },
    layer: [
      {
        transform: [{ filter: 'datum.value != null' }],
        mark: { type: 'rect' },
        encoding: { color: { field: 'value', type: 'quantitative', title: 'Score', scale: { domain: [0, 1], scheme: 'viridis' } } },
      },
      {
        mark: { type: 'text', fontSize: 10, lineBreak: '\n' },
        encoding: {
          text: { field: 'label', type: 'nominal' },
          size: { condition: { test: "datum.kind == 'agreement'", value: 8 }, value: 10 },
          color: { condition: { test: 'datum.value != null && datum.value < 0.55', value: 'white' }, value: 'black' },
        },
      },
    ],
    config: { view: { stroke: null }, axis: { domain: false, ticks: false } },
  };
}

export interface BarsData {
  title: string;
  runs: ChartRun[];
  agreement: Interval | null;
}

/**
 * Bars of the extraction paper's Figure 2 for one use case: the macro average of each run (or
 * each model's best run) with its bootstrap interval, in leaderboard order, and the inter-rater
 * agreement as a dashed ceiling with its interval as a band.
 */
export function barsSpec(data: BarsData): TopLevelSpec {
  const labels = uniqueLabels(data.runs.map((r) => r.label));
  const bars = data.runs
    .map((r, i) => ({ label: labels[i], model: r.model, strategy: r.strategy ?? 'unknown', rank: r.rank, value: r.macroAverage?.value ?? null, ciLow: r.macroAverage?.ciLow ?? null, ciHigh: r.macroAverage?.ciHigh ?? null }))
    .filter((b) => b.value !== null);
  // Horizontal bars: run names are long, and read best on the vertical axis.
  const y = { field: 'label', type: 'nominal' as const, sort: bars.map((b) => b.label as string), axis: { title: null, labelLimit: 0 } }; // 0: names are never cut
  const x = { field: 'value', type: 'quantitative' as const, title: 'Macro average', scale: { domain: [0, 1] } };
  const layers: NonNullable<Extract<TopLevelSpec, { layer: unknown }>['layer']> = [
    { mark: { type: 'bar' }, encoding: { y, x, color: { field: 'strategy', type: 'nominal', title: 'Strategy' } } },
    {
      transform: [{ filter: 'datum.ciLow != null && datum.ciHigh != null' }],
      mark: { type: 'rule', color: 'black' },
      encoding: { y, x: { field: 'ciLow', type: 'quantitative' }, x2: { field: 'ciHigh' } },
    },
  ];
  if (data.agreement) {
    const a = data.agreement;
    const ceiling = { data: { values: [{ value: a.value, ciLow: a.ciLow, ciHigh: a.ciHigh }] } };
    if (a.ciLow !== null && a.ciHigh !== null) {
      layers.push({ ...ceiling, mark: { type: 'rect', color: 'grey', opacity: 0.15 }, encoding: { x: { field: 'ciLow', type: 'quantitative' }, x2: { field: 'ciHigh' } } });
    }
    layers.push({ ...ceiling, mark: { type: 'rule', strokeDash: [6, 4], color: 'black' }, encoding: { x: { field: 'value', type: 'quantitative' } } });
  }
  return {
    $schema: VEGA_LITE_SCHEMA,
    title: data.agreement ? { text: data.title, subtitle: `Dashed line: inter-rater agreement ${withInterval(data.agreement)}` } : data.title,
    description: 'Macro average with its bootstrap interval per run, best first; the dashed line is the agreement between annotators.',
    data: { values: bars },
    width: 360,
    height: { step: 18 },
    layer: layers,
  };
}

export interface RankingData {
  title: string;
  useCases: string[];
  /** Each model: its rank in each use case (its best strategy) and the consensus rank across them. */
  models: { model: string; consensusRank: number; consensusCiLow: number | null; consensusCiHigh: number | null; ranks: Record<string, number | null> }[];
}

export const CONSENSUS_COLUMN = 'Consensus';

/**
 * The ranking across use cases of the extraction paper's Figure 3: one row per model (its best
 * strategy), one column per use case with the model's rank there, and the Kemeny–Young
 * consensus rank with its interval; rows in consensus order.
 */
export function rankingSpec(data: RankingData): TopLevelSpec {
  const labels = uniqueLabels(data.models.map((m) => m.model));
  const worst = Math.max(1, ...data.models.flatMap((m) => [m.consensusRank, ...Object.values(m.ranks).filter((r): r is number => r !== null)]));
  const cells: Record<string, unknown>[] = [];
  data.models.forEach((m, i) => {
    for (const useCase of data.useCases) {
      const rank = m.ranks[useCase] ?? null;
      cells.push({ model: labels[i], column: useCase, rank, label: rank === null ? '–' : String(rank) });
    }
    const interval = m.consensusCiLow !== null && m.consensusCiHigh !== null ? ` [${m.consensusCiLow}–${m.consensusCiHigh}]` : '';
    cells.push({ model: labels[i], column: CONSENSUS_COLUMN, rank: m.consensusRank, label: `${m.consensusRank}${interval}` });
  });
  return {
    $schema: VEGA_LITE_SCHEMA,
    title: data.title,
    description: "Each model's rank per use case (its best strategy) and the Kemeny–Young consensus rank across the use cases.",
    data: { values: cells },
    width: { step: 80 },
    height: { step: 22 },
    encoding: {
      x: { field: 'column', type: 'nominal', sort: [...data.useCases, CONSENSUS_COLUMN], axis: { orient: 'top', labelAngle: -30, title: null, labelLimit: 280 } },
      y: { field: 'model', type: 'nominal', sort: labels, axis: { title: null, labelLimit: 0 } },
    },
    layer: [
      {
        transform: [{ filter: 'datum.rank != null' }],
        mark: { type: 'rect' },
        encoding: { color: { field: 'rank', type: 'quantitative', title: 'Rank', scale: { scheme: 'viridis', reverse: true, domainMin: 1 } } },
      },
      {
        mark: { type: 'text', fontSize: 10 },
        encoding: { text: { field: 'label', type: 'nominal' }, color: { condition: { test: `datum.rank != null && datum.rank > ${worst / 2}`, value: 'white' }, value: 'black' } },
      },
    ],
    config: { view: { stroke: null }, axis: { domain: false, ticks: false } },
  };
}

export interface ThroughputData {
  title: string;
  strategy: string | null;
  models: { model: string; sizeClass: string; parameterCountB: number | null; meanMacroAverage: number; tokensPerSecondPerGpu: number; useCases: number }[];
}

/**
 * Performance against throughput of the extraction paper's Figure 4: per model, the mean macro
 * average across use cases against completion tokens per second per GPU; bubble area is the
 * parameter count, colour the size class.
 */
export function throughputSpec(data: ThroughputData): TopLevelSpec {
  return {
    $schema: VEGA_LITE_SCHEMA,
    title: data.title,
    description: 'Mean macro average across use cases against completion tokens per second per GPU, one bubble per model.',
    data: { values: data.models },
    width: 420,
    height: 300,
    layer: [
      {
        mark: { type: 'circle', opacity: 0.7, stroke: 'black', strokeWidth: 0.5 },
        encoding: {
          x: { field: 'tokensPerSecondPerGpu', type: 'quantitative', title: 'Tokens/s per GPU', scale: { type: 'log' } },
          y: { field: 'meanMacroAverage', type: 'quantitative', title: data.strategy ? `Mean macro average (${data.strategy})` : 'Mean macro average', scale: { domain: [0, 1] } },
          size: { field: 'parameterCountB', type: 'quantitative', title: 'Parameters (B)', scale: { range: [40, 1600] } },
          color: { field: 'sizeClass', type: 'nominal', title: 'Size class' },
        },
      },
      {
        mark: { type: 'text', dy: -12, fontSize: 9 },
        encoding: {
          x: { field: 'tokensPerSecondPerGpu', type: 'quantitative', scale: { type: 'log' } },
          y: { field: 'meanMacroAverage', type: 'quantitative' },
          text: { field: 'model' },
        },
      },
    ],
  };
}

export interface ModelSizeData {
  title: string;
  models: { model: string; family: string; reasoning: string; parameterCountB: number; accuracy: number; validity: number }[];
}

/**
 * Validity and accuracy against model size of the RADS paper's Figure 2: one point per model
 * (parameters on a log axis), colour = family, shape = reasoning mode.
 */
export function modelSizeSpec(data: ModelSizeData): TopLevelSpec {
  const values = data.models.flatMap((m) => [
    { ...m, measure: 'Accuracy', value: m.accuracy },
    { ...m, measure: 'Validity', value: m.validity },
  ]);
  return {
    $schema: VEGA_LITE_SCHEMA,
    title: data.title,
    description: 'Accuracy (mean macro average of the best strategy) and validity against the parameter count, one point per model.',
    data: { values },
    facet: { column: { field: 'measure', type: 'nominal', title: null, sort: ['Accuracy', 'Validity'] } },
    spec: {
      width: 260,
      height: 240,
      mark: { type: 'point', filled: true, size: 80 },
      encoding: {
        x: { field: 'parameterCountB', type: 'quantitative', title: 'Parameters (B)', scale: { type: 'log' } },
        y: { field: 'value', type: 'quantitative', title: null, scale: { domain: [0, 1] } },
        color: { field: 'family', type: 'nominal', title: 'Family' },
        shape: { field: 'reasoning', type: 'nominal', title: 'Reasoning' },
        tooltip: [{ field: 'model' }, { field: 'value', format: '.3f' }],
      },
    },
  };
}
