/**
 * Endpoint discovery and capability probes. Each probe is one small request through a client the
 * caller supplies, so the same code runs against real servers and the fake one in tests.
 */
import { LlmError } from './llm-error';
import { createOpenAi, toLlmError, toSdkTimeout } from './openai-transport';
import type { ChatFn } from './types';

export interface DiscoveredModel {
  id: string;
  /** vLLM `max_model_len`, else `context_length` (some gateways), else null */
  maxModelLen: number | null;
  ownedBy: string | null;
  /** vLLM: the Hugging Face repo or path the served name points at */
  root: string | null;
}

/** GET {baseUrl}/models, no retries: discovery should report the endpoint's state as it is. */
export async function listModels(baseUrl: string, apiKey: string | null | undefined, timeoutMs: number): Promise<DiscoveredModel[]> {
  const timeout = toSdkTimeout(timeoutMs);
  const client = createOpenAi(baseUrl, apiKey, timeout);
  let data: unknown[];
  try {
    const page = await client.models.list({ timeout, maxRetries: 0 });
    data = page.data as unknown[];
  } catch (err) {
    const mapped = toLlmError(err, undefined, timeout);
    throw mapped instanceof LlmError
      ? mapped
      : new LlmError('CONNECTION', 'model listing aborted', { attempts: 1, cause: err });
  }
  if (!Array.isArray(data)) throw new LlmError('BAD_RESPONSE', 'models response has no data list', { attempts: 1 });
  return data.flatMap((raw): DiscoveredModel[] => {
    const card = (raw ?? {}) as Record<string, unknown>;
    if (typeof card['id'] !== 'string') return [];
    const len = card['max_model_len'] ?? card['context_length'];
    return [
      {
        id: card['id'],
        maxModelLen: typeof len === 'number' && Number.isFinite(len) ? len : null,
        ownedBy: typeof card['owned_by'] === 'string' ? card['owned_by'] : null,
        root: typeof card['root'] === 'string' ? card['root'] : null,
      },
    ];
  });
}

export interface HealthMeasure {
  ok: boolean;
  latencyMs: number;
  /** null when ok */
  error: string | null;
  errorCode: LlmError['code'] | null;
  checkedAt: Date;
  models: DiscoveredModel[];
}

/** One model listing, timed; never throws for transport failures (they are the measurement). */
export async function measureHealth(
  baseUrl: string,
  apiKey: string | null | undefined,
  timeoutMs: number,
  now: () => Date = () => new Date(),
): Promise<HealthMeasure> {
  const checkedAt = now();
  const started = performance.now();
  try {
    const models = await listModels(baseUrl, apiKey, timeoutMs);
    return { ok: true, latencyMs: performance.now() - started, error: null, errorCode: null, checkedAt, models };
  } catch (err) {
    if (!(err instanceof LlmError)) throw err;
    return { ok: false, latencyMs: performance.now() - started, error: err.message, errorCode: err.code, checkedAt, models: [] };
  }
}

export interface CapabilityProbe {
  /** true / false when the answer is clear; null when the endpoint failed for another reason */
  supported: boolean | null;
  detail: string | null;
}

/** A 4xx other than 429 is the server refusing the parameter; anything else says nothing about it. */
function refusal(err: unknown): CapabilityProbe | null {
  if (err instanceof LlmError && err.code === 'HTTP_ERROR' && err.status !== undefined && err.status >= 400 && err.status < 500) {
    return { supported: false, detail: err.message };
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
export async function probeJsonSchema(chat: ChatFn, model: string): Promise<CapabilityProbe> {
  try {
    const completion = await chat({
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
      return { supported: false, detail: `content is not JSON: ${completion.content.slice(0, 200)}` };
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
export async function probeThinkingToggle(chat: ChatFn, model: string): Promise<CapabilityProbe> {
  try {
    const completion = await chat({
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
