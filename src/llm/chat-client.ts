/**
 * Chat completions against an OpenAI-compatible endpoint, with our own retry policy, an explicit
 * timeout per attempt, and the per-server spelling of non-standard parameters.
 */
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { LlmError } from './llm-error';
import type { EgressPolicy } from './egress';
import { createOpenAi, toLlmError, toSdkTimeout } from './openai-transport';
import { CallerAbort, DEFAULT_RETRY_POLICY, withRetry } from './retry';
import type { ChatCompletion, ChatFn, ChatRequest, EndpointKind, RetryEvent, RetryPolicy } from './types';

export interface ChatClientOptions {
  baseUrl: string;
  apiKey?: string | null;
  kind: EndpointKind;
  /** per attempt */
  timeoutMs: number;
  retry?: RetryPolicy;
  onRetry?: (event: RetryEvent) => void;
  /**
   * Receive the answer as server-sent events and assemble it. Same result as non-streaming; useful
   * behind proxies that cut idle connections during long generations. `timeoutMs` then bounds
   * the whole stream, not only the wait for headers.
   */
  stream?: boolean;
  /** Connections only to addresses this policy allows (ENDPOINT_ALLOW). */
  egress?: EgressPolicy | undefined;
}

/**
 * How each server spells what the OpenAI API lacks. OpenAI rejects unknown parameters with 400,
 * so nothing extra is sent there; llama.cpp calls the repetition penalty `repeat_penalty`;
 * Ollama's OpenAI layer ignores `think` and `chat_template_kwargs` but honours `reasoning_effort`
 * ("none" turns thinking off; "medium" is its alias for the model's default effort).
 */
const EXTRA_PARAM_NAMES: Record<
  EndpointKind,
  { topK: string | null; repetitionPenalty: string | null; thinking: 'chat_template_kwargs' | 'reasoning_effort' | null }
> = {
  VLLM: { topK: 'top_k', repetitionPenalty: 'repetition_penalty', thinking: 'chat_template_kwargs' },
  SGLANG: { topK: 'top_k', repetitionPenalty: 'repetition_penalty', thinking: 'chat_template_kwargs' },
  OTHER: { topK: 'top_k', repetitionPenalty: 'repetition_penalty', thinking: 'chat_template_kwargs' },
  LLAMA_CPP: { topK: 'top_k', repetitionPenalty: 'repeat_penalty', thinking: 'chat_template_kwargs' },
  OLLAMA: { topK: 'top_k', repetitionPenalty: 'repetition_penalty', thinking: 'reasoning_effort' },
  OPENAI: { topK: null, repetitionPenalty: null, thinking: null },
};

/** The JSON body sent for a request on a server of `kind` (exported for tests and debugging). */
export function buildChatBody(request: ChatRequest, kind: EndpointKind): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: request.model,
    messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
    stream: false,
  };
  const set = (key: string | null, value: unknown): void => {
    if (key !== null && value !== undefined) body[key] = value;
  };
  set('temperature', request.temperature);
  set('top_p', request.topP);
  set('max_tokens', request.maxTokens);
  set('seed', request.seed);
  set('frequency_penalty', request.frequencyPenalty);
  set('presence_penalty', request.presencePenalty);
  const names = EXTRA_PARAM_NAMES[kind];
  set(names.topK, request.topK);
  set(names.repetitionPenalty, request.repetitionPenalty);
  if (request.thinking !== undefined && names.thinking === 'chat_template_kwargs') {
    body['chat_template_kwargs'] = { enable_thinking: request.thinking };
  } else if (request.thinking !== undefined && names.thinking === 'reasoning_effort') {
    body['reasoning_effort'] = request.thinking ? 'medium' : 'none';
  }
  if (request.responseFormat) body['response_format'] = request.responseFormat;
  return body;
}

interface RawMessage {
  content?: unknown;
  reasoning_content?: unknown;
  reasoning?: unknown;
}

function nonEmptyString(value: unknown): string | null {
  return typeof value === 'string' && value.length > 0 ? value : null;
}

/** Token counts come from the endpoint: only whole numbers in a sane range are believed. */
export const MAX_TOKEN_COUNT = 100_000_000;

function tokenCount(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_TOKEN_COUNT ? value : null;
}

export function createChatClient(options: ChatClientOptions): ChatFn {
  const timeoutMs = toSdkTimeout(options.timeoutMs);
  const client = createOpenAi(options.baseUrl, options.apiKey, timeoutMs, { egress: options.egress });
  const policy = options.retry ?? DEFAULT_RETRY_POLICY;
  const onRetry = options.onRetry;

  return async (request: ChatRequest): Promise<ChatCompletion> => {
    const body = buildChatBody(request, options.kind) as unknown as ChatCompletionCreateParamsNonStreaming;
    const { signal } = request;
    if (options.stream) {
      const { value, attempts } = await withRetry(() => streamAttempt(client, body, timeoutMs, signal), {
        policy,
        signal,
        onRetry,
      });
      return { ...value, attempts };
    }
    const { value, attempts } = await withRetry(
      async () => {
        const started = performance.now();
        let completion: unknown;
        try {
          completion = await client.chat.completions.create(body, {
            timeout: timeoutMs,
            maxRetries: 0,
            ...(signal ? { signal } : {}),
          });
        } catch (err) {
          throw toLlmError(err, signal, timeoutMs);
        }
        const latencyMs = performance.now() - started;
        return parseCompletion(completion, latencyMs);
      },
      { policy, signal, onRetry },
    );
    return { ...value, attempts };
  };
}

function parseCompletion(completion: unknown, latencyMs: number): Omit<ChatCompletion, 'attempts'> {
  const root = (completion ?? {}) as { choices?: unknown; usage?: unknown };
  const choices = Array.isArray(root.choices) ? root.choices : [];
  const choice = choices[0] as { message?: RawMessage; finish_reason?: unknown } | undefined;
  if (!choice || typeof choice.message !== 'object' || choice.message === null) {
    throw new LlmError('BAD_RESPONSE', 'response has no choices[0].message', { attempts: 1 });
  }
  const message = choice.message;
  if (message.content !== null && message.content !== undefined && typeof message.content !== 'string') {
    throw new LlmError('BAD_RESPONSE', 'choices[0].message.content is not a string', { attempts: 1 });
  }
  const usage = (root.usage ?? {}) as { prompt_tokens?: unknown; completion_tokens?: unknown };
  return {
    // null content happens when the whole budget went to reasoning; callers treat it as empty output.
    content: typeof message.content === 'string' ? message.content : '',
    reasoning: nonEmptyString(message.reasoning_content) ?? nonEmptyString(message.reasoning),
    finishReason: typeof choice.finish_reason === 'string' ? choice.finish_reason : null,
    promptTokens: tokenCount(usage.prompt_tokens),
    completionTokens: tokenCount(usage.completion_tokens),
    latencyMs,
  };
}

interface RawChunk {
  choices?: Array<{ delta?: RawMessage; finish_reason?: unknown }>;
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } | null;
}

async function streamAttempt(
  client: ReturnType<typeof createOpenAi>,
  body: ChatCompletionCreateParamsNonStreaming,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<Omit<ChatCompletion, 'attempts'>> {
  const started = performance.now();
  // The SDK's timeout stops once headers arrive; this one covers the body as well.
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const forwardAbort = (): void => controller.abort();
  signal?.addEventListener('abort', forwardAbort, { once: true });
  const timeoutError = (): LlmError => new LlmError('TIMEOUT', `stream not finished within ${timeoutMs} ms`, { attempts: 1 });
  try {
    const stream = await client.chat.completions.create(
      { ...body, stream: true, stream_options: { include_usage: true } },
      { timeout: timeoutMs, maxRetries: 0, signal: controller.signal },
    );
    let content = '';
    let reasoning = '';
    let finishReason: string | null = null;
    let promptTokens: number | null = null;
    let completionTokens: number | null = null;
    for await (const raw of stream as AsyncIterable<unknown>) {
      const chunk = raw as RawChunk;
      const choice = chunk.choices?.[0];
      const delta = choice?.delta;
      if (typeof delta?.content === 'string') content += delta.content;
      const piece = nonEmptyString(delta?.reasoning_content) ?? nonEmptyString(delta?.reasoning);
      if (piece !== null) reasoning += piece;
      if (typeof choice?.finish_reason === 'string') finishReason = choice.finish_reason;
      if (chunk.usage) {
        promptTokens = tokenCount(chunk.usage.prompt_tokens);
        completionTokens = tokenCount(chunk.usage.completion_tokens);
      }
    }
    // The SDK ends iteration quietly on abort, so a short stream must be checked for the reason.
    if (signal?.aborted) throw new CallerAbort(signal.reason);
    if (timedOut) throw timeoutError();
    if (finishReason === null) {
      throw new LlmError('CONNECTION', 'stream ended before a finish_reason', { attempts: 1 });
    }
    return {
      content,
      reasoning: reasoning.length > 0 ? reasoning : null,
      finishReason,
      promptTokens,
      completionTokens,
      latencyMs: performance.now() - started,
    };
  } catch (err) {
    if (timedOut && !signal?.aborted) throw timeoutError();
    throw toLlmError(err, signal, timeoutMs);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', forwardAbort);
  }
}
