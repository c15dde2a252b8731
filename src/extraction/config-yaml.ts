/**
 * Import and export of the extraction paper framework's YAML configs (INTEROP.md;
 * Douwe-Spaanderman/MedicalRecordLLM): the prompt config (field_instructions, task, examples,
 * system_instruction) and the model config (sampling parameters, self_consistency_sampling, …).
 *
 * Field mapping (prompt config → ExtractionVariable):
 *   name → key; list position → order; type → type via `mapFrameworkType` (the name itself is
 *   kept as `frameworkType`, so prompts show it and exports write it back); options → options
 *   as strings ("" dropped: it means "not stated"); constraints (text, or a list rendered as
 *   "- " bullets) → instructions; default → default; chain_order → graphStep;
 *   depends_on {field, values (list or scalar)} → dependsOn {key, values}; weight → weight;
 *   structure → structure (dictionary types, scored as FREE_TEXT). ReportQL-only settings travel
 *   as extra keys the framework ignores: description, aliases, collapse_map, tolerance,
 *   missing_tokens. Any other key is kept in `frameworkExtra` and written back.
 * The task's JSON block becomes the `{{json_template}}` placeholder (regenerated from the
 * variables, so prompt-graph steps get their own template); template values that differ from
 * the type's placeholder ("" / [] / the structure) are kept as `templateValue`.
 * `system_instruction` → parts.system. examples → {name "example-<n>", input, reasoning,
 * output parsed as JSON}; the deprecated single `example` is accepted when it has input/output.
 *
 * Not exported (no framework equivalent): prompt parts other than system and task.
 */
import YAML from 'yaml';
import { normaliseValue } from '../analytics/normalise';
import { findValueProblem, joinPath } from '../db/storable';
import { ExtractionError } from './errors';
import { MAX_PROMPT_EXAMPLES, MAX_VARIABLES } from './limits';
import { findJsonCandidates, parseCandidate } from './json-candidates';
import { formatJsonObject } from './prompt-builder';
import { planGraph, type GraphPlan } from './prompt-graph-plan';
import { renderTemplate } from './template';
import type { DependsOn, ExtractionVariable, PromptExample, PromptParts, SamplingParams, StructureField } from './types';
import { jsonTemplateObject, mapFrameworkType, optionToString, sortVariables, templateValueOf } from './variables';

export interface FrameworkModelConfig {
  model: string | null;
  maxModelLen: number | null;
  sampling: SamplingParams;
  selfConsistency: { samples: number; temperatures: number[] } | null;
  mergeConsecutiveMessages: boolean | null;
  systemMessagesAllowed: boolean | null;
  embeddingModel: string | null;
  /** keys not understood here, kept for export */
  extra: Record<string, unknown>;
}

export interface FrameworkImport {
  reportType: string | null;
  variables: ExtractionVariable[];
  /** the prompt graph, when any field has chain_order or depends_on */
  graph: GraphPlan | null;
  prompt: { parts: PromptParts; examples: PromptExample[] };
  model: FrameworkModelConfig | null;
  warnings: string[];
}

const KNOWN_FIELD_KEYS = new Set([
  'name', 'type', 'options', 'constraints', 'default', 'chain_order', 'depends_on', 'weight', 'structure',
  'description', 'aliases', 'collapse_map', 'tolerance', 'missing_tokens',
]);
const KNOWN_PROMPT_KEYS = new Set(['field_instructions', 'task', 'examples', 'example', 'system_instruction', 'report_type']);
const MODEL_KEYS = {
  model: 'model',
  max_model_len: 'maxModelLen',
  max_tokens: 'maxTokens',
  temperature: 'temperature',
  top_p: 'topP',
  top_k: 'topK',
  frequency_penalty: 'frequencyPenalty',
  presence_penalty: 'presencePenalty',
  repetition_penalty: 'repetitionPenalty',
} as const;
const SAMPLING_YAML: ReadonlyArray<[keyof SamplingParams, string]> = [
  ['maxTokens', 'max_tokens'],
  ['temperature', 'temperature'],
  ['topP', 'top_p'],
  ['topK', 'top_k'],
  ['frequencyPenalty', 'frequency_penalty'],
  ['presencePenalty', 'presence_penalty'],
  ['repetitionPenalty', 'repetition_penalty'],
];

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** How the yaml package names a problem (its code), in words. */
const yamlProblem = (code: string) => code.toLowerCase().replace(/_/g, ' ');

/**
 * Parses YAML with the package's own output off: by default it prints warnings to stderr, and
 * their messages quote the source (a prompt's examples are report texts). Its warnings become
 * ours, and its errors our BAD_CONFIG, each by code and position, never quoting the text.
 * Values are refused rather than stored altered: a NUL character ("\0"), a lone surrogate
 * ("\uD800"), a number that is not finite (1e400, .inf) or nesting deeper than 64 levels is
 * BAD_CONFIG, with the path to it. Anchors and aliases are expanded at most 100 times (the yaml
 * package's maxAliasCount), so an alias bomb is refused too.
 */
function parseYaml(text: string, what: string, warnings: string[]): unknown {
  const lineCounter = new YAML.LineCounter();
  const options = { logLevel: 'silent', lineCounter, prettyErrors: false } as const;
  const at = (offset: number | undefined) => {
    const { line, col } = lineCounter.linePos(offset ?? 0);
    return `line ${line}, column ${col}`;
  };
  // parseDocument with its output off also drops its MULTIPLE_DOCS error, so the documents are
  // counted here: a second one is refused, not silently ignored.
  const docs = YAML.parseAllDocuments(text, options);
  const second = Array.isArray(docs) ? docs[1] : undefined;
  if (second) throw new ExtractionError('BAD_CONFIG', `${what}: holds more than one YAML document (the second starts at ${at(second.range[0])}); one is expected`);
  const doc = (Array.isArray(docs) ? docs[0] : undefined) ?? YAML.parseDocument(text, options);
  const [error] = doc.errors;
  if (error) throw new ExtractionError('BAD_CONFIG', `${what}: not valid YAML: ${yamlProblem(error.code)} at ${at(error.pos[0])}`);
  for (const warning of doc.warnings) warnings.push(`${what}: ${yamlProblem(warning.code)} at ${at(warning.pos[0])}`);
  YAML.visit(doc, {
    Pair(_, pair) {
      // The package would warn (to stderr, quoting the key) when it turns such a key into text.
      if (YAML.isCollection(pair.key)) warnings.push(`${what}: the mapping key at ${at(pair.key.range?.[0])} is a list or mapping; it is read as text`);
    },
  });
  let value: unknown;
  try {
    value = doc.toJS() as unknown;
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    throw new ExtractionError('BAD_CONFIG', `${what}: not valid YAML${typeof code === 'string' ? `: ${yamlProblem(code)}` : ''}`);
  }
  const problem = findValueProblem(value);
  if (problem) throw new ExtractionError('BAD_CONFIG', `${what}: ${joinPath('', problem.path) || 'the document'} ${problem.reason}`);
  return value;
}

function bad(msg: string): never {
  throw new ExtractionError('BAD_CONFIG', msg);
}

function optionalNumber(obj: Record<string, unknown>, key: string, where: string): number | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) bad(`${where}: "${key}" must be a number`);
  return v;
}

function stringRecord(x: unknown, where: string): Record<string, string> | null {
  if (x === undefined || x === null) return null;
  if (!isRecord(x)) bad(`${where} must be a mapping`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(x)) out[k] = optionToString(v);
  return out;
}

/** The first JSON object in a text (fenced or bare), parsed with repair. */
function firstJsonObject(text: string): { value: Record<string, unknown>; start: number; end: number } | null {
  for (const c of findJsonCandidates(text)) {
    const r = parseCandidate(c, false);
    if (r.ok && isRecord(r.parsed.value)) return { value: r.parsed.value, start: c.start, end: c.start + c.text.length };
  }
  return null;
}

/** The last JSON object in a text (an example's output), parsed with repair. */
function lastJsonObject(text: string): Record<string, unknown> | null {
  const cs = findJsonCandidates(text);
  for (let i = cs.length - 1; i >= 0; i--) {
    const r = parseCandidate(cs[i]!, false);
    if (r.ok && isRecord(r.parsed.value)) return r.parsed.value;
  }
  return null;
}

function constraintsText(x: unknown, where: string): string | null {
  if (x === undefined || x === null) return null;
  if (typeof x === 'string') return x.trim() === '' ? null : x.replace(/\s+$/, '');
  if (Array.isArray(x)) return x.map((item) => `- ${optionToString(item)}`).join('\n');
  return bad(`${where}: constraints must be text or a list`);
}

function parseDependsOn(x: unknown, where: string): DependsOn | null {
  if (x === undefined || x === null) return null;
  if (!isRecord(x) || typeof x['field'] !== 'string') bad(`${where}: depends_on needs a "field"`);
  const raw = x['values'] ?? x['value'];
  const values = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).map(optionToString);
  if (values.length === 0) bad(`${where}: depends_on needs "values"`);
  return { key: x['field'], values };
}

function parseStructure(x: unknown, where: string): StructureField[] | null {
  if (x === undefined || x === null) return null;
  if (!Array.isArray(x)) bad(`${where}: structure must be a list`);
  return x.map((f, i) => {
    if (!isRecord(f) || typeof f['key'] !== 'string') bad(`${where}: structure item ${i + 1} needs a "key"`);
    const out: StructureField = { key: f['key'] };
    if (typeof f['type'] === 'string') out.type = f['type'];
    if (Array.isArray(f['options'])) out.options = f['options'];
    if (typeof f['constraints'] === 'string') out.constraints = f['constraints'];
    return out;
  });
}

function parseField(f: unknown, index: number, warnings: string[]): ExtractionVariable {
  const where = `field_instructions[${index + 1}]`;
  if (!isRecord(f)) bad(`${where} must be a mapping`);
  const name = f['name'];
  if (typeof name !== 'string' || name.trim() === '') bad(`${where} needs a "name"`);
  const at = `field "${name}"`;
  const frameworkType = typeof f['type'] === 'string' ? f['type'] : null;
  if (f['type'] !== undefined && frameworkType === null) bad(`${at}: type must be text`);
  if (f['options'] !== undefined && f['options'] !== null && !Array.isArray(f['options'])) bad(`${at}: options must be a list`);
  const missingTokens = Array.isArray(f['missing_tokens']) ? f['missing_tokens'].map(optionToString) : null;
  const mapped = mapFrameworkType(frameworkType, f['options'] as unknown[] | undefined, missingTokens ?? undefined);
  if (mapped.warning) warnings.push(`${at}: ${mapped.warning}`);

  const v: ExtractionVariable = { key: name, type: mapped.type, order: index, frameworkType };
  if (mapped.options) v.options = mapped.options;
  const aliases = { ...(mapped.aliases ?? {}), ...(stringRecord(f['aliases'], `${at}: aliases`) ?? {}) };
  if (Object.keys(aliases).length > 0) v.aliases = aliases;
  const collapse = stringRecord(f['collapse_map'], `${at}: collapse_map`);
  if (collapse) v.collapseMap = collapse;
  if (missingTokens) v.missingTokens = missingTokens;
  const tolerance = optionalNumber(f, 'tolerance', at);
  if (tolerance !== undefined) v.tolerance = tolerance;
  const weight = optionalNumber(f, 'weight', at);
  if (weight !== undefined) v.weight = weight;
  if (typeof f['description'] === 'string' && f['description'].trim() !== '') v.description = f['description'].trim();
  const instructions = constraintsText(f['constraints'], at);
  if (instructions !== null) v.instructions = instructions;
  if (Object.prototype.hasOwnProperty.call(f, 'default')) v.default = f['default'];
  const chain = f['chain_order'];
  if (chain !== undefined && chain !== null) {
    if (typeof chain !== 'number' || !Number.isInteger(chain)) bad(`${at}: chain_order must be an integer`);
    v.graphStep = chain;
  }
  const dep = parseDependsOn(f['depends_on'], at);
  if (dep) v.dependsOn = dep;
  const structure = parseStructure(f['structure'], at);
  if (structure) v.structure = structure;
  const extra: Record<string, unknown> = {};
  for (const [k, val] of Object.entries(f)) if (!KNOWN_FIELD_KEYS.has(k)) extra[k] = val;
  if (Object.keys(extra).length > 0) {
    v.frameworkExtra = extra;
    warnings.push(`${at}: kept but unused: ${Object.keys(extra).join(', ')}`);
  }
  try {
    normaliseValue(v, null);
  } catch (e) {
    bad(`${at}: ${e instanceof Error ? e.message : String(e)}`);
  }
  return v;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Replaces the task's JSON block by the placeholder and records non-default template values. */
function importTask(task: string, variables: ExtractionVariable[], warnings: string[]): string {
  const hit = firstJsonObject(task);
  if (!hit) {
    warnings.push('task: no JSON template found; the task text is used as it is and no template is shown');
    return task.replace(/\s+$/, '');
  }
  const fence = /```[ \t]*json[ \t]*\r?\n?([\s\S]*?)```/i.exec(task);
  let text: string;
  if (fence && fence.index <= hit.start && fence.index + fence[0].length >= hit.end) {
    text = task.slice(0, fence.index) + '```json\n{{json_template}}\n```' + task.slice(fence.index + fence[0].length);
  } else {
    text = task.slice(0, hit.start) + '{{json_template}}' + task.slice(hit.end);
  }
  const byKey = new Map(variables.map((v) => [v.key, v]));
  for (const [k, val] of Object.entries(hit.value)) {
    const v = byKey.get(k);
    if (!v) {
      warnings.push(`task: template key "${k}" is not a field; it is dropped from the template`);
      continue;
    }
    if (!sameJson(val, templateValueOf({ ...v, templateValue: undefined }))) v.templateValue = val;
  }
  for (const v of variables) {
    if (!Object.prototype.hasOwnProperty.call(hit.value, v.key)) warnings.push(`task: field "${v.key}" is missing from the template; it is added`);
  }
  return text.replace(/\s+$/, '');
}

function importExample(e: unknown, i: number, warnings: string[]): PromptExample | null {
  if (!isRecord(e) || typeof e['input'] !== 'string' || (typeof e['output'] !== 'string' && !isRecord(e['output']))) {
    warnings.push(`example ${i + 1}: needs text "input" and "output"; skipped`);
    return null;
  }
  const output = isRecord(e['output']) ? e['output'] : lastJsonObject(e['output']);
  if (!output) {
    warnings.push(`example ${i + 1}: output holds no JSON object; skipped`);
    return null;
  }
  const ex: PromptExample = { name: typeof e['name'] === 'string' ? e['name'] : `example-${i + 1}`, input: e['input'].replace(/\s+$/, ''), output };
  if (typeof e['reasoning'] === 'string' && e['reasoning'].trim() !== '') ex.reasoning = e['reasoning'].replace(/\s+$/, '');
  return ex;
}

/** Parses a model config YAML (INTEROP.md "Model config"). */
export function importFrameworkModelConfig(modelYaml: string, warnings: string[] = []): FrameworkModelConfig {
  const doc = parseYaml(modelYaml, 'model config', warnings);
  if (!isRecord(doc)) bad('model config must be a mapping');
  const sampling: SamplingParams = {};
  for (const [key, yamlKey] of SAMPLING_YAML) {
    const n = optionalNumber(doc, yamlKey, 'model config');
    if (n !== undefined) sampling[key] = n;
  }
  let selfConsistency: FrameworkModelConfig['selfConsistency'] = null;
  const sc = doc['self_consistency_sampling'];
  if (sc !== undefined && sc !== null) {
    if (!isRecord(sc)) bad('self_consistency_sampling must be a mapping');
    const temps = sc['temperature'];
    const temperatures = temps === undefined ? [] : Array.isArray(temps) ? temps : [temps];
    if (!temperatures.every((t) => typeof t === 'number' && Number.isFinite(t))) bad('self_consistency_sampling.temperature must be numbers');
    const samples = optionalNumber(sc, 'num_samples', 'self_consistency_sampling') ?? temperatures.length;
    if (!Number.isInteger(samples) || samples < 1) bad('self_consistency_sampling.num_samples must be a positive integer');
    if (temperatures.length > 0 && temperatures.length !== samples) {
      warnings.push(`self_consistency_sampling: ${samples} samples but ${temperatures.length} temperatures`);
    }
    selfConsistency = { samples, temperatures: temperatures as number[] };
  }
  const bool = (k: string): boolean | null => {
    const v = doc[k];
    if (v === undefined || v === null) return null;
    if (typeof v !== 'boolean') bad(`model config: "${k}" must be true or false`);
    return v;
  };
  const str = (k: string): string | null => {
    const v = doc[k];
    if (v === undefined || v === null) return null;
    if (typeof v !== 'string') bad(`model config: "${k}" must be text`);
    return v;
  };
  const known = new Set([...Object.keys(MODEL_KEYS), 'self_consistency_sampling', 'merge_consecutive_messages',
    'system_instructions_allowed', 'system_instruction_allowed', 'embedding_model']);
  const extra: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(doc)) if (!known.has(k)) extra[k] = v;
  if (Object.keys(extra).length > 0) warnings.push(`model config: kept but unused: ${Object.keys(extra).join(', ')}`);
  return {
    model: str('model'),
    maxModelLen: optionalNumber(doc, 'max_model_len', 'model config') ?? null,
    sampling,
    selfConsistency,
    mergeConsecutiveMessages: bool('merge_consecutive_messages'),
    systemMessagesAllowed: bool('system_instructions_allowed') ?? bool('system_instruction_allowed'),
    embeddingModel: str('embedding_model'),
    extra,
  };
}

/**
 * Imports a framework prompt config (and optionally its model config).
 * @throws ExtractionError BAD_CONFIG on malformed YAML or fields; BAD_GRAPH / BAD_VARIABLES when
 *   chain_order and depends_on do not form a valid graph.
 */
export function importFrameworkConfig(promptYaml: string, modelYaml?: string | null): FrameworkImport {
  const warnings: string[] = [];
  const doc = parseYaml(promptYaml, 'prompt config', warnings);
  if (!isRecord(doc)) bad('prompt config must be a mapping');
  const fields = doc['field_instructions'];
  if (!Array.isArray(fields) || fields.length === 0) bad('prompt config needs a non-empty "field_instructions" list');
  if (fields.length > MAX_VARIABLES) bad(`prompt config has ${fields.length} field_instructions; a use case has at most ${MAX_VARIABLES} variables`);
  const variables = fields.map((f, i) => parseField(f, i, warnings));
  const seen = new Set<string>();
  for (const v of variables) {
    if (seen.has(v.key)) bad(`duplicate field "${v.key}"`);
    seen.add(v.key);
  }
  for (const k of Object.keys(doc)) if (!KNOWN_PROMPT_KEYS.has(k)) warnings.push(`prompt config: unknown key "${k}" ignored`);

  const parts: PromptParts = {};
  if (typeof doc['task'] === 'string') parts.task = importTask(doc['task'], variables, warnings);
  else if (doc['task'] !== undefined) bad('task must be text');
  else warnings.push('prompt config has no task: the built-in task text is used');
  if (typeof doc['system_instruction'] === 'string') parts.system = doc['system_instruction'].replace(/\s+$/, '');

  let rawExamples: unknown[] = [];
  if (Array.isArray(doc['examples'])) rawExamples = doc['examples'];
  else if (doc['examples'] !== undefined && doc['examples'] !== null) bad('examples must be a list');
  if (doc['example'] !== undefined) {
    if (rawExamples.length === 0 && isRecord(doc['example'])) {
      rawExamples = [doc['example']];
      warnings.push('deprecated "example" read as the only example');
    } else {
      warnings.push('deprecated "example" ignored (not an input/output mapping, or "examples" present)');
    }
  }
  if (rawExamples.length > MAX_PROMPT_EXAMPLES) bad(`prompt config has ${rawExamples.length} examples; a prompt has at most ${MAX_PROMPT_EXAMPLES}`);
  const examples = rawExamples.map((e, i) => importExample(e, i, warnings)).filter((e): e is PromptExample => e !== null);
  // Example outputs are JSON inside YAML strings: their escapes ("\u0000") are decoded only now.
  const outputs = findValueProblem(examples);
  if (outputs) bad(`prompt config: examples${outputs.path} ${outputs.reason}`);

  const hasGraph = variables.some((v) => v.graphStep != null || v.dependsOn);
  if (hasGraph && variables.some((v) => v.graphStep == null)) {
    warnings.push('some fields have no chain_order: their prompt-graph step is derived from depends_on (or the first step)');
  }
  const graph = hasGraph ? planGraph(variables) : null;
  let model: FrameworkModelConfig | null = null;
  try {
    model = modelYaml ? importFrameworkModelConfig(modelYaml, warnings) : null;
  } catch (error) {
    if (error instanceof ExtractionError) error.field ??= 'modelYaml';
    throw error;
  }
  return {
    reportType: typeof doc['report_type'] === 'string' ? doc['report_type'] : null,
    variables,
    graph,
    prompt: { parts, examples },
    model,
    warnings,
  };
}

/**
 * Written as YAML 1.1 because the framework reads its configs with PyYAML (1.1): strings such as
 * Yes / No / on / off are then quoted instead of turning into booleans there.
 */
const YAML_OUT = { lineWidth: 0, version: '1.1' } as const;

function exportTypeName(v: ExtractionVariable): string {
  if (v.frameworkType) return v.frameworkType;
  switch (v.type) {
    case 'CATEGORICAL':
      return 'categorical';
    case 'BINARY':
      return 'binary';
    case 'NUMERIC':
      return 'number';
    case 'LIST':
      return 'list';
    case 'EXACT_STRING':
      return 'string_exact_match';
    case 'FREE_TEXT':
      return 'string';
    default: {
      const never: never = v.type;
      return String(never);
    }
  }
}

function exportOption(o: string, numericType: boolean): string | number {
  if (numericType && /^-?\d+(\.\d+)?$/.test(o)) return Number(o);
  return o;
}

export interface ExportPromptInput {
  variables: readonly ExtractionVariable[];
  parts?: PromptParts | null;
  examples?: readonly PromptExample[] | null;
  reportType?: string | null;
}

/** The framework prompt config YAML for a use case's variables, prompt parts and examples. */
export function exportFrameworkPromptYaml(input: ExportPromptInput): string {
  const vars = sortVariables(input.variables);
  const doc: Record<string, unknown> = {};
  if (input.reportType) doc['report_type'] = input.reportType;
  if (input.parts?.system) doc['system_instruction'] = input.parts.system;
  doc['field_instructions'] = vars.map((v) => {
    const f: Record<string, unknown> = { name: v.key, type: exportTypeName(v) };
    const t = exportTypeName(v).toLowerCase();
    const numericType = /^(float|int|integer|number|numeric|binary|boolean)/.test(t);
    if (v.options && v.options.length > 0) f['options'] = v.options.map((o) => exportOption(o, numericType));
    if (v.description) f['description'] = v.description;
    if (v.instructions) f['constraints'] = v.instructions;
    if (v.default !== undefined) f['default'] = v.default;
    if (v.graphStep != null) f['chain_order'] = v.graphStep;
    if (v.dependsOn) f['depends_on'] = { field: v.dependsOn.key, values: [...v.dependsOn.values] };
    if (v.weight != null) f['weight'] = v.weight;
    if (v.structure && v.structure.length > 0) f['structure'] = v.structure;
    const mapped = mapFrameworkType(v.frameworkType ?? exportTypeName(v), v.options ?? null, v.missingTokens ?? undefined);
    const aliases = { ...(v.aliases ?? {}) };
    for (const [a, to] of Object.entries(mapped.aliases ?? {})) if (aliases[a] === to) delete aliases[a];
    if (Object.keys(aliases).length > 0) f['aliases'] = aliases;
    if (v.collapseMap && Object.keys(v.collapseMap).length > 0) f['collapse_map'] = { ...v.collapseMap };
    if (v.tolerance != null) f['tolerance'] = v.tolerance;
    if (v.missingTokens) f['missing_tokens'] = [...v.missingTokens];
    for (const [k, val] of Object.entries(v.frameworkExtra ?? {})) if (!(k in f)) f[k] = val;
    return f;
  });
  const template = formatJsonObject(jsonTemplateObject(vars));
  const taskTemplate = input.parts?.task ?? 'Extract information into this exact JSON structure:\n```json\n{{json_template}}\n```';
  doc['task'] = renderTemplate(taskTemplate, { json_template: template, keys: vars.map((v) => JSON.stringify(v.key)).join(', ') }) + '\n';
  const examples = input.examples ?? [];
  if (examples.length > 0) {
    doc['examples'] = examples.map((e) => {
      const out: Record<string, unknown> = { input: e.input.endsWith('\n') ? e.input : e.input + '\n' };
      if (e.reasoning) out['reasoning'] = e.reasoning.endsWith('\n') ? e.reasoning : e.reasoning + '\n';
      out['output'] = '```json\n' + formatJsonObject(e.output) + '\n```\n';
      return out;
    });
  }
  return YAML.stringify(doc, YAML_OUT);
}

/** The framework model config YAML. */
export function exportFrameworkModelYaml(m: FrameworkModelConfig): string {
  const doc: Record<string, unknown> = {};
  if (m.model) doc['model'] = m.model;
  if (m.maxModelLen != null) doc['max_model_len'] = m.maxModelLen;
  for (const [key, yamlKey] of SAMPLING_YAML) if (m.sampling[key] !== undefined) doc[yamlKey] = m.sampling[key];
  if (m.selfConsistency) {
    doc['self_consistency_sampling'] = { num_samples: m.selfConsistency.samples, temperature: [...m.selfConsistency.temperatures] };
  }
  if (m.mergeConsecutiveMessages !== null) doc['merge_consecutive_messages'] = m.mergeConsecutiveMessages;
  if (m.systemMessagesAllowed !== null) doc['system_instructions_allowed'] = m.systemMessagesAllowed;
  if (m.embeddingModel) doc['embedding_model'] = m.embeddingModel;
  for (const [k, v] of Object.entries(m.extra)) if (!(k in doc)) doc[k] = v;
  return YAML.stringify(doc, YAML_OUT);
}
