import type { SimilarityLookup } from '../../analytics/embedding/embedder';
import { itemScores } from '../../analytics/metrics';
import type { RecordCell } from '../../analytics/normalise';
import type { InvalidCategory, NormalisedCell, VariableSpec } from '../../analytics/types';
import { sizeClass } from '../../analytics/groups';
import { badInput } from '../../domain/errors';
import type { Model } from '../endpoint/model.entity';
import type { Run } from '../run/run.entity';
import type { ReasoningMode, RunSelector, StratumInput } from './comparison.types';
import { RunAttribute } from './comparison.types';
import type { DatasetFrame, RunCells } from './scoring-data';

/** What the observation tables need of a dataset grid. */
export interface ObservationSource {
  frame: DatasetFrame;
  /** The reference cells of each grid variable (variableIndex order), in report order. */
  referenceCells: readonly (RecordCell | undefined)[][];
  runs: Run[];
  cells: RunCells[];
  similarity: SimilarityLookup;
  variableIndex: number[];
}

/**
 * Per run, variable (grid column) and report: the effective item score (NaN where the reference
 * has no value), whether the prediction is valid, and the invalid category.
 */
export interface UnitObservations {
  items: Float64Array[][];
  valid: Uint8Array[][];
  category: (InvalidCategory | null)[][][];
}

export function unitObservations(g: ObservationSource): UnitObservations {
  const specs: VariableSpec[] = g.variableIndex.map((vi) => g.frame.specs[vi]!);
  const items: Float64Array[][] = [];
  const valid: Uint8Array[][] = [];
  const category: (InvalidCategory | null)[][][] = [];
  g.runs.forEach((_, r) => {
    const columns = specs.map((spec) => g.cells[r]!.get(spec.key)!);
    items.push(
      specs.map((spec, v) =>
        itemScores(spec, g.referenceCells[v]!, columns[v]! as readonly (NormalisedCell | undefined)[], { similarity: g.similarity }),
      ),
    );
    valid.push(columns.map((column) => Uint8Array.from(column, (cell) => (answerOf(cell).status === 'INVALID' ? 0 : 1))));
    category.push(
      columns.map((column) =>
        column.map((cell) => {
          const answer = answerOf(cell);
          return answer.status === 'INVALID' ? answer.category : null;
        }),
      ),
    );
  });
  return { items, valid, category };
}

const NO_ANSWER: NormalisedCell = { status: 'INVALID', category: 'MISSING' };

function answerOf(cell: RecordCell | null | undefined): NormalisedCell {
  return (cell as NormalisedCell | undefined) ?? NO_ANSWER;
}

/** Checks that exactly one way of stratifying is given. */
export function checkStratum(stratum: StratumInput | null | undefined, field = 'stratifyBy'): StratumInput | null {
  if (!stratum) return null;
  const given = [stratum.reportMetadata != null, stratum.useCaseTagPrefix != null, stratum.useCase === true, stratum.variable === true].filter(Boolean).length;
  if (given !== 1) throw badInput(`${field} must give exactly one of reportMetadata, useCaseTagPrefix, useCase: true, variable: true`, { field });
  if (stratum.reportMetadata === '') throw badInput(`${field}.reportMetadata must not be empty`, { field: `${field}.reportMetadata` });
  return stratum;
}

export const UNKNOWN_STRATUM = 'UNKNOWN';

/**
 * The stratum of an observation: a report metadata value (stringified; UNKNOWN when absent or
 * not a scalar), the use case's first tag starting with the prefix, the use case's name or the
 * variable's key. Reports' metadata is loaded by the caller (`metadata[i]`).
 */
export function stratumLabeller(
  stratum: StratumInput,
  g: ObservationSource,
  metadata: readonly (Record<string, unknown> | null)[],
): (column: number, report: number) => string {
  if (stratum.reportMetadata != null) {
    const key = stratum.reportMetadata;
    const labels = metadata.map((m) => {
      const v = m?.[key];
      return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? String(v) : UNKNOWN_STRATUM;
    });
    return (_c, i) => labels[i]!;
  }
  if (stratum.useCaseTagPrefix != null) {
    const prefix = stratum.useCaseTagPrefix;
    const tag = g.frame.useCase.tags.find((t) => t.startsWith(prefix)) ?? UNKNOWN_STRATUM;
    return () => tag;
  }
  if (stratum.useCase === true) {
    const name = g.frame.useCase.name;
    return () => name;
  }
  const keys = g.variableIndex.map((vi) => g.frame.specs[vi]!.key);
  return (c) => keys[c]!;
}

/** A run's reasoning mode: its config.thinking when set, otherwise its model's supportsThinking. */
export function reasoningModeOf(run: Run, model: Model | undefined): ReasoningMode {
  const thinking = (run.config as { thinking?: unknown }).thinking;
  const on = thinking === true ? true : thinking === false ? false : (model?.supportsThinking ?? false);
  return (on ? 'THINKING' : 'NON_THINKING') as ReasoningMode;
}

/** Guided prompting unless the run's config says guided: false. */
export function guidedOf(run: Run): boolean {
  return (run.config as { guided?: unknown }).guided !== false;
}

function sizeClassOf(model: Model | undefined): string {
  if (!model) return 'UNKNOWN';
  return model.sizeClass ?? (model.parameterCountB !== null ? sizeClass(model.parameterCountB) : 'UNKNOWN');
}

/** Whether a run meets every criterion of a selector. */
export function selects(selector: RunSelector, run: Run, model: Model | undefined, modelIds: Set<string> | null): boolean {
  if (modelIds && (!run.modelId || !modelIds.has(run.modelId))) return false;
  if (selector.strategies && !selector.strategies.includes(run.strategy)) return false;
  if (selector.reasoningMode && reasoningModeOf(run, model) !== selector.reasoningMode) return false;
  if (selector.guided != null && guidedOf(run) !== selector.guided) return false;
  if (selector.families && !selector.families.includes(model?.family ?? 'UNKNOWN')) return false;
  if (selector.sizeClasses && !selector.sizeClasses.includes(sizeClassOf(model))) return false;
  return true;
}

/** Checks SIZE_BIN edges: finite, ascending. */
export function checkSizeBinEdges(by: RunAttribute, edges: readonly number[] | null | undefined): number[] {
  if (by !== RunAttribute.SIZE_BIN) return [];
  if (!edges || edges.length === 0) throw badInput('groupBy.sizeBinEdges is needed for SIZE_BIN', { field: 'groupBy.sizeBinEdges' });
  edges.forEach((e, i) => {
    if (!Number.isFinite(e) || e <= 0 || (i > 0 && e <= edges[i - 1]!)) {
      throw badInput('groupBy.sizeBinEdges must be positive and strictly ascending', { field: 'groupBy.sizeBinEdges' });
    }
  });
  return [...edges];
}

function formatB(x: number): string {
  return `${Number(x.toPrecision(6))}B`;
}

/** The group label of a run under a grouping. */
export function groupLabel(by: RunAttribute, edges: readonly number[], run: Run, model: Model | undefined): string {
  switch (by) {
    case RunAttribute.ALL:
      return 'ALL';
    case RunAttribute.RUN:
      return run.name;
    case RunAttribute.MODEL:
      return model?.servedName ?? run.name;
    case RunAttribute.STRATEGY:
      return run.strategy;
    case RunAttribute.FAMILY:
      return model?.family ?? 'UNKNOWN';
    case RunAttribute.SIZE_CLASS:
      return sizeClassOf(model);
    case RunAttribute.SIZE_BIN: {
      const p = model?.parameterCountB ?? null;
      if (p === null) return 'UNKNOWN';
      const k = edges.findIndex((e) => p <= e);
      if (k === 0) return `≤${formatB(edges[0]!)}`;
      if (k < 0) return `>${formatB(edges[edges.length - 1]!)}`;
      return `${formatB(edges[k - 1]!)}–${formatB(edges[k]!)}`;
    }
    case RunAttribute.REASONING_MODE:
      return reasoningModeOf(run, model);
    case RunAttribute.GUIDANCE:
      return guidedOf(run) ? 'GUIDED' : 'ZERO_SHOT';
    case RunAttribute.SPECIALISATION:
      return model?.specialisation ?? 'UNKNOWN';
    case RunAttribute.QUANTISATION:
      return model?.quantisation ?? 'NONE';
  }
}
