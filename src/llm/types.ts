/**
 * Types of the LLM transport. The chat types are the one contract with src/extraction, which
 * imports them from here (types only); llm never imports from extraction.
 */

// --- the chat contract ---

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface JsonSchemaFormat {
  type: 'json_schema';
  json_schema: { name: string; schema: Record<string, unknown>; strict?: boolean };
}

export interface ChatRequest {
  /** served model name */
  model: string;
  messages: ChatMessage[];
  temperature?: number;
  topP?: number;
  topK?: number;
  maxTokens?: number;
  seed?: number;
  frequencyPenalty?: number;
  presencePenalty?: number;
  repetitionPenalty?: number;
  /** constrained decoding */
  responseFormat?: JsonSchemaFormat;
  /** undefined = leave the server default */
  thinking?: boolean;
  signal?: AbortSignal;
}

export interface ChatCompletion {
  /** assistant content, reasoning_content not included */
  content: string;
  /** reasoning_content / reasoning field from the server, if any */
  reasoning: string | null;
  /** 'stop' | 'length' | ... */
  finishReason: string | null;
  promptTokens: number | null;
  completionTokens: number | null;
  /** duration of the attempt that succeeded (backoff waits and failed attempts excluded) */
  latencyMs: number;
  /** 1 + retries used */
  attempts: number;
}

export type ChatFn = (request: ChatRequest) => Promise<ChatCompletion>;

export interface EmbedFn {
  (texts: string[]): Promise<Float32Array[]>;
}

// --- llm-only types ---

/** The server software behind an endpoint; decides how non-standard parameters are spelled. */
export type EndpointKind = 'VLLM' | 'SGLANG' | 'OLLAMA' | 'LLAMA_CPP' | 'OPENAI' | 'OTHER';

export const ENDPOINT_KINDS: readonly EndpointKind[] = ['VLLM', 'SGLANG', 'OLLAMA', 'LLAMA_CPP', 'OPENAI', 'OTHER'];

/** Longest request timeout of an endpoint; values stored before this limit are used as this. */
export const MAX_ENDPOINT_TIMEOUT_MS = 600_000;

export interface RetryPolicy {
  /** retries after the first attempt (0 = a single attempt) */
  maxRetries: number;
  /** backoff cap of the first retry; doubles per retry (full jitter draws in [0, cap]) */
  baseDelayMs: number;
  /** upper bound of the exponential cap */
  maxDelayMs: number;
  /** longest Retry-After we wait for; longer server requests are clamped to this */
  maxRetryAfterMs?: number;
}

export interface RetryEvent {
  /** 1-based number of the attempt that just failed */
  attempt: number;
  /** wait before the next attempt */
  delayMs: number;
  /** whether the wait came from the server's Retry-After header */
  fromRetryAfter: boolean;
  error: import('./llm-error').LlmError;
}
