import { badInput } from '../../domain/errors';
import { decodeId } from '../../domain/global-id';
import { ScoringMode, type StatsOptions } from './stats.types';

/** StatsOptions with their defaults filled in and ids decoded: part of every statistic's cache key. */
export interface ResolvedStatsOptions {
  resamples: number;
  seed: number;
  confidence: number;
  referenceAnnotatorId: string | null;
  embeddingModelId: string | null;
  scoring: ScoringMode;
  collapsed: boolean;
}

const MAX_RESAMPLES = 10_000;

export function resolveStatsOptions(options: StatsOptions | null | undefined): ResolvedStatsOptions {
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
