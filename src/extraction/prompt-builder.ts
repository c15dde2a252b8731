/**
 * Prompt assembly in the layout of the extraction paper (Supplementary A, Table A3):
 *
 *   [system]    system rules (JSON only, or reason first then JSON)
 *   [user]      field instructions generated from the variables
 *   [user]      task with the exact JSON template (key order = variable order)
 *   [user]      example intro                      } only with examples
 *   [user]      example input                      } per example
 *   [assistant] example reasoning (reasoning family) }
 *   [assistant] example output as a ```json block  }
 *   [user]      "[file name]: <id>" + report text
 *   [user]      earlier answers (prompt-graph steps after the first)
 *   [user]      final instruction
 *
 * Every part except the examples can be replaced by a stored Prompt's text. Such a text is a
 * template; these placeholders are filled in (single pass, unknown ones left verbatim):
 *
 *   {{fields}}            the generated field instructions (numbered list)
 *   {{json_template}}     the JSON template, one key per line, keys in variable order
 *   {{keys}}              the variable keys, comma separated, each in double quotes
 *   {{report}}            the report text (after the context limit)
 *   {{report_id}}         the report's id (file name / patient id)
 *   {{n_examples}}        the number of examples in the prompt
 *   {{previous_answers}}  JSON of the answers of earlier prompt-graph steps ("{}" otherwise)
 *
 * With evidence (`evidence: true`), `{{fields}}` gives every field a line asking for verbatim
 * quotes and `{{json_template}}` a last key, "evidence", holding one empty list per variable:
 * the answer keeps each value under its key and adds {"evidence": {key: ["quote", …]}}.
 * Without it, nothing of the prompt changes.
 *
 * A part overridden with an empty string is left out. GUIDED vs ZERO-SHOT prompting of the RADS
 * paper is the presence of the system rules: `guided: false` sends no system rules at all.
 * `systemMessagesAllowed: false` sends the rules as a user message (templates without a system
 * role); `mergeConsecutiveMessages` joins same-role neighbours with a blank line (templates that
 * require strict alternation, e.g. Gemma).
 */
import { DEFAULT_MISSING_TOKENS, foldText } from '../analytics/normalise';
import { renderTemplate } from './template';
import { EVIDENCE_KEY, type ChatMessage, type ExtractionVariable, type PromptExample, type PromptFamily, type PromptParts, type ReportInput } from './types';
import { jsonTemplateObject, promptTypeName, sortVariables } from './variables';

export const DEFAULT_SYSTEM_DIRECT = [
  'You are a medical data extraction system that ONLY outputs valid JSON. Maintain strict compliance with these rules:',
  '1. ALWAYS begin and end your response with ```json markers',
  '2. Use EXACT field names and structure provided',
  '3. If a value is missing or not mentioned, use the specified default for that field.',
  '4. NEVER add commentary, explanations, or deviate from the output structure',
].join('\n');

export const DEFAULT_SYSTEM_REASONING = [
  'You are a medical data extraction system that performs structured reasoning before producing output. Follow these strict rules:',
  '1. First, reason step-by-step to identify and justify each extracted field.',
  '2. After reasoning, output ONLY valid JSON in the exact structure provided.',
  '3. ALWAYS begin and end the final output with ```json markers — do not include reasoning within these markers.',
  '4. Use EXACT field names and structure as specified.',
  '5. If a value is missing or not mentioned, use the specified default for that field.',
  '6. NEVER include commentary, explanations, or deviate from the specified format in the final JSON.',
].join('\n');

export const DEFAULT_FIELD_INSTRUCTIONS = '{{fields}}';

export const DEFAULT_TASK = 'Extract information into this exact JSON structure:\n```json\n{{json_template}}\n```';

export const DEFAULT_REPORT = '[file name]: {{report_id}}\n{{report}}';

export const DEFAULT_PREVIOUS_ANSWERS =
  'Values already extracted from this report in earlier steps (for context; do not repeat them):\n```json\n{{previous_answers}}\n```';

export const DEFAULT_FINAL_DIRECT =
  'Begin the extraction now. Your response must contain only a single valid JSON block, enclosed in triple backticks and prefixed with `json`, like this: ```json ... ```';

export const DEFAULT_FINAL_REASONING =
  'Begin the extraction now. First, reason step-by-step to identify and justify the value for each required field, enclosed within <think>...</think> tags. Then, output only the final structured data as a single valid JSON block, starting with ```json and ending with ```.';

function defaultExampleIntro(n: number, withReasoning: boolean): string {
  const head = n === 1 ? 'Below is 1 example' : `Below are ${n} examples`;
  return `${head} of expected input${withReasoning ? ', reasoning' : ''} and output, followed by a new task.`;
}

export interface BuildPromptOptions {
  /** all variables of the use case (ordering and example reasoning lines refer to these) */
  variables: readonly ExtractionVariable[];
  /** restrict the prompt to these keys (a prompt-graph step); default all */
  scopeKeys?: readonly string[] | null;
  family: PromptFamily;
  parts?: PromptParts | null;
  /** the examples to show, already selected */
  examples?: readonly PromptExample[] | null;
  report: ReportInput;
  /** answers of earlier prompt-graph steps; a section is added only when non-empty */
  previousAnswers?: Record<string, unknown> | null;
  guided?: boolean;
  systemMessagesAllowed?: boolean;
  mergeConsecutiveMessages?: boolean;
  /** use-case missing tokens; the first one is the default shown for variables without a default */
  missingTokens?: readonly string[] | null;
  /** ask for verbatim quotes per variable (see the file header) */
  evidence?: boolean;
}

/** A named part of the prompt before merging (kept for debugging and golden files). */
export interface PromptSection {
  name:
    | 'system'
    | 'fieldInstructions'
    | 'task'
    | 'exampleIntro'
    | 'exampleInput'
    | 'exampleReasoning'
    | 'exampleOutput'
    | 'report'
    | 'previousAnswers'
    | 'final';
  role: ChatMessage['role'];
  content: string;
}

function fallbackDefault(v: ExtractionVariable, missingTokens: readonly string[] | null | undefined): unknown {
  if (v.type === 'LIST') return [];
  const tokens = missingTokens ?? DEFAULT_MISSING_TOKENS;
  if (tokens.some((t) => foldText(t) === 'not specified')) return 'Not specified';
  return tokens[0] ?? 'Not specified';
}

function renderDefault(value: unknown): string {
  if (Array.isArray(value) && value.length === 0) return 'empty list ([])';
  if (typeof value === 'string') return JSON.stringify(value);
  return JSON.stringify(value) ?? 'null';
}

/**
 * The numbered field instructions (paper Table A3): name, type, description, instructions
 * (lines starting "- " become bullets), options, structure of dictionary types, default.
 */
export function renderFieldInstructions(
  variables: readonly ExtractionVariable[],
  missingTokens?: readonly string[] | null,
  evidence = false,
): string {
  const blocks: string[] = [];
  sortVariables(variables).forEach((v, i) => {
    const lines = [`${i + 1}. ${JSON.stringify(v.key)}:`, `   - Type: ${promptTypeName(v)}`];
    if (v.description && v.description.trim() !== '') lines.push(`   - ${v.description.trim()}`);
    for (const raw of (v.instructions ?? '').split('\n')) {
      const line = raw.trim();
      if (line === '') continue;
      lines.push(line.startsWith('- ') ? `     • ${line.slice(2).trim()}` : `   - ${line}`);
    }
    if (v.options && v.options.length > 0) {
      lines.push(`   - Options: [${v.options.map((o) => JSON.stringify(o)).join(', ')}]`);
    }
    if (v.structure && v.structure.length > 0) {
      const keys = v.structure.map((f) => JSON.stringify(f.key)).join(', ');
      lines.push(
        v.frameworkType === 'list of dictionaries'
          ? `   - Each dictionary must contain the keys: ${keys}`
          : `   - Expected structure keys: ${keys}`,
      );
      for (const f of v.structure) {
        const details = [`Type: ${f.type ?? 'string'}`];
        if (f.options && f.options.length > 0) {
          details.push(`Options: [${f.options.map((o) => JSON.stringify(o)).join(', ')}]`);
        }
        if (f.constraints && f.constraints.trim() !== '') details.push(f.constraints.trim());
        lines.push(`     - Key ${JSON.stringify(f.key)}: ${details.join('; ')}`);
      }
    }
    const def = v.default !== undefined ? v.default : fallbackDefault(v, missingTokens);
    lines.push(`   - Default: ${renderDefault(def)}`);
    if (evidence) lines.push(`   - ${evidenceInstruction(v.key)}`);
    blocks.push(lines.join('\n'));
  });
  return blocks.join('\n');
}

/** The field instruction asking for a variable's quotes. */
export function evidenceInstruction(key: string): string {
  return `Evidence: under ${JSON.stringify(EVIDENCE_KEY)}, ${JSON.stringify(key)}: a list of zero or more quotes copied verbatim from the report that support this value (an empty list when the report says nothing about it)`;
}

/**
 * An object as the papers print it: one top-level key per line (2-space indent), each value as
 * compact JSON (`"Organs": ["liver", "lung"]`).
 */
export function formatJsonObject(obj: Readonly<Record<string, unknown>>): string {
  const entries = Object.entries(obj).map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v) ?? 'null'}`);
  return entries.length === 0 ? '{}' : `{\n${entries.join(',\n')}\n}`;
}

/**
 * The JSON template for the given variables, keys in variable order; with evidence, the
 * "evidence" key last with an empty list of quotes per variable.
 */
export function renderJsonTemplate(variables: readonly ExtractionVariable[], evidence = false): string {
  const template = jsonTemplateObject(variables);
  if (!evidence) return formatJsonObject(template);
  const quotes: Record<string, string[]> = {};
  for (const v of sortVariables(variables)) quotes[v.key] = [];
  return formatJsonObject({ ...template, [EVIDENCE_KEY]: quotes });
}

/** An example's answer as the assistant would give it: a ```json block, restricted to `keys` if given. */
export function renderExampleOutput(output: Record<string, unknown>, keys?: readonly string[] | null): string {
  let obj = output;
  if (keys) {
    obj = {};
    for (const k of keys) if (Object.prototype.hasOwnProperty.call(output, k)) obj[k] = output[k];
  }
  return '```json\n' + formatJsonObject(obj) + '\n```';
}

/**
 * The example reasoning for a subset of fields: the framework writes one reasoning line per field
 * in field order, so when the line count equals the number of variables the lines of the scoped
 * fields are kept; otherwise the whole reasoning is shown.
 */
export function scopeReasoning(
  reasoning: string,
  allVariables: readonly ExtractionVariable[],
  scopeKeys?: readonly string[] | null,
): string {
  const text = reasoning.trim();
  if (!scopeKeys) return text;
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  const ordered = sortVariables(allVariables);
  if (lines.length !== ordered.length) return text;
  const wanted = new Set(scopeKeys);
  return ordered
    .map((v, i) => (wanted.has(v.key) ? lines[i]! : null))
    .filter((l): l is string => l !== null)
    .join('\n');
}

interface VariableTexts {
  fields: string;
  json_template: string;
  keys: string;
}

/**
 * The placeholders that depend on the variables only, kept per variables array (a run's
 * snapshot sends the same one with every report) and scope: the text of every report's prompt
 * before the report is the same string, built once.
 */
const variableTextCache = new WeakMap<readonly ExtractionVariable[], Map<string, VariableTexts>>();

function variableTexts(
  all: readonly ExtractionVariable[],
  vars: readonly ExtractionVariable[],
  scopeKeys: readonly string[] | null,
  missingTokens: readonly string[] | null | undefined,
  evidence: boolean,
): VariableTexts {
  const key = JSON.stringify([scopeKeys, missingTokens ?? null, evidence]);
  let byScope = variableTextCache.get(all);
  if (!byScope) {
    byScope = new Map();
    variableTextCache.set(all, byScope);
  }
  let texts = byScope.get(key);
  if (!texts) {
    texts = {
      fields: renderFieldInstructions(vars, missingTokens, evidence),
      json_template: renderJsonTemplate(vars, evidence),
      keys: vars.map((v) => JSON.stringify(v.key)).join(', '),
    };
    byScope.set(key, texts);
  }
  return texts;
}

/** The labelled sections of the prompt, before the system-role and merging options apply. */
export function buildPromptSections(opts: BuildPromptOptions): PromptSection[] {
  const all = sortVariables(opts.variables);
  const scope = opts.scopeKeys ? new Set(opts.scopeKeys) : null;
  const vars = scope ? all.filter((v) => scope.has(v.key)) : all;
  const scopeKeys = scope ? vars.map((v) => v.key) : null;
  const examples = opts.examples ?? [];
  const parts = opts.parts ?? {};
  const reasoningFamily = opts.family === 'REASONING';
  const withReasoning = reasoningFamily && examples.some((e) => e.reasoning && e.reasoning.trim() !== '');
  const previous = opts.previousAnswers && Object.keys(opts.previousAnswers).length > 0 ? opts.previousAnswers : null;

  const values: Record<string, string> = {
    ...variableTexts(opts.variables, vars, scopeKeys, opts.missingTokens, opts.evidence === true),
    report: opts.report.text,
    report_id: opts.report.id,
    n_examples: String(examples.length),
    previous_answers: formatJsonObject(previous ?? {}),
  };
  const part = (override: string | null | undefined, fallback: string): string =>
    renderTemplate(override ?? fallback, values).trim();

  const sections: PromptSection[] = [];
  const push = (name: PromptSection['name'], role: ChatMessage['role'], content: string): void => {
    if (content !== '') sections.push({ name, role, content });
  };

  if (opts.guided !== false) {
    push('system', 'system', part(parts.system, reasoningFamily ? DEFAULT_SYSTEM_REASONING : DEFAULT_SYSTEM_DIRECT));
  }
  push('fieldInstructions', 'user', part(parts.fieldInstructions, DEFAULT_FIELD_INSTRUCTIONS));
  push('task', 'user', part(parts.task, DEFAULT_TASK));
  if (examples.length > 0) {
    push('exampleIntro', 'user', part(parts.exampleIntro, defaultExampleIntro(examples.length, withReasoning)));
    for (const ex of examples) {
      push('exampleInput', 'user', ex.input.trim());
      if (reasoningFamily && ex.reasoning && ex.reasoning.trim() !== '') {
        push('exampleReasoning', 'assistant', scopeReasoning(ex.reasoning, all, scopeKeys));
      }
      push('exampleOutput', 'assistant', renderExampleOutput(ex.output, scopeKeys));
    }
  }
  push('report', 'user', part(parts.report, DEFAULT_REPORT));
  if (previous) push('previousAnswers', 'user', part(parts.previousAnswers, DEFAULT_PREVIOUS_ANSWERS));
  push('final', 'user', part(parts.final, reasoningFamily ? DEFAULT_FINAL_REASONING : DEFAULT_FINAL_DIRECT));
  return sections;
}

/** Joins same-role neighbours with a blank line. */
export function mergeConsecutive(messages: readonly ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const m of messages) {
    const last = out[out.length - 1];
    if (last && last.role === m.role) last.content = `${last.content}\n\n${m.content}`;
    else out.push({ role: m.role, content: m.content });
  }
  return out;
}

/** The chat messages to send (see the file header for the layout and options). */
export function buildMessages(opts: BuildPromptOptions): ChatMessage[] {
  const sections = buildPromptSections(opts);
  const messages: ChatMessage[] = sections.map((s) => ({
    role: s.role === 'system' && opts.systemMessagesAllowed === false ? 'user' : s.role,
    content: s.content,
  }));
  return opts.mergeConsecutiveMessages ? mergeConsecutive(messages) : messages;
}
