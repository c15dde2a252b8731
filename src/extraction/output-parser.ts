/**
 * From one completion to per-variable cells (docs/scoring.md §1, §3):
 *
 * 1. Reasoning is set aside first: the server's reasoning field, every `<think>…</think>` (or
 *    `<thinking>…</thinking>`) block, text before an orphan `</think>` (templates that open the
 *    tag in the prompt, e.g. DeepSeek-R1), and an unterminated `<think>` at the start. In the
 *    last case the model never closed its reasoning: when it also hit the token limit nothing
 *    after the tag is an answer; when it stopped on its own, the text is searched anyway.
 * 2. The answer is the LAST candidate object (fenced or bare) that parses after repair, preferring
 *    the last one holding at least one variable key (prose such as "{see above}" after the answer
 *    must not win). A single-key wrapper (`{"extracted_data": {…}}`) around an object holding
 *    variable keys is unwrapped.
 * 3. An unclosed object in a truncated output (finish_reason "length") keeps only its complete
 *    key/value pairs; when the model stopped by itself and only forgot the closing brace, the
 *    object is closed.
 * 4. With evidence asked for, the answer's "evidence" object is taken out of it before anything
 *    else: its quotes ({key: ["quote", …]}, a lone string read as one quote, anything but
 *    strings dropped, at most MAX_QUOTES per variable) are returned apart, so they never reach
 *    a value or its score.
 * 5. Cells come from analytics' normaliseRecord (role "prediction"): no nearest-option guessing,
 *    no filling in of values. No object at all → every variable INVALID/MISSING; braces present
 *    but nothing parsable → every variable INVALID/OUT_OF_FORMAT.
 */
import { foldText, normaliseRecord } from '../analytics/normalise';
import type { NormalisedCell, VariableSpec } from '../analytics/types';
import { findJsonCandidates, parseCandidate } from './json-candidates';
import { EVIDENCE_KEY, type ParsedOutput } from './types';

export interface RawOutput {
  content: string | null | undefined;
  reasoning?: string | null;
  finishReason?: string | null;
}

export interface ParseOptions {
  missingTokens?: readonly string[] | null;
  /** the prompt asked for quotes: take them out of the answer (step 4) */
  evidence?: boolean;
}

/** Quotes kept per variable; a model repeating itself past this adds nothing to check. */
export const MAX_QUOTES = 20;

function quoteList(value: unknown): string[] {
  const items = typeof value === 'string' ? [value] : Array.isArray(value) ? value : [];
  return items.filter((q): q is string => typeof q === 'string').slice(0, MAX_QUOTES);
}

/**
 * The answer without its "evidence" object, and the quotes of every variable (an empty list for
 * a variable the model gave none), keys matched as the values' keys are (case and spacing folded).
 */
export function takeQuotes(
  variables: readonly VariableSpec[],
  json: Record<string, unknown> | null,
): { json: Record<string, unknown> | null; quotes: Record<string, string[]> } {
  const quotes: Record<string, string[]> = {};
  for (const v of variables) quotes[v.key] = [];
  if (!json) return { json, quotes };
  const evidenceKey = Object.keys(json).find((k) => foldText(k) === EVIDENCE_KEY);
  if (evidenceKey === undefined) return { json, quotes };
  const { [evidenceKey]: evidence, ...rest } = json;
  if (isPlainObject(evidence)) {
    const byFolded = new Map<string, string[]>();
    for (const [k, value] of Object.entries(evidence)) if (!byFolded.has(foldText(k))) byFolded.set(foldText(k), quoteList(value));
    for (const v of variables) {
      quotes[v.key] = Object.prototype.hasOwnProperty.call(evidence, v.key) ? quoteList(evidence[v.key]) : (byFolded.get(foldText(v.key)) ?? []);
    }
  }
  return { json: rest, quotes };
}

export interface SplitReasoning {
  /** the text to search for the answer */
  answerText: string;
  reasoning: string | null;
}

const CLOSED_THINK_RE = /<(think|thinking)>([\s\S]*?)<\/\1>/gi;

/** Separates reasoning from the answer text (step 1 above). */
export function splitReasoning(content: string, serverReasoning: string | null | undefined, truncated: boolean): SplitReasoning {
  const parts: string[] = [];
  if (serverReasoning && serverReasoning.trim() !== '') parts.push(serverReasoning.trim());
  let text = content.replace(CLOSED_THINK_RE, (_m, _tag: string, inner: string) => {
    if (inner.trim() !== '') parts.push(inner.trim());
    return '\n';
  });
  const orphanClose = text.search(/<\/(think|thinking)>/i);
  if (orphanClose >= 0) {
    const closes = [...text.matchAll(/<\/(think|thinking)>/gi)];
    const last = closes[closes.length - 1]!;
    const before = text.slice(0, last.index).trim();
    if (before !== '') parts.push(before.replace(/<\/?(think|thinking)>/gi, '').trim());
    text = text.slice(last.index + last[0].length);
  }
  const open = /<(think|thinking)>/i.exec(text);
  if (open) {
    const after = text.slice(open.index + open[0].length);
    if (after.trim() !== '') parts.push(after.trim());
    text = truncated ? text.slice(0, open.index) : text.slice(0, open.index) + '\n' + after;
  }
  return { answerText: text, reasoning: parts.length > 0 ? parts.join('\n\n') : null };
}

function isPlainObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function hasVariableKey(obj: Record<string, unknown>, folded: ReadonlySet<string>): boolean {
  return Object.keys(obj).some((k) => folded.has(foldText(k)));
}

/** `{"result": {…variables…}}` → the inner object, when the outer holds no variable key. */
function unwrap(obj: Record<string, unknown>, folded: ReadonlySet<string>): Record<string, unknown> {
  if (hasVariableKey(obj, folded)) return obj;
  const keys = Object.keys(obj);
  if (keys.length === 1) {
    const inner = obj[keys[0]!];
    if (isPlainObject(inner) && hasVariableKey(inner, folded)) return inner;
  }
  return obj;
}

function allCells(variables: readonly VariableSpec[], cell: NormalisedCell): Record<string, NormalisedCell> {
  const out: Record<string, NormalisedCell> = {};
  for (const v of variables) out[v.key] = { ...cell };
  return out;
}

/** The per-variable cells of an answer object (or of no object). */
export function cellsOf(
  variables: readonly VariableSpec[],
  json: Record<string, unknown> | null,
  opts?: ParseOptions,
): Record<string, NormalisedCell> {
  const rec = normaliseRecord(variables, json, 'prediction', { missingTokens: opts?.missingTokens ?? null });
  const out: Record<string, NormalisedCell> = {};
  for (const v of variables) out[v.key] = rec[v.key] ?? { status: 'INVALID', category: 'MISSING', detail: 'key absent' };
  return out;
}

/** Parses one completion (see the file header). Never throws on model output. */
export function parseOutput(raw: RawOutput, variables: readonly VariableSpec[], opts?: ParseOptions): ParsedOutput {
  const parsed = parseAnswer(raw, variables, opts);
  if (!opts?.evidence) return parsed;
  // Values are read by their own keys only, so the cells are the same with or without the quotes.
  const { json, quotes } = takeQuotes(variables, parsed.json);
  return { ...parsed, json, quotes };
}

function parseAnswer(raw: RawOutput, variables: readonly VariableSpec[], opts: ParseOptions | undefined): ParsedOutput {
  const truncated = raw.finishReason === 'length';
  const { answerText, reasoning } = splitReasoning(raw.content ?? '', raw.reasoning, truncated);
  const folded = new Set(variables.map((v) => foldText(v.key)));
  const candidates = findJsonCandidates(answerText);

  let fallback: { json: Record<string, unknown>; repaired: boolean } | null = null;
  let lastError: string | null = null;
  for (let i = candidates.length - 1; i >= 0; i--) {
    const c = candidates[i]!;
    const res = parseCandidate(c, truncated);
    if (!res.ok) {
      lastError ??= res.error;
      continue;
    }
    if (!isPlainObject(res.parsed.value)) continue;
    const obj = unwrap(res.parsed.value, folded);
    const repaired = res.parsed.repaired || !c.closed;
    if (hasVariableKey(obj, folded)) {
      return { json: obj, reasoning, parseError: null, cells: cellsOf(variables, obj, opts), truncated, repaired };
    }
    fallback ??= { json: obj, repaired };
  }
  if (fallback) {
    return {
      json: fallback.json,
      reasoning,
      parseError: null,
      cells: cellsOf(variables, fallback.json, opts),
      truncated,
      repaired: fallback.repaired,
    };
  }
  if (candidates.length > 0) {
    const parseError = `no JSON object parsed after repair (${candidates.length} candidate${candidates.length === 1 ? '' : 's'}): ${lastError ?? 'not an object'}`;
    return {
      json: null,
      reasoning,
      parseError,
      cells: allCells(variables, { status: 'INVALID', category: 'OUT_OF_FORMAT', detail: 'unparsable JSON' }),
      truncated,
      repaired: false,
    };
  }
  const detail = answerText.trim() === '' ? 'empty response' : 'no JSON object';
  return {
    json: null,
    reasoning,
    parseError: null,
    cells: allCells(variables, { status: 'INVALID', category: 'MISSING', detail }),
    truncated,
    repaired: false,
  };
}
