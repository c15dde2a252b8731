/**
 * Endpoint discovery and capability probes. Each probe is one small request through a client the
 * caller supplies, so the same code runs against real servers and the fake one in tests.
 *
 * What an endpoint answers is untrusted and bounded: the model listing is read from at most
 * MAX_MODEL_LIST_BYTES within the timeout, at most MAX_LISTED_MODELS models are kept, names that
 * are not plain text (or that contain a configured secret) are skipped, and numbers outside their
 * range are left unknown. What was dropped is said in warnings of our own words, never by quoting
 * the endpoint.
 */
import type { EgressPolicy } from './egress';
import { createHttpFetch } from './http-fetch';
import { httpErrorMessage, LlmError } from './llm-error';
import { connectionFailure, DUMMY_API_KEY, normaliseBaseUrl, toSdkTimeout } from './openai-transport';
import type { ChatFn } from './types';

/** Models kept from one listing; the rest are dropped with a warning. */
export const MAX_LISTED_MODELS = 1000;
/** Largest model listing read; a larger one fails the probe (BAD_RESPONSE, reason TOO_LARGE). */
export const MAX_MODEL_LIST_BYTES = 4 * 1024 * 1024;
/** Largest context length believed (tokens); larger, negative or fractional ones are left unknown. */
export const MAX_CONTEXT_TOKENS = 100_000_000;
/** Longest served name, Hugging Face repo or owner kept. */
export const MAX_MODEL_NAME_LENGTH = 1024;

export interface DiscoveredModel {
  id: string;
  /** vLLM `max_model_len`, else `context_length` (some gateways), else null */
  maxModelLen: number | null;
  ownedBy: string | null;
  /** vLLM: the Hugging Face repo or path the served name points at */
  root: string | null;
}

export interface ModelListing {
  models: DiscoveredModel[];
  /** what was dropped or ignored, in our words */
  warnings: string[];
}

export interface ProbeOptions {
  egress?: EgressPolicy | undefined;
  /** the caller went away: the listing stops */
  signal?: AbortSignal | undefined;
  /** configured secrets: a name containing one is not kept */
  secrets?: readonly (string | null | undefined)[];
}

// C0 and C1 controls, DEL, line and paragraph separators.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Upstream text that may be stored as a name: plain, bounded, well-formed, no secret in it. */
function plainName(value: unknown, secrets: readonly string[]): string | null {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_MODEL_NAME_LENGTH) return null;
  if (CONTROL.test(value) || LONE_SURROGATE.test(value) || value.trim() !== value) return null;
  if (secrets.some((secret) => value.includes(secret))) return null;
  return value;
}

function contextLength(value: unknown): number | null | 'absurd' {
  if (value === undefined || value === null) return null;
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_CONTEXT_TOKENS ? value : 'absurd';
}

/** The cards of a GET /models answer, checked (exported for tests). */
export function readModelCards(data: readonly unknown[], secretsIn: readonly (string | null | undefined)[] = []): ModelListing {
  const secrets = secretsIn.filter((s): s is string => typeof s === 'string' && s.length >= 4);
  const models: DiscoveredModel[] = [];
  const seen = new Set<string>();
  let skipped = 0;
  let absurd = 0;
  let index = 0;
  for (; index < data.length && models.length < MAX_LISTED_MODELS; index += 1) {
    const raw = data[index];
    const card = (raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? raw : {}) as Record<string, unknown>;
    const id = plainName(card['id'], secrets);
    if (id === null || seen.has(id)) {
      skipped += 1;
      continue;
    }
    seen.add(id);
    const len = contextLength(card['max_model_len'] ?? card['context_length']);
    if (len === 'absurd') absurd += 1;
    models.push({
      id,
      maxModelLen: len === 'absurd' ? null : len,
      ownedBy: plainName(card['owned_by'], secrets),
      root: plainName(card['root'], secrets),
    });
  }
  const warnings: string[] = [];
  if (index < data.length) {
    warnings.push(`the endpoint lists ${data.length} entries; the first ${MAX_LISTED_MODELS} models are kept, the other ${data.length - index} entries are ignored`);
  }
  if (skipped > 0) {
    warnings.push(
      `${skipped} listed ${skipped === 1 ? 'entry was' : 'entries were'} skipped: no id of 1 to ${MAX_MODEL_NAME_LENGTH} printable characters, a repeated id, or an id containing a configured secret`,
    );
  }
  if (absurd > 0) {
    warnings.push(`${absurd} ${absurd === 1 ? 'model reports' : 'models report'} a context length that is not a whole number from 1 to ${MAX_CONTEXT_TOKENS}; it is left unknown`);
  }
  return { models, warnings };
}

/** GET {baseUrl}/models, no retries: discovery should report the endpoint's state as it is. */
export async function listModels(baseUrl: string, apiKey: string | null | undefined, timeoutMs: number, options: ProbeOptions = {}): Promise<ModelListing> {
  const timeout = toSdkTimeout(timeoutMs);
  const fetch = createHttpFetch({ egress: options.egress, maxBodyBytes: MAX_MODEL_LIST_BYTES });
  const timer = AbortSignal.timeout(timeout);
  const signal = options.signal ? AbortSignal.any([timer, options.signal]) : timer;
  let text: string;
  try {
    const response = await fetch(`${normaliseBaseUrl(baseUrl)}/models`, {
      method: 'GET',
      headers: { accept: 'application/json', authorization: `Bearer ${apiKey && apiKey.length > 0 ? apiKey : DUMMY_API_KEY}` },
      signal,
    });
    if (!response.ok) {
      // The body is discarded: a cancel that fails (the stream already ended or broke) changes nothing.
      await response.body?.cancel().catch(() => undefined);
      throw new LlmError(response.status === 429 ? 'RATE_LIMITED' : 'HTTP_ERROR', httpErrorMessage(response.status), { status: response.status, attempts: 1 });
    }
    text = await response.text();
  } catch (err) {
    if (err instanceof LlmError) throw err;
    if (options.signal?.aborted) throw new LlmError('CONNECTION', 'the model listing was aborted', { attempts: 1, reason: 'ABORTED' });
    if (timer.aborted) throw new LlmError('TIMEOUT', `no response within ${timeout} ms`, { attempts: 1 });
    throw connectionFailure(err);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new LlmError('BAD_RESPONSE', 'the answer is not JSON', { attempts: 1, reason: 'NOT_JSON' });
  }
  const data = parsed !== null && typeof parsed === 'object' ? (parsed as { data?: unknown }).data : undefined;
  if (!Array.isArray(data)) throw new LlmError('BAD_RESPONSE', 'the answer has no list of models (data)', { attempts: 1, reason: 'NO_MODEL_LIST' });
  return readModelCards(data, [apiKey, ...(options.secrets ?? [])]);
}

export interface HealthMeasure {
  ok: boolean;
  latencyMs: number;
  /** null when ok; our words (llm-error.ts), never the endpoint's */
  error: string | null;
  errorCode: LlmError['code'] | null;
  checkedAt: Date;
  models: DiscoveredModel[];
  warnings: string[];
}

/** One model listing, timed; never throws for transport failures (they are the measurement). */
export async function measureHealth(
  baseUrl: string,
  apiKey: string | null | undefined,
  timeoutMs: number,
  options: ProbeOptions & { now?: () => Date } = {},
): Promise<HealthMeasure> {
  const checkedAt = (options.now ?? (() => new Date()))();
  const started = performance.now();
  try {
    const { models, warnings } = await listModels(baseUrl, apiKey, timeoutMs, options);
    return { ok: true, latencyMs: performance.now() - started, error: null, errorCode: null, checkedAt, models, warnings };
  } catch (err) {
    if (!(err instanceof LlmError)) throw err;
    return { ok: false, latencyMs: performance.now() - started, error: err.message, errorCode: err.code, checkedAt, models: [], warnings: [] };
  }
}

export interface CapabilityProbe {
  /** true / false when the answer is clear; null when the endpoint failed for another reason */
  supported: boolean | null;
  /** our words (a status, a code), never the endpoint's */
  detail: string | null;
}

/** A 4xx other than 429 is the server refusing the parameter; anything else says nothing about it. */
function refusal(err: unknown): CapabilityProbe | null {
  if (err instanceof LlmError && err.code === 'HTTP_ERROR' && err.status !== undefined && err.status >= 400 && err.status < 500) {
    return { supported: false, detail: `${httpErrorMessage(err.status)}: the request was refused` };
  }
  if (err instanceof LlmError) return { supported: null, detail: `${err.code}: ${err.message}` };
  return null;
}

const PROBE_SCHEMA = {
  type: 'object',
  properties: { ok: { type: 'boolean' } },
  required: ['ok'],
  additionalProperties: false,
} as const;

/**
 * Constrained decoding: a tiny request with `response_format: json_schema`. Supported when the
 * server answers 2xx with JSON-parsable content; a 4xx means the parameter is refused. A 2xx with
 * prose means the server ignored the schema, which counts as unsupported.
 */
export async function probeJsonSchema(chat: ChatFn, model: string, signal?: AbortSignal): Promise<CapabilityProbe> {
  try {
    const completion = await chat({
      ...(signal ? { signal } : {}),
      model,
      messages: [{ role: 'user', content: 'Reply with the JSON object {"ok": true}.' }],
      temperature: 0,
      maxTokens: 64,
      responseFormat: { type: 'json_schema', json_schema: { name: 'probe', schema: { ...PROBE_SCHEMA }, strict: true } },
    });
    try {
      JSON.parse(completion.content);
      return { supported: true, detail: null };
    } catch {
      return { supported: false, detail: 'the answer to a json_schema request is not JSON' };
    }
  } catch (err) {
    const verdict = refusal(err);
    if (verdict) return verdict;
    throw err;
  }
}

/**
 * Thinking switch: a request with thinking off must be accepted (2xx) and come back without a
 * reasoning text; reasoning despite the switch means the server ignores it.
 */
export async function probeThinkingToggle(chat: ChatFn, model: string, signal?: AbortSignal): Promise<CapabilityProbe> {
  try {
    const completion = await chat({
      ...(signal ? { signal } : {}),
      model,
      messages: [{ role: 'user', content: 'Reply with OK.' }],
      temperature: 0,
      maxTokens: 16,
      thinking: false,
    });
    if (completion.reasoning !== null && completion.reasoning.trim().length > 0) {
      return { supported: false, detail: 'thinking disabled but the server still returned reasoning' };
    }
    return { supported: true, detail: null };
  } catch (err) {
    const verdict = refusal(err);
    if (verdict) return verdict;
    throw err;
  }
}
