/**
 * Endpoint telemetry while runs execute (the extraction paper's Figure 4, right): the worker
 * polls the Prometheus /metrics of each endpoint it is calling, and keeps per run the KV-cache
 * use, the requests running and waiting, the prefix-cache counters and the generated tokens.
 * vLLM and SGLang name these differently; both are read. What an endpoint answers is untrusted:
 * only numbers of known metric names are taken from it, from at most MAX_METRICS_BYTES, and a
 * failing or absent /metrics is simply not sampled.
 */
import type { Pool } from 'pg';
import type { EgressPolicy } from '../llm/egress';
import { createHttpFetch } from '../llm/http-fetch';

export const SAMPLE_INTERVAL_MS = 2000;
const MAX_METRICS_BYTES = 2 * 1024 * 1024;
const METRICS_TIMEOUT_MS = 1500;

export interface EndpointSample {
  running: number | null;
  waiting: number | null;
  /** fraction 0..1 */
  kvCacheUsage: number | null;
  /** counters (tokens), cumulative since the endpoint started */
  prefixQueries: number | null;
  prefixHits: number | null;
  generationTokens: number | null;
}

const NAMES: Record<keyof EndpointSample, string[]> = {
  running: ['vllm:num_requests_running', 'sglang:num_running_reqs'],
  waiting: ['vllm:num_requests_waiting', 'sglang:num_queue_reqs'],
  kvCacheUsage: ['vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc', 'sglang:token_usage'],
  prefixQueries: ['vllm:prefix_cache_queries_total', 'vllm:gpu_prefix_cache_queries_total'],
  prefixHits: ['vllm:prefix_cache_hits_total', 'vllm:gpu_prefix_cache_hits_total'],
  generationTokens: ['vllm:generation_tokens_total', 'sglang:generation_tokens_total'],
};

/** Sums of the samples of each metric over its series, from Prometheus text exposition. */
export function parsePrometheus(text: string): Map<string, number> {
  const sums = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.length === 0 || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const value = Number(match[3]);
    if (!Number.isFinite(value)) continue;
    sums.set(match[1]!, (sums.get(match[1]!) ?? 0) + value);
  }
  return sums;
}

/** The sample in our terms; null where the endpoint has no such metric. */
export function sampleOf(metrics: Map<string, number>): EndpointSample | null {
  const pick = (names: string[]): number | null => {
    for (const name of names) {
      const value = metrics.get(name);
      if (value !== undefined) return value;
    }
    return null;
  };
  const sample = Object.fromEntries(Object.entries(NAMES).map(([key, names]) => [key, pick(names)])) as unknown as EndpointSample;
  if (sample.kvCacheUsage !== null) sample.kvCacheUsage = Math.min(1, Math.max(0, sample.kvCacheUsage));
  return Object.values(sample).some((v) => v !== null) ? sample : null;
}

/** The /metrics URL of an OpenAI-compatible base URL (vLLM and SGLang serve it at the root). */
export function metricsUrl(baseUrl: string): string {
  const url = new URL(baseUrl);
  url.pathname = url.pathname.replace(/\/v1\/?$/, '').replace(/\/+$/, '') + '/metrics';
  url.search = '';
  return url.toString();
}

/** Redirects are not followed (a 3xx is not ok: no sample), larger bodies are not read, the egress policy holds. */
export async function readMetrics(baseUrl: string, apiKey: string | null, egress?: EgressPolicy): Promise<EndpointSample | null> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), METRICS_TIMEOUT_MS);
  try {
    const fetch = createHttpFetch({ egress, maxBodyBytes: MAX_METRICS_BYTES });
    const response = await fetch(metricsUrl(baseUrl), { signal: controller.signal, headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {} });
    if (!response.ok) return null;
    return sampleOf(parsePrometheus(await response.text()));
  } catch {
    // Telemetry is optional: an endpoint without /metrics, or too busy to answer in time, gives
    // no sample this round (every few seconds, so not logged); the run itself is not affected.
    return null;
  } finally {
    clearTimeout(timer);
  }
}

/** Stores one endpoint sample for each of the runs it was taken for. */
export async function storeSample(pool: Pool, endpointId: string, runIds: string[], sample: EndpointSample): Promise<void> {
  await pool.query(
    `INSERT INTO run_endpoint_samples (run_id, endpoint_id, running, waiting, kv_cache_usage, prefix_queries, prefix_hits, generation_tokens)
     SELECT unnest($1::uuid[]), $2, $3, $4, $5, $6, $7, $8`,
    [runIds, endpointId, sample.running, sample.waiting, sample.kvCacheUsage, sample.prefixQueries, sample.prefixHits, sample.generationTokens],
  );
}
