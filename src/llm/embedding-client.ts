/** Embeddings from an OpenAI-compatible /v1/embeddings endpoint, batched and order-preserving. */
import { LlmError } from './llm-error';
import type { EgressPolicy } from './egress';
import { createOpenAi, toLlmError, toSdkTimeout } from './openai-transport';
import { DEFAULT_RETRY_POLICY, withRetry } from './retry';
import type { EmbedFn, RetryEvent, RetryPolicy } from './types';

export interface EmbeddingClientOptions {
  baseUrl: string;
  apiKey?: string | null;
  model: string;
  /** per request (one batch) */
  timeoutMs: number;
  /** inputs per request; servers cap batch sizes and large batches time out together */
  batchSize?: number;
  retry?: RetryPolicy;
  onRetry?: (event: RetryEvent) => void;
  /** Connections only to addresses this policy allows (ENDPOINT_ALLOW). */
  egress?: EgressPolicy | undefined;
}

export interface EmbeddingClient {
  embed: EmbedFn;
}

export const DEFAULT_EMBEDDING_BATCH_SIZE = 64;

export function createEmbeddingClient(options: EmbeddingClientOptions): EmbeddingClient {
  const timeoutMs = toSdkTimeout(options.timeoutMs);
  const client = createOpenAi(options.baseUrl, options.apiKey, timeoutMs, { egress: options.egress });
  const batchSize = options.batchSize ?? DEFAULT_EMBEDDING_BATCH_SIZE;
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new RangeError(`batchSize must be a positive integer, got ${batchSize}`);
  }
  const policy = options.retry ?? DEFAULT_RETRY_POLICY;

  const embedBatch = async (texts: string[]): Promise<Float32Array[]> => {
    const { value } = await withRetry(
      async () => {
        let response: { data?: unknown };
        try {
          // 'float' explicitly: the SDK defaults to base64, which Ollama and older servers lack.
          response = await client.embeddings.create(
            { model: options.model, input: texts, encoding_format: 'float' },
            { timeout: timeoutMs, maxRetries: 0 },
          );
        } catch (err) {
          throw toLlmError(err, undefined, timeoutMs);
        }
        return toVectors(response.data, texts.length);
      },
      { policy, onRetry: options.onRetry },
    );
    return value;
  };

  return {
    embed: async (texts: string[]): Promise<Float32Array[]> => {
      const out: Float32Array[] = [];
      for (let start = 0; start < texts.length; start += batchSize) {
        out.push(...(await embedBatch(texts.slice(start, start + batchSize))));
      }
      return out;
    },
  };
}

/** Orders by `index` (the API does not promise response order) and checks one vector per input. */
function toVectors(data: unknown, expected: number): Float32Array[] {
  if (!Array.isArray(data) || data.length !== expected) {
    throw new LlmError('BAD_RESPONSE', `expected ${expected} embeddings, got ${Array.isArray(data) ? data.length : 'none'}`, {
      attempts: 1,
    });
  }
  const out = new Array<Float32Array | undefined>(expected);
  data.forEach((item: { index?: unknown; embedding?: unknown }, position) => {
    const index = typeof item.index === 'number' ? item.index : position;
    if (!Number.isInteger(index) || index < 0 || index >= expected || out[index] !== undefined) {
      throw new LlmError('BAD_RESPONSE', `embedding ${position} has an index out of range or repeated`, { attempts: 1 });
    }
    if (!Array.isArray(item.embedding) || !item.embedding.every((v) => typeof v === 'number')) {
      throw new LlmError('BAD_RESPONSE', `embedding ${index} is not a list of numbers`, { attempts: 1 });
    }
    out[index] = Float32Array.from(item.embedding as number[]);
  });
  return out as Float32Array[];
}
