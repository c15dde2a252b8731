import { bootstrapPValue, estimateFrom, type BootstrapGridResult } from '../../analytics/bootstrap';
import { benjaminiHochberg } from '../../analytics/multiple-testing';
import { PromptStrategy, type Run } from '../run/run.entity';
import type { UseCase } from '../use-case/use-case.entity';

/** One use case's runs on its dataset, with their consensus order (best first). */
export interface EffectUnit {
  useCase: UseCase;
  runs: Run[];
  grid: BootstrapGridResult;
  order: number[];
}

/** A full-sample value with replicates on the dataset's resamples. */
interface Replicated {
  value: number;
  replicates: Float64Array;
}

interface Member {
  modelKey: string;
  unit: number;
  strategy: PromptStrategy;
  run: Run;
  baselineRun: Run;
  value: Replicated;
  baseline: Replicated;
}

export interface EffectRow {
  modelKey: string | null;
  useCase: UseCase | null;
  strategy: PromptStrategy | null;
  best: boolean;
  bestStrategies: PromptStrategy[];
  run: Run | null;
  baselineRun: Run | null;
  memberCount: number;
  value: Replicated;
  baseline: Replicated;
  difference: Replicated;
  pValue: number;
  qValue: number;
}

const STRATEGY_ORDER = Object.values(PromptStrategy);

export const modelKeyOf = (run: Run): string => run.modelId ?? `run:${run.id}`;

function macroOf(grid: BootstrapGridResult, r: number): Replicated {
  const B = grid.resamples;
  return { value: grid.macroPoints[r]!, replicates: grid.macroReplicates.subarray(r * B, (r + 1) * B) };
}

/** Mean over members of values and of replicates (replicate b: mean of the members' finite replicate b). */
function mean(items: readonly Replicated[]): Replicated {
  const B = items[0]!.replicates.length;
  const sum = new Float64Array(B);
  const count = new Float64Array(B);
  let value = 0;
  for (const x of items) {
    value += x.value;
    for (let b = 0; b < B; b++) {
      const y = x.replicates[b]!;
      if (Number.isFinite(y)) {
        sum[b] += y;
        count[b]++;
      }
    }
  }
  return { value: value / items.length, replicates: Float64Array.from(sum, (s, b) => (count[b]! > 0 ? s / count[b]! : Number.NaN)) };
}

function minus(a: Replicated, b: Replicated): Replicated {
  return { value: a.value - b.value, replicates: Float64Array.from(a.replicates, (x, i) => x - b.replicates[i]!) };
}

/**
 * The strategy-effect table of the extraction paper §3.2. In each use case, a model's run of a
 * strategy is its highest-placed run of that strategy in the use case's Kemeny–Young order, its
 * best strategy its highest-placed run of all; each is compared with the model's highest-placed
 * run of the baseline strategy on the dataset's shared resamples (paired). Pooled rows average
 * the members' values and replicate differences (use cases are independent datasets, so their
 * resamples are independent: a bootstrap stratified by use case). Rows: per model, each use case
 * (strategies in enum order, then best), then pooled across use cases when there are several;
 * then every model pooled. p-values from the replicate differences; q-values by
 * Benjamini–Hochberg across every row of the table. A best strategy is chosen on the same data
 * it is compared on, so the best-versus-baseline difference is optimistic by construction.
 */
export function strategyEffectRows(
  units: readonly EffectUnit[],
  baseline: PromptStrategy,
  modelOrder: (a: string, b: string) => number,
): { rows: EffectRow[]; topRanked: Map<PromptStrategy, number> } {
  const members: Member[] = [];
  const bestMembers: Member[] = [];
  const topRanked = new Map<PromptStrategy, number>();
  units.forEach((unit, u) => {
    const byModel = new Map<string, number[]>();
    for (const r of unit.order) {
      const key = modelKeyOf(unit.runs[r]!);
      byModel.set(key, [...(byModel.get(key) ?? []), r]);
    }
    for (const [modelKey, ranked] of byModel) {
      const base = ranked.find((r) => unit.runs[r]!.strategy === baseline);
      const bestRun = unit.runs[ranked[0]!]!;
      topRanked.set(bestRun.strategy, (topRanked.get(bestRun.strategy) ?? 0) + 1);
      if (base === undefined) continue;
      const baselineValue = macroOf(unit.grid, base);
      for (const strategy of STRATEGY_ORDER) {
        if (strategy === baseline) continue;
        const r = ranked.find((x) => unit.runs[x]!.strategy === strategy);
        if (r === undefined) continue;
        members.push({ modelKey, unit: u, strategy, run: unit.runs[r]!, baselineRun: unit.runs[base]!, value: macroOf(unit.grid, r), baseline: baselineValue });
      }
      bestMembers.push({
        modelKey,
        unit: u,
        strategy: bestRun.strategy,
        run: bestRun,
        baselineRun: unit.runs[base]!,
        value: macroOf(unit.grid, ranked[0]!),
        baseline: baselineValue,
      });
    }
  });

  const rows: EffectRow[] = [];
  const push = (group: Member[], modelKey: string | null, useCase: UseCase | null, strategy: PromptStrategy | null) => {
    if (group.length === 0) return;
    const value = mean(group.map((m) => m.value));
    const base = mean(group.map((m) => m.baseline));
    const difference = mean(group.map((m) => minus(m.value, m.baseline)));
    const single = group.length === 1 ? group[0]! : null;
    rows.push({
      modelKey,
      useCase,
      strategy,
      best: strategy === null,
      bestStrategies: strategy === null ? group.map((m) => m.strategy) : [],
      run: single && modelKey !== null && useCase !== null ? single.run : null,
      baselineRun: single && modelKey !== null && useCase !== null ? single.baselineRun : null,
      memberCount: group.length,
      value,
      baseline: base,
      difference,
      pValue: bootstrapPValue(difference.replicates),
      qValue: Number.NaN,
    });
  };
  const rowsOf = (pool: Member[], bestPool: Member[], modelKey: string | null, useCase: UseCase | null) => {
    for (const strategy of STRATEGY_ORDER) push(pool.filter((m) => m.strategy === strategy), modelKey, useCase, strategy);
    push(bestPool, modelKey, useCase, null);
  };
  const models = [...new Set([...members, ...bestMembers].map((m) => m.modelKey))].sort(modelOrder);
  for (const model of models) {
    units.forEach((unit, u) => {
      rowsOf(
        members.filter((m) => m.modelKey === model && m.unit === u),
        bestMembers.filter((m) => m.modelKey === model && m.unit === u),
        model,
        unit.useCase,
      );
    });
    if (units.length > 1) rowsOf(members.filter((m) => m.modelKey === model), bestMembers.filter((m) => m.modelKey === model), model, null);
  }
  if (models.length > 1 || units.length > 1) rowsOf(members, bestMembers, null, units.length === 1 ? units[0]!.useCase : null);
  const q = benjaminiHochberg(rows.map((r) => r.pValue));
  rows.forEach((r, i) => (r.qValue = q[i]!));
  return { rows, topRanked };
}

/** Percentile interval of a replicated value. */
export function replicatedEstimate(x: Replicated, confidence: number) {
  return estimateFrom(x.value, x.replicates, confidence);
}
