import type { Request } from 'express';
import { badInput } from '../domain/errors';
import { ScoringMode, type StatsOptions } from '../modules/scoring/stats.types';

/** The StatsOptions fields a route takes as query parameters, with the same names and defaults as GraphQL. */
export const STATS_PARAMETERS = ['resamples', 'seed', 'confidence', 'referenceAnnotatorId', 'embeddingModelId', 'scoring', 'collapsed'] as const;

/**
 * The query parameters of a request, each given at most once and each one the route knows.
 * Messages name the parameter only when it is one of ours (the caller's text is never echoed).
 */
export function queryParameters(req: Request, allowed: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  const url = new URL(req.originalUrl, 'http://localhost');
  for (const [name, value] of url.searchParams) {
    if (!allowed.includes(name)) throw badInput(`Unknown query parameter; this route takes ${allowed.join(', ')}`);
    if (out.has(name)) throw badInput(`${name} is given more than once`, { field: name });
    out.set(name, value);
  }
  return out;
}

function integer(params: Map<string, string>, name: string): number | undefined {
  const value = params.get(name);
  if (value === undefined) return undefined;
  if (!/^-?\d{1,10}$/.test(value)) throw badInput(`${name} must be an integer`, { field: name });
  return Number(value);
}

export function requiredParameter(params: Map<string, string>, name: string): string {
  const value = params.get(name);
  if (value === undefined || value === '') throw badInput(`${name} is required`, { field: name });
  return value;
}

export function enumParameter<T extends string>(params: Map<string, string>, name: string, values: readonly T[]): T | undefined {
  const value = params.get(name);
  if (value === undefined) return undefined;
  if (!(values as readonly string[]).includes(value)) throw badInput(`${name} must be one of ${values.join(', ')}`, { field: name });
  return value as T;
}

/** StatsOptions from query parameters (`?resamples=200&seed=7&confidence=0.9&scoring=CONDITIONAL&collapsed=true`). */
export function statsOptionsOf(params: Map<string, string>): StatsOptions {
  const options: StatsOptions = {};
  const resamples = integer(params, 'resamples');
  if (resamples !== undefined) options.resamples = resamples;
  const seed = integer(params, 'seed');
  if (seed !== undefined) options.seed = seed;
  const confidence = params.get('confidence');
  if (confidence !== undefined) {
    if (!/^(0?\.\d{1,12}|0|1)$/.test(confidence)) throw badInput('confidence must be a number between 0 and 1', { field: 'confidence' });
    options.confidence = Number(confidence);
  }
  const scoring = enumParameter(params, 'scoring', Object.values(ScoringMode));
  if (scoring !== undefined) options.scoring = scoring;
  const collapsed = enumParameter(params, 'collapsed', ['true', 'false'] as const);
  if (collapsed !== undefined) options.collapsed = collapsed === 'true';
  const reference = params.get('referenceAnnotatorId');
  if (reference !== undefined) options.referenceAnnotatorId = reference;
  const embedding = params.get('embeddingModelId');
  if (embedding !== undefined) options.embeddingModelId = embedding;
  return options;
}
