/**
 * A real HTTP server that speaks the OpenAI-compatible dialect of vLLM (and, through options,
 * its neighbours), for tests that must exercise the whole HTTP path: SDK, retries, timeouts,
 * streaming, error bodies. Response shapes follow vLLM's `/v1` API byte for byte where it matters
 * (`reasoning_content`, `stop_reason`, `prompt_logprobs`, flat `{object:'error',…}` error bodies).
 *
 * ## Start / stop
 * ```ts
 * const fake = await startFakeLlm({ models: ['qwen3-8b'] });
 * // fake.baseUrl === 'http://127.0.0.1:<port>/v1'
 * ...
 * await fake.close();
 * ```
 * `startFakeLlm(options)` listens on 127.0.0.1 on a free port (`port: 0`) unless `options.port`
 * is given. Options (all optional, all changeable later with `fake.configure({...})`):
 * - `models`: served models, strings or `{ id, maxModelLen?, root? }` (default `['fake-model']`,
 *   max_model_len 32768). Chat/embedding requests for any other model get vLLM's 404
 *   "The model `x` does not exist." unless `strictModels: false`.
 * - `apiKey`: when set, requests without `Authorization: Bearer <apiKey>` get 401
 *   `{"error":"Unauthorized"}` (vLLM's `--api-key` middleware).
 * - `latencyMs`: time from a request's arrival to its answer, as a GPU server's fixed service
 *   time: reading and parsing the request count toward it (a response spec's `delayMs` is added).
 * - `reasoningField`: where reasoning goes: `'reasoning_content'` (vLLM ≤0.10, SGLang; default),
 *   `'reasoning'` (newer vLLM, Ollama) or `'both'`.
 * - `rejectParams`: body keys that make the server answer 400 (e.g. `['response_format']` for a
 *   server without constrained decoding, `['chat_template_kwargs']`, `['top_k']` for OpenAI).
 * - `errorStyle`: `'vllm'` (flat `{object:'error', message, type, param, code}`, default) or
 *   `'openai'` (nested `{error:{message, type, param, code}}`, as OpenAI / llama.cpp / newer vLLM).
 * - `embeddingDim`: length of the deterministic embedding vectors (default 64).
 * - `recordRequests`: `false` keeps `fake.requests` (and so `chatRequests()`) empty, for memory that
 *   stays flat over 50,000-request benchmarks; indexes, stats and metrics still count (default true).
 * - `maxRunning`: the engine's batch size (vLLM's `--max-num-seqs`, default 256) for /metrics.
 * - `metrics`: `false` makes GET /metrics a 404 like any unknown route (default true).
 * - `answerFromReport`: answer from markers in the report text (see below; default false).
 * - `faults`: a fault mix (see below; default none).
 *
 * ## Fault mix
 * `faults: { serverError?, rateLimited?, stall?, garbage?, retryAfterSeconds?, stallMs?, seed? }`
 * makes an unreliable engine of it: before any other source below, each chat request draws once
 * from a seeded generator (`seed`, default 1) and, with those probabilities, gets a 500, 502 or
 * 503 (`serverError`); a 429 with `Retry-After: retryAfterSeconds` (default 1; `rateLimited`);
 * its normal answer after `stallMs` more (default 30,000: set it beyond the client's timeout;
 * `stall`); or a 200 whose body is garbage (`garbage`: an HTML page, a cut-off completion, JSON
 * that is not a completion, an empty body, or a completion whose content is not JSON). The rest
 * is answered as below. An injected fault's answer has the header `x-fake-fault: <kind>`;
 * `fake.faults()` (and GET /_fake/faults) counts what was injected.
 *
 * ## Scripting chat completions
 * Each POST /v1/chat/completions is answered by the first source that yields a response spec:
 * 1. the **queue** (`fake.enqueue(spec, …)` or `fake.script([spec, …])`), consumed FIFO;
 * 2. the **rules** (`fake.addRule(rule)` or `fake.script(rule)`), first matching rule wins:
 *    `{ match?: string | RegExp | (body, ctx) => boolean, respond: spec | spec[] | handler, times? }`
 *    — a string matches a substring of all message contents joined by "\n"; an array `respond`
 *    gives its i-th element to the i-th match and stops matching when exhausted; `times` caps
 *    the number of matches;
 * 3. the **handler** (`fake.setHandler(fn)` or `fake.script(fn)`): `(body, ctx) => spec | undefined`
 *    (may be async; `undefined` falls through);
 * 4. with `answerFromReport: true`, **markers in the report's message**: the last user message
 *    with a marker (the prompt's final instruction comes after the report), the marker anywhere in
 *    a line, the first such line per marker wins:
 *    - `ANSWER: <text>` answers with `<text>` (up to the end of the line, trimmed) as `content`,
 *      valid JSON or not, so each prediction can be checked against its own report;
 *    - `FAIL: <status>` answers with that HTTP error (a status outside 400–599 means 500);
 *    - `STALL: <ms>` delays the answer by that many milliseconds (on top of `latencyMs`);
 *    markers combine (`STALL` + `ANSWER`, `STALL` + `FAIL`; `FAIL` beats `ANSWER`), `STALL` alone
 *    delays the default content; a message without markers falls through to
 * 5. the **default**: a valid JSON object built from `response_format.json_schema.schema` when
 *    present (first enum value, `""`, `0`, `false`, `[]`, nested objects with all properties),
 *    else `'{}'`.
 *
 * ## Evidence
 * When the prompt asks for quotes (its JSON template has an `"evidence": {…}` line, or the
 * response_format schema an `evidence` property), the answers of sources 4 and 5 that are a JSON
 * object without an `evidence` key get one: `fakeQuotes(reportText, keys, evidenceSeed)` gives
 * the i-th key one quote of the kind `QUOTE_KINDS[(seed + i) % 4]`, cut from the report text
 * (after the `[file name]: …` line) at a position drawn with `seed + i`, in whole characters:
 * `EXACT` a verbatim slice; `CASE_AND_SPACE` that slice with the case of its ASCII letters
 * swapped and each space doubled (aligns NORMALISED); `SLIGHTLY_WRONG` a slice of up to 36
 * code units with one ASCII letter from its middle on changed (aligns FUZZY); `INVENTED` a sentence that is
 * not in the report (UNALIGNED). `evidenceSeed` (default 1) is an option like the others. Scripted
 * answers (queue, rules, handler) are sent as they are; a handler can call `withFakeEvidence`.
 *
 * A response spec (`FakeResponseSpec`):
 * `{ content?, reasoning?, finishReason?, usage?: {promptTokens?, completionTokens?},
 *    status?, error?, errorType?, retryAfter?, headers?, delayMs?, dropConnection?, rawBody?,
 *    reasoningField?, chunkDelayMs?, dropAfterChunks? }`
 * - `status` ≥ 400 (or `error` alone, meaning 400) sends an error body in the configured style;
 *   `retryAfter` (seconds or an HTTP date string) sets the `Retry-After` header (429/503).
 * - `dropConnection: true` destroys the socket without answering (a connection error).
 * - `delayMs` waits before answering (use a value above the client timeout to force a timeout).
 * - `rawBody` sends that exact text as the 200 body (malformed responses).
 * - Streaming only: `chunkDelayMs` waits between SSE events; `dropAfterChunks: n` destroys the
 *   socket after n events (a connection lost mid-answer).
 * - Usage defaults to an estimate (characters / 4) of prompt and content + reasoning.
 *
 * The context `ctx` (`FakeChatContext`) gives `index` (0-based among chat requests this server has
 * received, in arrival order), `model`, `messages` (content flattened to strings), `systemText`,
 * `lastUserText`, `allText`, `temperature`, and the `request` record. Self-consistency tests can,
 * for instance, answer by temperature: `fake.script((b) => ({ content: b.temperature === 0.7 ? A : B }))`.
 *
 * `stream: true` requests get SSE chunks (`chat.completion.chunk`) with `delta.reasoning_content` /
 * `delta.content`, a final chunk with `finish_reason`, a usage chunk with `choices: []` when
 * `stream_options.include_usage`, then `data: [DONE]`.
 *
 * ## Embeddings
 * POST /v1/embeddings returns `fakeEmbedding(text, embeddingDim)` per input: L2-normalised feature
 * hashing of lower-cased words and character trigrams, so texts sharing words are close (useful
 * for medoid tests) and identical texts are identical. `encoding_format: 'base64'` (the openai
 * SDK's default) returns little-endian float32 in base64, as vLLM does. `fake.scriptEmbeddings(fn)`
 * can override: `(inputs: string[], ctx) => { vectors?, rawBody?, status?, error?, retryAfter?,
 * delayMs?, dropConnection? } | undefined` (`ctx.index` counts embedding requests from 0).
 *
 * ## Inspecting what was sent
 * `fake.requests` lists every request in arrival order: `{ index, method, path, headers (lower-case
 * keys), body (parsed JSON or undefined), rawBody, receivedAt (ms since epoch, sub-ms precision) }`.
 * `fake.chatRequests()` returns the parsed bodies of chat requests only (e.g. to assert
 * `temperature`, `top_k`, `repetition_penalty`, `chat_template_kwargs`, `response_format`, `seed`).
 * `fake.reset()` clears queue, rules, handler, embedding handler, recorded requests, stats and
 * metrics counters; `fake.clearRequests()` clears only the records.
 *
 * ## Concurrency
 * `fake.stats()` returns `{ chatRequests, inFlight, peakInFlight }` (`FakeStats`) for
 * POST /v1/chat/completions, each request counted from its arrival until its response is fully
 * written or its socket closes (streams included; rejected requests too, briefly).
 * `fake.resetStats()` sets `peakInFlight` back to the current `inFlight` and `chatRequests` to 0.
 * Over HTTP, for tests in another process: GET /_fake/stats (that JSON) and POST /_fake/reset-stats
 * (resets, answers the JSON after the reset).
 *
 * ## Metrics
 * GET /metrics answers in Prometheus text format as vLLM 0.9.2 – 0.11 does (`# HELP` / `# TYPE`
 * lines, labels `engine="0"` and `model_name`, values such as `3.0` or `1.2e+07`; no `_created`
 * series), one series per served model plus any other model name that received traffic
 * (`strictModels: false`). The values come from the traffic, per model:
 * - gauges `vllm:num_requests_running` (requests in flight, at most `maxRunning`),
 *   `vllm:num_requests_waiting` (the excess), `vllm:kv_cache_usage_perc` and its deprecated twin
 *   `vllm:gpu_cache_usage_perc` (`min(1, running / maxRunning)`). In flight counts here from the
 *   moment a request passed validation (a known model, valid messages);
 * - counters `vllm:prefix_cache_queries_total` (the estimated prompt tokens of every valid chat
 *   request) and `vllm:prefix_cache_hits_total` (characters / 4, floored, of the longest common
 *   prefix between the prompt, i.e. the message contents joined by "\n", and the last 64 distinct
 *   prompts of that model: a simple stand-in for vLLM's prefix caching);
 * - counters `vllm:prompt_tokens_total`, `vllm:generation_tokens_total` (the usage reported) and
 *   `vllm:request_success_total{finished_reason}` (series `stop`, `length`, `abort` from the start),
 *   counted when a 200 completion has been written in full; error, dropped and `rawBody` answers
 *   count no tokens.
 *
 * ## Any route, answered as scripted
 * `fake.scriptRoutes(fn)` answers any request before the routes below (GET /v1/models, /metrics,
 * chat, …): `(request: RecordedRequest) => FakeRouteSpec | undefined` (may be async; `undefined`
 * falls through). A `FakeRouteSpec` is `{ status?, headers?, body?, contentType?, delayMs?,
 * chunked?, dropConnection? }`: the exact body text with that status (default 200) and
 * content type (default application/json), written in 64 KiB pieces without a content-length
 * when `chunked`. For what a hostile or misconfigured server sends: an HTML error page, the
 * request's own Authorization header echoed back, a redirect (`status: 302, headers: { location }`),
 * a listing of 300,000 models. `fake.reset()` removes it.
 *
 * ## Other routes
 * GET /v1/models (vLLM model cards), GET /health (200, empty), anything else 404
 * `{"detail":"Not Found"}` as FastAPI does. With `apiKey`, only /health, /metrics and /_fake/*
 * answer without the key.
 *
 * ## Another process
 * `main.ts` beside this file starts the server alone and prints one JSON line with its address; see
 * its header.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createHash, randomBytes } from 'node:crypto';

export type ReasoningField = 'reasoning_content' | 'reasoning' | 'both';

export interface FakeModel {
  id: string;
  maxModelLen?: number | null;
  root?: string;
}

export interface FakeUsageSpec {
  promptTokens?: number;
  completionTokens?: number;
}

export interface FakeResponseSpec {
  content?: string;
  reasoning?: string | null;
  finishReason?: string;
  usage?: FakeUsageSpec;
  status?: number;
  error?: string;
  /** Error `type` in the body; defaults from the status (BadRequestError, NotFoundError, …). */
  errorType?: string;
  retryAfter?: number | string;
  headers?: Record<string, string>;
  delayMs?: number;
  dropConnection?: boolean;
  rawBody?: string;
  reasoningField?: ReasoningField;
  /** streaming only: wait between SSE chunks */
  chunkDelayMs?: number;
  /** streaming only: destroy the socket after this many chunks (a connection lost mid-answer) */
  dropAfterChunks?: number;
}

export interface RecordedRequest {
  index: number;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: unknown;
  rawBody: string;
  receivedAt: number;
}

export interface FakeChatMessage {
  role: string;
  content: string;
}

/** The JSON body of a chat request, loosely typed: tests read whatever the client sent. */
export type FakeChatBody = Record<string, unknown> & {
  model?: string;
  messages?: unknown[];
  temperature?: number;
  stream?: boolean;
};

export interface FakeChatContext {
  index: number;
  model: string;
  messages: FakeChatMessage[];
  systemText: string;
  lastUserText: string;
  allText: string;
  temperature: number | undefined;
  request: RecordedRequest;
}

export type FakeChatHandler = (
  body: FakeChatBody,
  ctx: FakeChatContext,
) => FakeResponseSpec | undefined | Promise<FakeResponseSpec | undefined>;

export interface FakeRule {
  match?: string | RegExp | ((body: FakeChatBody, ctx: FakeChatContext) => boolean);
  respond: FakeResponseSpec | FakeResponseSpec[] | FakeChatHandler;
  times?: number;
}

export interface FakeEmbeddingSpec {
  vectors?: number[][];
  /** exact 200 body text (e.g. data out of index order, malformed JSON) */
  rawBody?: string;
  status?: number;
  error?: string;
  retryAfter?: number | string;
  delayMs?: number;
  dropConnection?: boolean;
}

/** An exact answer to any route (see "Any route, answered as scripted"). */
export interface FakeRouteSpec {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  contentType?: string;
  delayMs?: number;
  /** written in pieces without a content-length (chunked transfer encoding) */
  chunked?: boolean;
  dropConnection?: boolean;
}

export type FakeRouteHandler = (request: RecordedRequest) => FakeRouteSpec | undefined | Promise<FakeRouteSpec | undefined>;

export interface FakeEmbeddingContext {
  index: number;
  model: string;
  request: RecordedRequest;
}

export type FakeEmbeddingHandler = (
  inputs: string[],
  ctx: FakeEmbeddingContext,
) => FakeEmbeddingSpec | undefined | Promise<FakeEmbeddingSpec | undefined>;

export interface FakeLlmOptions {
  port?: number;
  host?: string;
  models?: Array<string | FakeModel>;
  strictModels?: boolean;
  apiKey?: string | null;
  latencyMs?: number;
  reasoningField?: ReasoningField;
  rejectParams?: string[];
  errorStyle?: 'vllm' | 'openai';
  embeddingDim?: number;
  /** `false` keeps `requests` empty (flat memory in long benchmarks); counters still count. */
  recordRequests?: boolean;
  /** Engine batch size (vLLM's `--max-num-seqs`): in-flight requests beyond it count as waiting. */
  maxRunning?: number;
  /** `false` makes GET /metrics a 404, as for a server started without metrics. */
  metrics?: boolean;
  /** Answer from `ANSWER:` / `FAIL:` / `STALL:` markers in the report's user message. */
  answerFromReport?: boolean;
  /** Seed of the quotes added when the prompt asks for evidence (see Evidence; default 1). */
  evidenceSeed?: number;
  /** Faults injected into chat completions, each a probability per request; `null` turns them off. */
  faults?: FakeFaultMix | null;
}

/** Probabilities (0–1, summing to at most 1) of each fault per chat request, and their shape. */
export interface FakeFaultMix {
  /** 500, 502 or 503 */
  serverError?: number;
  /** 429 with Retry-After */
  rateLimited?: number;
  /** the normal answer, `stallMs` late */
  stall?: number;
  /** a 200 whose body (or content) is garbage */
  garbage?: number;
  retryAfterSeconds?: number;
  stallMs?: number;
  seed?: number;
}

/** What the fault mix injected, by kind, and the chat requests it drew for. */
export interface FakeFaultCounts {
  drawn: number;
  serverError: number;
  rateLimited: number;
  stall: number;
  garbage: number;
}

/** Concurrency of POST /v1/chat/completions, from arrival until the response is written or the socket closes. */
export interface FakeStats {
  chatRequests: number;
  inFlight: number;
  peakInFlight: number;
}

export interface FakeLlm {
  readonly baseUrl: string;
  readonly port: number;
  readonly requests: RecordedRequest[];
  /** Function → handler; array → queued responses; object with `respond` → rule. */
  script(what: FakeChatHandler | FakeResponseSpec[] | FakeRule): void;
  enqueue(...specs: FakeResponseSpec[]): void;
  addRule(rule: FakeRule): void;
  setHandler(handler: FakeChatHandler | null): void;
  scriptEmbeddings(handler: FakeEmbeddingHandler | null): void;
  /** Answers any request before the routes, when the handler returns a spec. */
  scriptRoutes(handler: FakeRouteHandler | null): void;
  setModels(models: Array<string | FakeModel>): void;
  configure(options: Omit<FakeLlmOptions, 'port' | 'host'>): void;
  chatRequests(): FakeChatBody[];
  clearRequests(): void;
  stats(): FakeStats;
  /** Counts of the faults injected by the fault mix (zero without one). */
  faults(): FakeFaultCounts;
  /** Peak back to the current in-flight count, chat request count back to 0. */
  resetStats(): void;
  reset(): void;
  close(): Promise<void>;
}

interface RuleState {
  rule: FakeRule;
  used: number;
}

/** What one vLLM engine would count for one served model. */
interface EngineCounters {
  inFlight: number;
  prefixQueries: number;
  prefixHits: number;
  promptTokens: number;
  generationTokens: number;
  success: Map<string, number>;
  recentPrompts: string[];
}

const DEFAULT_MAX_MODEL_LEN = 32768;
const DEFAULT_MAX_RUNNING = 256;
const PREFIX_HISTORY = 64;
// vLLM creates these series up front, so a scraper sees them at 0 before any traffic.
const FINISH_REASONS = ['stop', 'length', 'abort'];

const ERROR_TYPES: Record<number, string> = {
  400: 'BadRequestError',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFoundError',
  408: 'RequestTimeout',
  409: 'Conflict',
  422: 'UnprocessableEntity',
  429: 'TooManyRequests',
  500: 'InternalServerError',
  502: 'BadGateway',
  503: 'ServiceUnavailable',
  504: 'GatewayTimeout',
};

/** Deterministic, L2-normalised feature-hashing embedding (words + character trigrams). */
export function fakeEmbedding(text: string, dim = 64): number[] {
  const vector = new Array<number>(dim).fill(0);
  const lower = text.toLowerCase();
  const features: string[] = [];
  for (const word of lower.split(/[^\p{L}\p{N}]+/u)) {
    if (word.length > 0) features.push(`w:${word}`);
  }
  const padded = ` ${lower} `;
  for (let i = 0; i + 3 <= padded.length; i += 1) features.push(`c:${padded.slice(i, i + 3)}`);
  for (const feature of features) {
    const digest = createHash('sha256').update(feature).digest();
    const slot = digest.readUInt32LE(0) % dim;
    const sign = (digest[4] ?? 0) & 1 ? 1 : -1;
    vector[slot] = (vector[slot] ?? 0) + sign;
  }
  const norm = Math.sqrt(vector.reduce((sum, v) => sum + v * v, 0));
  if (norm === 0) {
    // Empty text still needs a unit vector so cosine similarity stays defined.
    vector[0] = 1;
    return vector;
  }
  return vector.map((v) => v / norm);
}

export const QUOTE_KINDS = ['EXACT', 'CASE_AND_SPACE', 'SLIGHTLY_WRONG', 'INVENTED'] as const;
export type QuoteKind = (typeof QUOTE_KINDS)[number];

/** One quote per key, of the kinds and from the places the Evidence section of the header says. */
export function fakeQuotes(reportText: string, keys: readonly string[], seed = 1): Record<string, { quote: string; kind: QuoteKind }[]> {
  const out: Record<string, { quote: string; kind: QuoteKind }[]> = {};
  keys.forEach((key, i) => {
    const kind = QUOTE_KINDS[(((seed + i) % 4) + 4) % 4]!;
    const random = seededRandom(seed + i);
    const length = Math.min(reportText.length, kind === 'SLIGHTLY_WRONG' ? 36 : 24);
    let start = Math.floor(random() * (reportText.length - length + 1));
    let end = start + length;
    // Whole characters only: no half of a surrogate pair, no accent cut from its letter.
    const partOfPrevious = (at: number): boolean => /^[\udc00-\udfff\p{M}]/u.test(reportText.slice(at, at + 1));
    while (start < end && partOfPrevious(start)) start++;
    while (end > start && end < reportText.length && partOfPrevious(end)) end--;
    const slice = reportText.slice(start, end);
    let quote: string;
    if (kind === 'EXACT') quote = slice;
    else if (kind === 'CASE_AND_SPACE') quote = slice.replace(/[a-zA-Z]/g, (c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).replace(/ /g, '  ');
    else if (kind === 'SLIGHTLY_WRONG') {
      const letter = slice.slice(Math.floor(slice.length / 2)).search(/[a-zA-Z]/);
      const at = letter < 0 ? slice.length : Math.floor(slice.length / 2) + letter;
      quote = slice.slice(0, at) + (slice[at] === 'q' ? 'z' : 'q') + slice.slice(at + 1);
    } else quote = `Fake quote ${seed + i}: nothing of the sort was written`;
    out[key] = [{ quote, kind }];
  });
  return out;
}

/** The report text of a prompt in the built-in layout: the message after its `[file name]:` line. */
export function promptReportText(messages: readonly FakeChatMessage[]): string | null {
  const message = messages.find((m) => m.role === 'user' && m.content.startsWith('[file name]:'));
  if (!message) return null;
  const newline = message.content.indexOf('\n');
  return newline < 0 ? '' : message.content.slice(newline + 1);
}

/** The keys a prompt asks quotes for: its JSON template's evidence line, else its schema's; null when it asks for none. */
export function evidenceKeysAsked(body: FakeChatBody, messages: readonly FakeChatMessage[]): string[] | null {
  for (const m of messages) {
    const line = /^\s*"evidence": (\{.*\})\s*$/m.exec(m.content);
    if (!line) continue;
    try {
      return Object.keys(JSON.parse(line[1]!) as Record<string, unknown>);
    } catch {
      // not a template line
    }
  }
  const schema = (body['response_format'] as { json_schema?: { schema?: { properties?: Record<string, { properties?: object }> } } } | undefined)?.json_schema?.schema;
  const evidence = schema?.properties?.['evidence']?.properties;
  return evidence ? Object.keys(evidence) : null;
}

/**
 * `content` with fake quotes added when the prompt asks for evidence and the content's answer (the
 * whole content, or its last ```json block) is an object without an `evidence` key; else as it was.
 */
export function withFakeEvidence(content: string, body: FakeChatBody, messages: readonly FakeChatMessage[], seed = 1): string {
  const keys = evidenceKeysAsked(body, messages);
  const text = promptReportText(messages);
  if (!keys || text === null) return content;
  const fences = [...content.matchAll(/```json\n([\s\S]*?)\n```/g)];
  const last = fences[fences.length - 1];
  const [from, to] = last ? [last.index! + 8, last.index! + 8 + last[1]!.length] : [0, content.length];
  let answer: unknown;
  try {
    answer = JSON.parse(content.slice(from, to));
  } catch {
    return content;
  }
  if (answer === null || typeof answer !== 'object' || Array.isArray(answer) || 'evidence' in answer) return content;
  const quotes = fakeQuotes(text, keys, seed);
  const evidence = Object.fromEntries(Object.entries(quotes).map(([k, list]) => [k, list.map((q) => q.quote)]));
  return content.slice(0, from) + JSON.stringify({ ...answer, evidence }) + content.slice(to);
}

/** Builds a value valid against a (simple) JSON schema, for the default handler. */
export function exampleFromSchema(schema: unknown, depth = 0): unknown {
  if (depth > 12 || schema === null || typeof schema !== 'object') return null;
  const s = schema as Record<string, unknown>;
  if ('const' in s) return s['const'];
  if ('default' in s) return s['default'];
  if (Array.isArray(s['enum']) && s['enum'].length > 0) return s['enum'][0];
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const branches = s[key];
    if (Array.isArray(branches) && branches.length > 0) return exampleFromSchema(branches[0], depth + 1);
  }
  let type = s['type'];
  if (Array.isArray(type)) type = type.find((t) => t !== 'null') ?? type[0];
  if (type === undefined && typeof s['properties'] === 'object') type = 'object';
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const props = (s['properties'] ?? {}) as Record<string, unknown>;
      for (const [name, sub] of Object.entries(props)) out[name] = exampleFromSchema(sub, depth + 1);
      return out;
    }
    case 'array': {
      const minItems = typeof s['minItems'] === 'number' ? s['minItems'] : 0;
      return Array.from({ length: minItems }, () => exampleFromSchema(s['items'], depth + 1));
    }
    case 'string':
      return typeof s['minLength'] === 'number' && s['minLength'] > 0 ? 'x'.repeat(s['minLength']) : '';
    case 'integer':
    case 'number':
      return typeof s['minimum'] === 'number' ? s['minimum'] : 0;
    case 'boolean':
      return false;
    default:
      return null;
  }
}

function estimateTokens(text: string): number {
  return text.length === 0 ? 0 : Math.ceil(text.length / 4);
}

function flattenContent(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part) =>
        part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string'
          ? (part as { text: string }).text
          : '',
      )
      .join('');
  }
  return '';
}

function normaliseModels(models: Array<string | FakeModel>): FakeModel[] {
  return models.map((m) => (typeof m === 'string' ? { id: m } : m));
}


function randomId(prefix: string): string {
  return `${prefix}-${randomBytes(16).toString('hex')}`;
}

/** Compares in slices first: prompts sharing a long system prompt would otherwise cost a loop per character. */
function commonPrefixLength(a: string, b: string): number {
  const max = Math.min(a.length, b.length);
  const step = 256;
  let i = 0;
  while (i + step <= max && a.slice(i, i + step) === b.slice(i, i + step)) i += step;
  while (i < max && a.charCodeAt(i) === b.charCodeAt(i)) i += 1;
  return i;
}

/**
 * The user message that carries the report: the last one with a marker (the prompt layout puts
 * the final instruction after the report), else the last user message.
 */
function reportMessage(messages: readonly FakeChatMessage[]): string {
  const users = messages.filter((m) => m.role === 'user').reverse();
  return (users.find((m) => /ANSWER:|FAIL:|STALL:/.test(m.content)) ?? users[0])?.content ?? '';
}

/** The response spec written in a report by `ANSWER:` / `FAIL:` / `STALL:` lines, or undefined without markers. */
function specFromReport(text: string, fallbackContent: string): FakeResponseSpec | undefined {
  const lines = text.split(/\r?\n/);
  const after = (marker: string): string | undefined => {
    for (const line of lines) {
      const at = line.indexOf(marker);
      if (at >= 0) return line.slice(at + marker.length).trim();
    }
    return undefined;
  };
  const answer = after('ANSWER:');
  const fail = after('FAIL:');
  const stall = after('STALL:');
  if (answer === undefined && fail === undefined && stall === undefined) return undefined;
  const spec: FakeResponseSpec = { content: answer ?? fallbackContent };
  if (fail !== undefined) {
    const status = Number.parseInt(fail, 10);
    spec.status = status >= 400 && status <= 599 ? status : 500;
  }
  const delayMs = Number.parseFloat(stall ?? '');
  if (delayMs > 0) spec.delayMs = delayMs;
  return spec;
}

/** A sample value as Python's prometheus_client writes it: `3.0`, `0.25`, `1.2345678e+07`. */
function promValue(value: number): string {
  const text = Number.isInteger(value) ? `${value}.0` : String(value);
  const dot = text.indexOf('.');
  if (value > 0 && dot > 6) {
    const mantissa = `${text[0]}.${text.slice(1, dot)}${text.slice(dot + 1)}`.replace(/[.0]+$/, '');
    return `${mantissa}e+${String(dot - 1).padStart(2, '0')}`;
  }
  return text;
}

/** Labels sorted by name, as prometheus_client writes them. */
function promLabels(labels: Record<string, string>): string {
  const escape = (v: string): string => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
  const pairs = Object.keys(labels)
    .sort()
    .map((k) => `${k}="${escape(labels[k] ?? '')}"`);
  return `{${pairs.join(',')}}`;
}

function checkMaxRunning(value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new RangeError('maxRunning must be a positive integer');
  return value;
}

/** mulberry32: a small seeded generator, so a fault mix is the same from run to run. */
function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function checkFaults(faults: FakeFaultMix | null | undefined): FakeFaultMix | null {
  if (!faults) return null;
  const shares = [faults.serverError, faults.rateLimited, faults.stall, faults.garbage].map((p) => p ?? 0);
  if (shares.some((p) => !Number.isFinite(p) || p < 0 || p > 1) || shares.reduce((a, b) => a + b, 0) > 1 + 1e-9) {
    throw new RangeError('fault probabilities must be between 0 and 1 and sum to at most 1');
  }
  return faults;
}

const GARBAGE_BODIES = [
  '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>',
  '{"id":"chatcmpl-cut","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"{\\"diag',
  '{"object":"list","data":[]}',
  '',
];

/** Starts the fake server; resolves once it is listening. */
export async function startFakeLlm(options: FakeLlmOptions = {}): Promise<FakeLlm> {
  const settings = {
    models: normaliseModels(options.models ?? ['fake-model']),
    strictModels: options.strictModels ?? true,
    apiKey: options.apiKey ?? null,
    latencyMs: options.latencyMs ?? 0,
    reasoningField: options.reasoningField ?? ('reasoning_content' as ReasoningField),
    rejectParams: options.rejectParams ?? [],
    errorStyle: options.errorStyle ?? ('vllm' as 'vllm' | 'openai'),
    embeddingDim: options.embeddingDim ?? 64,
    recordRequests: options.recordRequests ?? true,
    maxRunning: checkMaxRunning(options.maxRunning ?? DEFAULT_MAX_RUNNING),
    metrics: options.metrics ?? true,
    answerFromReport: options.answerFromReport ?? false,
    evidenceSeed: options.evidenceSeed ?? 1,
    faults: checkFaults(options.faults),
  };
  let faultRandom = seededRandom(settings.faults?.seed ?? 1);
  const faultCounts: FakeFaultCounts = { drawn: 0, serverError: 0, rateLimited: 0, stall: 0, garbage: 0 };
  const requests: RecordedRequest[] = [];
  let requestCount = 0;
  const stats: FakeStats = { chatRequests: 0, inFlight: 0, peakInFlight: 0 };
  const engines = new Map<string, EngineCounters>();
  let queue: FakeResponseSpec[] = [];
  let rules: RuleState[] = [];
  let handler: FakeChatHandler | null = null;
  let embeddingHandler: FakeEmbeddingHandler | null = null;
  let routeHandler: FakeRouteHandler | null = null;
  let chatCount = 0;
  let embeddingCount = 0;
  const sockets = new Set<Socket>();
  // Pending delays end early on close(), so a slow scripted answer never outlives the server.
  const pendingSleeps = new Map<NodeJS.Timeout, () => void>();
  const sleep = (ms: number): Promise<void> =>
    ms > 0
      ? new Promise((resolve) => {
          const timer = setTimeout(() => {
            pendingSleeps.delete(timer);
            resolve();
          }, ms);
          pendingSleeps.set(timer, resolve);
        })
      : Promise.resolve();
  const createdAt = Math.floor(Date.now() / 1000);

  const sendJson = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text).toString(),
      'x-request-id': randomBytes(8).toString('hex'),
      ...headers,
    });
    res.end(text);
  };

  const sendError = (
    res: ServerResponse,
    status: number,
    message: string,
    extra: { type?: string; retryAfter?: number | string; headers?: Record<string, string> } = {},
  ): void => {
    const type = extra.type ?? ERROR_TYPES[status] ?? 'Error';
    const headers: Record<string, string> = { ...(extra.headers ?? {}) };
    if (extra.retryAfter !== undefined) headers['retry-after'] = String(extra.retryAfter);
    const body =
      settings.errorStyle === 'vllm'
        ? { object: 'error', message, type, param: null, code: status }
        : { error: { message, type, param: null, code: status } };
    sendJson(res, status, body, headers);
  };

  const modelCards = (): unknown => ({
    object: 'list',
    data: settings.models.map((m) => ({
      id: m.id,
      object: 'model',
      created: createdAt,
      owned_by: 'vllm',
      root: m.root ?? m.id,
      parent: null,
      max_model_len: m.maxModelLen === undefined ? DEFAULT_MAX_MODEL_LEN : m.maxModelLen,
      permission: [
        {
          id: randomId('modelperm'),
          object: 'model_permission',
          created: createdAt,
          allow_create_engine: false,
          allow_sampling: true,
          allow_logprobs: true,
          allow_search_indices: false,
          allow_view: true,
          allow_fine_tuning: false,
          organization: '*',
          group: null,
          is_blocking: false,
        },
      ],
    })),
  });

  const modelKnown = (model: unknown): boolean =>
    !settings.strictModels || settings.models.some((m) => m.id === model);

  const engineFor = (model: string): EngineCounters => {
    let engine = engines.get(model);
    if (!engine) {
      engine = {
        inFlight: 0,
        prefixQueries: 0,
        prefixHits: 0,
        promptTokens: 0,
        generationTokens: 0,
        success: new Map(FINISH_REASONS.map((r) => [r, 0])),
        recentPrompts: [],
      };
      engines.set(model, engine);
    }
    return engine;
  };

  // vLLM caches KV blocks by prefix; the longest common prefix with recent prompts approximates its hits.
  const queryPrefixCache = (engine: EngineCounters, prompt: string): void => {
    let longest = 0;
    for (const seen of engine.recentPrompts) {
      longest = Math.max(longest, commonPrefixLength(seen, prompt));
      if (longest === prompt.length) break;
    }
    engine.prefixQueries += estimateTokens(prompt);
    engine.prefixHits += Math.floor(longest / 4);
    const known = engine.recentPrompts.indexOf(prompt);
    if (known >= 0) engine.recentPrompts.splice(known, 1);
    engine.recentPrompts.push(prompt);
    if (engine.recentPrompts.length > PREFIX_HISTORY) engine.recentPrompts.shift();
  };

  const countSuccess = (model: string, promptTokens: number, completionTokens: number, finishReason: string): void => {
    const engine = engineFor(model);
    engine.promptTokens += promptTokens;
    engine.generationTokens += completionTokens;
    engine.success.set(finishReason, (engine.success.get(finishReason) ?? 0) + 1);
  };

  const resetEngines = (): void => {
    // In-flight counts describe live sockets and must survive a reset.
    for (const engine of engines.values()) {
      engine.prefixQueries = 0;
      engine.prefixHits = 0;
      engine.promptTokens = 0;
      engine.generationTokens = 0;
      engine.success = new Map(FINISH_REASONS.map((r) => [r, 0]));
      engine.recentPrompts = [];
    }
  };

  const metricsText = (): string => {
    const names = [...new Set([...settings.models.map((m) => m.id), ...engines.keys()])];
    const served = names.map((name) => ({ name, engine: engineFor(name) }));
    const lines: string[] = [];
    const family = (
      metric: string,
      type: 'gauge' | 'counter',
      help: string,
      value: (engine: EngineCounters) => number,
    ): void => {
      lines.push(`# HELP ${metric} ${help}`, `# TYPE ${metric} ${type}`);
      for (const { name, engine } of served) {
        lines.push(`${metric}${promLabels({ engine: '0', model_name: name })} ${promValue(value(engine))}`);
      }
    };
    const running = (e: EngineCounters): number => Math.min(e.inFlight, settings.maxRunning);
    const kvUsage = (e: EngineCounters): number => Math.min(1, running(e) / settings.maxRunning);
    family('vllm:num_requests_running', 'gauge', 'Number of requests in model execution batches.', running);
    family('vllm:num_requests_waiting', 'gauge', 'Number of requests waiting to be processed.', (e) =>
      Math.max(0, e.inFlight - settings.maxRunning),
    );
    // The missing space before DEPRECATED is vLLM's own (0.9.2 – 0.11).
    family(
      'vllm:gpu_cache_usage_perc',
      'gauge',
      'GPU KV-cache usage. 1 means 100 percent usage.DEPRECATED: Use vllm:kv_cache_usage_perc instead.',
      kvUsage,
    );
    family('vllm:kv_cache_usage_perc', 'gauge', 'KV-cache usage. 1 means 100 percent usage.', kvUsage);
    family(
      'vllm:prefix_cache_queries_total',
      'counter',
      'Prefix cache queries, in terms of number of queried tokens.',
      (e) => e.prefixQueries,
    );
    family(
      'vllm:prefix_cache_hits_total',
      'counter',
      'Prefix cache hits, in terms of number of cached tokens.',
      (e) => e.prefixHits,
    );
    family('vllm:prompt_tokens_total', 'counter', 'Number of prefill tokens processed.', (e) => e.promptTokens);
    family('vllm:generation_tokens_total', 'counter', 'Number of generation tokens processed.', (e) => e.generationTokens);
    lines.push(
      '# HELP vllm:request_success_total Count of successfully processed requests.',
      '# TYPE vllm:request_success_total counter',
    );
    for (const { name, engine } of served) {
      for (const [reason, count] of engine.success) {
        const labels = promLabels({ engine: '0', finished_reason: reason, model_name: name });
        lines.push(`vllm:request_success_total${labels} ${promValue(count)}`);
      }
    }
    return `${lines.join('\n')}\n`;
  };

  const trackChat = (res: ServerResponse): void => {
    stats.chatRequests += 1;
    stats.inFlight += 1;
    stats.peakInFlight = Math.max(stats.peakInFlight, stats.inFlight);
    res.once('close', () => {
      stats.inFlight -= 1;
    });
  };

  const resetStats = (): void => {
    stats.chatRequests = 0;
    stats.peakInFlight = stats.inFlight;
  };

  /** The fault this request draws from the mix, or undefined for a normal answer. */
  const drawFault = (): { kind: 'serverError' | 'rateLimited' | 'stall' | 'garbage'; pick: number } | undefined => {
    const f = settings.faults;
    if (!f) return undefined;
    faultCounts.drawn += 1;
    let r = faultRandom();
    const pick = faultRandom();
    for (const kind of ['serverError', 'rateLimited', 'stall', 'garbage'] as const) {
      const p = f[kind] ?? 0;
      if (r < p) {
        faultCounts[kind] += 1;
        return { kind, pick };
      }
      r -= p;
    }
    return undefined;
  };

  const resolveChatSpec = async (body: FakeChatBody, ctx: FakeChatContext): Promise<FakeResponseSpec> => {
    const fault = drawFault();
    if (!fault) return resolveNormalSpec(body, ctx);
    // Says which fault it was, for tests that tell them apart without timing them.
    const headers = { 'x-fake-fault': fault.kind };
    if (fault.kind === 'serverError') return { status: [500, 502, 503][Math.floor(fault.pick * 3)] ?? 500, headers };
    if (fault.kind === 'rateLimited') return { status: 429, retryAfter: settings.faults?.retryAfterSeconds ?? 1, headers };
    if (fault.kind === 'garbage') {
      const i = Math.floor(fault.pick * (GARBAGE_BODIES.length + 1));
      return i < GARBAGE_BODIES.length ? { rawBody: GARBAGE_BODIES[i], headers } : { content: 'Sorry, I cannot help with that. <|im_end|> {"diagnosis": mel', headers };
    }
    const answer = await resolveNormalSpec(body, ctx);
    return { ...answer, delayMs: (answer.delayMs ?? 0) + (settings.faults?.stallMs ?? 30_000), headers: { ...(answer.headers ?? {}), ...headers } };
  };

  const resolveNormalSpec = async (body: FakeChatBody, ctx: FakeChatContext): Promise<FakeResponseSpec> => {
    const queued = queue.shift();
    if (queued) return queued;
    for (const state of rules) {
      const { rule } = state;
      if (rule.times !== undefined && state.used >= rule.times) continue;
      if (Array.isArray(rule.respond) && state.used >= rule.respond.length) continue;
      const m = rule.match;
      const matched =
        m === undefined ||
        (typeof m === 'string' && ctx.allText.includes(m)) ||
        (m instanceof RegExp && m.test(ctx.allText)) ||
        (typeof m === 'function' && m(body, ctx));
      if (!matched) continue;
      const index = state.used;
      state.used += 1;
      if (Array.isArray(rule.respond)) return rule.respond[index] as FakeResponseSpec;
      if (typeof rule.respond === 'function') {
        const spec = await rule.respond(body, ctx);
        if (spec) return spec;
        continue;
      }
      return rule.respond;
    }
    if (handler) {
      const spec = await handler(body, ctx);
      if (spec) return spec;
    }
    const fromReport = settings.answerFromReport ? specFromReport(reportMessage(ctx.messages), defaultContent(body)) : undefined;
    const spec = fromReport ?? { content: defaultContent(body) };
    if (typeof spec.content === 'string') spec.content = withFakeEvidence(spec.content, body, ctx.messages, settings.evidenceSeed);
    return spec;
  };

  const defaultContent = (body: FakeChatBody): string => {
    const format = body['response_format'] as { type?: string; json_schema?: { schema?: unknown } } | undefined;
    if (format?.type === 'json_schema' && format.json_schema?.schema) {
      return JSON.stringify(exampleFromSchema(format.json_schema.schema));
    }
    return '{}';
  };

  /** What is left of `latencyMs` for a request that arrived at `arrivedAt` (performance.now()). */
  const latencyLeft = (arrivedAt: number): number => settings.latencyMs - (performance.now() - arrivedAt);

  const handleChat = async (res: ServerResponse, record: RecordedRequest, arrivedAt: number): Promise<void> => {
    const body = record.body as FakeChatBody | undefined;
    if (!body || typeof body !== 'object' || Array.isArray(body)) {
      sendError(res, 400, 'Invalid JSON body');
      return;
    }
    const messagesRaw = body.messages;
    if (!Array.isArray(messagesRaw) || messagesRaw.length === 0) {
      sendError(res, 400, 'messages must be a non-empty list');
      return;
    }
    if (!modelKnown(body.model)) {
      sendError(res, 404, `The model \`${String(body.model)}\` does not exist.`);
      return;
    }
    const rejected = settings.rejectParams.find((p) => p in body);
    if (rejected) {
      sendError(res, 400, `Unrecognized request argument supplied: ${rejected}`);
      return;
    }
    const messages: FakeChatMessage[] = messagesRaw.map((m) => {
      const msg = (m ?? {}) as { role?: unknown; content?: unknown };
      return { role: String(msg.role ?? ''), content: flattenContent(msg.content) };
    });
    const ctx: FakeChatContext = {
      index: chatCount++,
      model: String(body.model),
      messages,
      systemText: messages.filter((m) => m.role === 'system').map((m) => m.content).join('\n'),
      lastUserText: [...messages].reverse().find((m) => m.role === 'user')?.content ?? '',
      allText: messages.map((m) => m.content).join('\n'),
      temperature: typeof body.temperature === 'number' ? body.temperature : undefined,
      request: record,
    };
    const engine = engineFor(ctx.model);
    if (!res.closed) {
      engine.inFlight += 1;
      res.once('close', () => {
        engine.inFlight -= 1;
      });
    }
    queryPrefixCache(engine, ctx.allText);
    const spec = await resolveChatSpec(body, ctx);
    await sleep(latencyLeft(arrivedAt) + (spec.delayMs ?? 0));
    if (res.destroyed || res.socket === null || res.socket.destroyed) return;
    if (spec.dropConnection) {
      res.socket?.destroy();
      return;
    }
    if (spec.status !== undefined && spec.status >= 400) {
      sendError(res, spec.status, spec.error ?? ERROR_TYPES[spec.status] ?? 'Error', {
        type: spec.errorType,
        retryAfter: spec.retryAfter,
        headers: spec.headers,
      });
      return;
    }
    if (spec.error !== undefined) {
      sendError(res, 400, spec.error, { type: spec.errorType, headers: spec.headers });
      return;
    }
    if (spec.rawBody !== undefined) {
      res.writeHead(spec.status ?? 200, { 'content-type': 'application/json', ...(spec.headers ?? {}) });
      res.end(spec.rawBody);
      return;
    }
    const content = spec.content ?? '';
    const reasoning = spec.reasoning ?? null;
    const promptTokens = spec.usage?.promptTokens ?? estimateTokens(ctx.allText);
    const completionTokens = spec.usage?.completionTokens ?? estimateTokens(content) + estimateTokens(reasoning ?? '');
    const finishReason = spec.finishReason ?? 'stop';
    const field = spec.reasoningField ?? settings.reasoningField;
    const id = randomId('chatcmpl');
    const created = Math.floor(Date.now() / 1000);
    const usage = {
      prompt_tokens: promptTokens,
      total_tokens: promptTokens + completionTokens,
      completion_tokens: completionTokens,
      prompt_tokens_details: null,
    };
    const reasoningProps = (value: string | null): Record<string, string | null> => {
      if (field === 'reasoning') return { reasoning: value };
      if (field === 'both') return { reasoning: value, reasoning_content: value };
      return { reasoning_content: value };
    };

    if (body.stream === true) {
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
        ...(spec.headers ?? {}),
      });
      const pending: string[] = [];
      const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): void => {
        pending.push(
          `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: ctx.model, choices, ...extra })}\n\n`,
        );
      };
      const delta = (d: Record<string, unknown>, finish: string | null = null): unknown => ({
        index: 0,
        delta: d,
        logprobs: null,
        finish_reason: finish,
        ...(finish ? { stop_reason: null } : {}),
      });
      const streamOptions = body['stream_options'] as { include_usage?: boolean } | undefined;
      const includeUsage = streamOptions?.include_usage === true;
      const usageNull = includeUsage ? { usage: null } : {};
      chunk([delta({ role: 'assistant', content: '' })], usageNull);
      for (const piece of splitPieces(reasoning ?? '')) chunk([delta(reasoningProps(piece))], usageNull);
      for (const piece of splitPieces(content)) chunk([delta({ content: piece })], usageNull);
      chunk([delta({}, finishReason)], usageNull);
      if (includeUsage) chunk([], { usage });
      pending.push('data: [DONE]\n\n');
      for (const [i, event] of pending.entries()) {
        if (spec.dropAfterChunks !== undefined && i >= spec.dropAfterChunks) {
          res.socket?.destroy();
          return;
        }
        if (i > 0) await sleep(spec.chunkDelayMs ?? 0);
        if (res.destroyed || res.socket === null || res.socket.destroyed) return;
        res.write(event);
      }
      res.end();
      countSuccess(ctx.model, promptTokens, completionTokens, finishReason);
      return;
    }

    sendJson(
      res,
      200,
      {
        id,
        object: 'chat.completion',
        created,
        model: ctx.model,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content, ...reasoningProps(reasoning), tool_calls: [] },
            logprobs: null,
            finish_reason: finishReason,
            stop_reason: null,
          },
        ],
        usage,
        prompt_logprobs: null,
      },
      spec.headers,
    );
    countSuccess(ctx.model, promptTokens, completionTokens, finishReason);
  };

  const handleEmbeddings = async (res: ServerResponse, record: RecordedRequest, arrivedAt: number): Promise<void> => {
    const body = record.body as Record<string, unknown> | undefined;
    if (!body || typeof body !== 'object') {
      sendError(res, 400, 'Invalid JSON body');
      return;
    }
    if (!modelKnown(body['model'])) {
      sendError(res, 404, `The model \`${String(body['model'])}\` does not exist.`);
      return;
    }
    const input = body['input'];
    const inputs: string[] =
      typeof input === 'string'
        ? [input]
        : Array.isArray(input) && input.every((x) => typeof x === 'string')
          ? (input as string[])
          : [];
    if (inputs.length === 0) {
      sendError(res, 400, 'input must be a string or a non-empty list of strings');
      return;
    }
    const ctx: FakeEmbeddingContext = { index: embeddingCount++, model: String(body['model']), request: record };
    const spec = (embeddingHandler ? await embeddingHandler(inputs, ctx) : undefined) ?? {};
    await sleep(latencyLeft(arrivedAt) + (spec.delayMs ?? 0));
    if (res.destroyed || res.socket === null || res.socket.destroyed) return;
    if (spec.dropConnection) {
      res.socket?.destroy();
      return;
    }
    if (spec.status !== undefined && spec.status >= 400) {
      sendError(res, spec.status, spec.error ?? ERROR_TYPES[spec.status] ?? 'Error', { retryAfter: spec.retryAfter });
      return;
    }
    if (spec.rawBody !== undefined) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(spec.rawBody);
      return;
    }
    const vectors = spec.vectors ?? inputs.map((text) => fakeEmbedding(text, settings.embeddingDim));
    const base64 = body['encoding_format'] === 'base64';
    const promptTokens = inputs.reduce((sum, text) => sum + estimateTokens(text), 0);
    sendJson(res, 200, {
      id: randomId('embd'),
      object: 'list',
      created: Math.floor(Date.now() / 1000),
      model: ctx.model,
      data: vectors.map((vector, index) => ({
        index,
        object: 'embedding',
        embedding: base64 ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector,
      })),
      usage: { prompt_tokens: promptTokens, total_tokens: promptTokens, completion_tokens: 0, prompt_tokens_details: null },
    });
  };

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const arrivedAt = performance.now();
    const rawBody = await readBody(req);
    let body: unknown;
    try {
      body = rawBody.length > 0 ? JSON.parse(rawBody) : undefined;
    } catch {
      body = undefined;
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
    }
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const record: RecordedRequest = {
      index: requestCount++,
      method: req.method ?? 'GET',
      path,
      headers,
      body,
      rawBody,
      receivedAt: performance.timeOrigin + performance.now(),
    };
    if (settings.recordRequests) requests.push(record);

    const scripted = routeHandler ? await routeHandler(record) : undefined;
    if (scripted) {
      await sleep(scripted.delayMs ?? 0);
      if (res.destroyed || res.socket === null || res.socket.destroyed) return;
      if (scripted.dropConnection) {
        res.socket.destroy();
        return;
      }
      const text = scripted.body ?? '';
      const head: Record<string, string> = { 'content-type': scripted.contentType ?? 'application/json', ...(scripted.headers ?? {}) };
      if (!scripted.chunked) head['content-length'] = String(Buffer.byteLength(text));
      res.writeHead(scripted.status ?? 200, head);
      if (scripted.chunked) {
        const bytes = Buffer.from(text);
        for (let at = 0; at < bytes.length && !res.destroyed; at += 64 * 1024) {
          if (!res.write(bytes.subarray(at, at + 64 * 1024))) {
            await new Promise<void>((resolve) => {
              const done = (): void => {
                res.off('drain', done);
                res.off('close', done);
                resolve();
              };
              res.once('drain', done);
              res.once('close', done);
            });
          }
        }
      }
      res.end(scripted.chunked ? undefined : text);
      return;
    }

    if (path === '/health' && req.method === 'GET') {
      res.writeHead(200, { 'content-length': '0' });
      res.end();
      return;
    }
    // `open` routes live outside /v1, which is all that vLLM's --api-key middleware guards.
    const routes: Record<string, { method: string; open?: boolean; run: () => Promise<void> | void }> = {
      '/v1/models': { method: 'GET', run: () => sendJson(res, 200, modelCards()) },
      '/v1/chat/completions': { method: 'POST', run: () => handleChat(res, record, arrivedAt) },
      '/v1/embeddings': { method: 'POST', run: () => handleEmbeddings(res, record, arrivedAt) },
      '/_fake/stats': { method: 'GET', open: true, run: () => sendJson(res, 200, { ...stats }) },
      '/_fake/faults': { method: 'GET', open: true, run: () => sendJson(res, 200, { ...faultCounts }) },
      '/_fake/reset-stats': {
        method: 'POST',
        open: true,
        run: () => {
          resetStats();
          sendJson(res, 200, { ...stats });
        },
      },
    };
    if (settings.metrics) {
      routes['/metrics'] = {
        method: 'GET',
        open: true,
        run: () => {
          const text = metricsText();
          res.writeHead(200, {
            'content-type': 'text/plain; version=0.0.4; charset=utf-8',
            'content-length': Buffer.byteLength(text).toString(),
          });
          res.end(text);
        },
      };
    }
    const target = routes[path];
    if (settings.apiKey && !target?.open && headers['authorization'] !== `Bearer ${settings.apiKey}`) {
      sendJson(res, 401, { error: 'Unauthorized' });
      return;
    }
    if (!target) {
      sendJson(res, 404, { detail: 'Not Found' });
      return;
    }
    if (req.method !== target.method) {
      sendJson(res, 405, { detail: 'Method Not Allowed' });
      return;
    }
    if (target.method === 'POST' && !target.open && body === undefined) {
      sendError(res, 400, rawBody.length > 0 ? 'Invalid JSON body' : 'Request body is required');
      return;
    }
    await target.run();
  };

  const server: Server = createServer((req, res) => {
    if (req.method === 'POST' && (req.url ?? '/').split('?')[0] === '/v1/chat/completions') trackChat(res);
    route(req, res).catch((err: unknown) => {
      if (!res.headersSent && !res.destroyed) {
        sendError(res, 500, `fake server handler failed: ${err instanceof Error ? err.message : String(err)}`);
      } else {
        res.destroy();
      }
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = options.host ?? '127.0.0.1';
  const hostForUrl = host.includes(':') ? `[${host}]` : host;

  const fake: FakeLlm = {
    baseUrl: `http://${hostForUrl}:${port}/v1`,
    port,
    requests,
    script(what) {
      if (typeof what === 'function') handler = what;
      else if (Array.isArray(what)) queue.push(...what);
      else rules.push({ rule: what, used: 0 });
    },
    enqueue(...specs) {
      queue.push(...specs);
    },
    addRule(rule) {
      rules.push({ rule, used: 0 });
    },
    setHandler(h) {
      handler = h;
    },
    scriptEmbeddings(h) {
      embeddingHandler = h;
    },
    scriptRoutes(h) {
      routeHandler = h;
    },
    setModels(models) {
      settings.models = normaliseModels(models);
    },
    configure(next) {
      if (next.models !== undefined) settings.models = normaliseModels(next.models);
      if (next.strictModels !== undefined) settings.strictModels = next.strictModels;
      if (next.apiKey !== undefined) settings.apiKey = next.apiKey;
      if (next.latencyMs !== undefined) settings.latencyMs = next.latencyMs;
      if (next.reasoningField !== undefined) settings.reasoningField = next.reasoningField;
      if (next.rejectParams !== undefined) settings.rejectParams = next.rejectParams;
      if (next.errorStyle !== undefined) settings.errorStyle = next.errorStyle;
      if (next.embeddingDim !== undefined) settings.embeddingDim = next.embeddingDim;
      if (next.recordRequests !== undefined) settings.recordRequests = next.recordRequests;
      if (next.maxRunning !== undefined) settings.maxRunning = checkMaxRunning(next.maxRunning);
      if (next.metrics !== undefined) settings.metrics = next.metrics;
      if (next.answerFromReport !== undefined) settings.answerFromReport = next.answerFromReport;
      if (next.evidenceSeed !== undefined) settings.evidenceSeed = next.evidenceSeed;
      if (next.faults !== undefined) {
        settings.faults = checkFaults(next.faults);
        faultRandom = seededRandom(settings.faults?.seed ?? 1);
      }
    },
    chatRequests() {
      return requests
        .filter((r) => r.path === '/v1/chat/completions' && r.method === 'POST' && r.body !== undefined)
        .map((r) => r.body as FakeChatBody);
    },
    clearRequests() {
      requests.length = 0;
      requestCount = 0;
    },
    stats() {
      return { ...stats };
    },
    faults() {
      return { ...faultCounts };
    },
    resetStats,
    reset() {
      requests.length = 0;
      requestCount = 0;
      queue = [];
      rules = [];
      handler = null;
      embeddingHandler = null;
      routeHandler = null;
      chatCount = 0;
      embeddingCount = 0;
      resetStats();
      resetEngines();
      Object.assign(faultCounts, { drawn: 0, serverError: 0, rateLimited: 0, stall: 0, garbage: 0 });
      faultRandom = seededRandom(settings.faults?.seed ?? 1);
    },
    close() {
      return new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        for (const [timer, wake] of pendingSleeps) {
          clearTimeout(timer);
          wake();
        }
        pendingSleeps.clear();
        server.close(() => resolve());
      });
    },
  };
  return fake;
}

// Event-based read: an async iterator would destroy the request stream, and with it our view of the socket.
function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Splits text into small pieces as a tokenizer-driven stream would (roughly word-sized). */
function splitPieces(text: string): string[] {
  if (text.length === 0) return [];
  return text.match(/\s*\S+|\s+/g) ?? [text];
}
