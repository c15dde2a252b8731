/**
 * Shared parts of the synthetic demo: a seeded generator, the synthetic model profiles, and how
 * a simulated model answers one report (right, plausibly wrong, or invalid). The seed generator
 * (generate.ts) writes seeds/demo with them; the demo model server (scripts/demo-llm) answers
 * live requests with the same behaviour, so executed runs look like the seeded ones.
 *
 * Nothing here is a real model: names say "synthetic" (seeded runs) or "simulator" (live).
 */

export type VarType = 'CATEGORICAL' | 'BINARY' | 'NUMERIC' | 'FREE_TEXT' | 'LIST' | 'EXACT_STRING';
export type Strategy = 'ZERO_SHOT' | 'ONE_SHOT' | 'FEW_SHOT' | 'CHAIN_OF_THOUGHT' | 'SELF_CONSISTENCY' | 'PROMPT_GRAPH';
export type Value = string | number | string[];

/** A deterministic generator (mulberry32): the same seed gives the same demo, byte for byte. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
  /** Picks by weight: [[item, weight], …]. */
  weighted<T>(items: readonly (readonly [T, number])[]): T {
    const total = items.reduce((s, [, w]) => s + w, 0);
    let x = this.next() * total;
    for (const [item, w] of items) {
      x -= w;
      if (x < 0) return item;
    }
    return items[items.length - 1]![0];
  }
  normal(): number {
    const u = Math.max(1e-12, this.next());
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next());
  }
  shuffle<T>(items: readonly T[]): T[] {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i -= 1) {
      const j = Math.floor(this.next() * (i + 1));
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  }
}

/** A string's 32-bit FNV-1a hash, for seeding per report and model. */
export function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export interface VarDef {
  key: string;
  type: VarType;
  description: string;
  instructions?: string;
  options?: string[];
  aliases?: Record<string, string>;
  collapseMap?: Record<string, string>;
  default: unknown;
  tolerance?: number;
  graphStep: number;
  dependsOn?: { key: string; values: string[] };
  /** The paper's inter-rater agreement for the variable (drives annotator disagreement). */
  ira: number;
  /** Model difficulty: added to a model's skill (negative = harder). */
  difficulty: number;
}

/** The value a variable takes when the report does not say (its default, or "Not specified"). */
export function missingOf(v: VarDef): Value {
  if (v.type === 'LIST') return [];
  return typeof v.default === 'string' || typeof v.default === 'number' ? v.default : 'Not specified';
}

export function isMissing(v: VarDef, value: Value): boolean {
  if (Array.isArray(value)) return value.length === 0;
  const s = String(value).trim().toLowerCase();
  if (v.type !== 'LIST' && typeof v.default === 'number' && value === v.default) return false;
  return s === '' || s === 'not specified' || s === 'missing' || s === 'none' || s === 'n/a' || s === 'unknown' || s === 'not applicable';
}

/** A plausible wrong value of a variable: what an annotator or a model mistakes the truth for. */
export function wrongValue(rng: Rng, v: VarDef, truth: Value, distractors?: readonly string[]): Value {
  switch (v.type) {
    case 'CATEGORICAL':
    case 'BINARY': {
      const others = (v.options ?? []).filter((o) => o !== truth);
      const pool = others.length > 0 ? others : [String(missingOf(v))];
      return rng.pick(pool);
    }
    case 'NUMERIC': {
      if (isMissing(v, truth)) return rng.pick([1, 2, 0, 10, 5]);
      const n = Number(truth);
      if (rng.chance(0.3)) return missingOf(v);
      const step = Number.isInteger(n) ? rng.pick([1, 2, -1]) : rng.pick([0.1, -0.2, 0.5, -0.1]);
      return Math.max(0, Math.round((n + step) * 100) / 100);
    }
    case 'EXACT_STRING': {
      if (isMissing(v, truth)) return distractors && distractors.length > 0 ? rng.pick(distractors) : '1/10HPF';
      const s = String(truth);
      if (rng.chance(0.4)) return missingOf(v);
      return rng.chance(0.5) ? s.replace('/', ' / ') : s.replace(/\d+/, (d) => String(Number(d) + 1));
    }
    case 'FREE_TEXT': {
      if (isMissing(v, truth)) return distractors && distractors.length > 0 ? rng.pick(distractors) : 'not assessable';
      if (rng.chance(0.35)) return missingOf(v);
      if (distractors && distractors.length > 0 && rng.chance(0.6)) return rng.pick(distractors);
      const words = String(truth).split(' ');
      return words.length > 1 ? words.slice(0, -1).join(' ') : `${truth} (suspected)`;
    }
    case 'LIST': {
      const list = truth as string[];
      if (list.length === 0) return distractors && distractors.length > 0 ? [rng.pick(distractors)] : ['unspecified'];
      if (list.length > 1 && rng.chance(0.6)) return list.slice(0, -1);
      if (distractors && distractors.length > 0 && rng.chance(0.5)) return [...list, rng.pick(distractors)];
      return [];
    }
  }
}

/** An answer the scorer must reject, with the category of docs/scoring.md §3 it demonstrates. */
export function invalidValue(rng: Rng, v: VarDef, truth: Value): unknown {
  switch (v.type) {
    case 'CATEGORICAL':
    case 'BINARY': {
      const opts = (v.options ?? []).filter((o) => !isMissing(v, o));
      return rng.weighted<unknown>([
        [opts.length > 1 ? `${opts[0]} or ${opts[1]}` : 'Yes or No', 2],
        ['Possibly', 1],
        ['Unclear from report', 2],
        [opts.slice(0, 2), 1],
      ]);
    }
    case 'NUMERIC':
      return rng.weighted<unknown>([
        [isMissing(v, truth) ? 'about 2' : `${truth}-${Number(truth) + 1}`, 2],
        [isMissing(v, truth) ? '>1' : `>${truth}`, 2],
        ['see report', 1],
      ]);
    case 'EXACT_STRING':
      return [String(truth), '2/10HPF'];
    case 'FREE_TEXT':
      return { text: String(truth) };
    case 'LIST':
      return 42;
  }
}

export interface ModelProfile {
  /** served name in seeded runs */
  name: string;
  /** served name of the same profile in the demo model server */
  simulatorName: string;
  family: string;
  parameterCountB: number;
  activeParameterCountB: number | null;
  sizeClass: 'TINY' | 'SMALL' | 'MEDIUM' | 'LARGE';
  specialisation: 'GENERAL' | 'MEDICAL';
  quantisation: string | null;
  supportsThinking: boolean;
  temperature: number;
  /** probability of a right cell at zero-shot on an average variable */
  skill: number;
  /** how much examples and structure help (multiplies the strategy gains) */
  promptSensitivity: number;
  /** probability that a whole answer is unusable (no JSON, truncated, refusal) */
  brokenRate: number;
  /** probability that one field is invalid */
  fieldInvalidRate: number;
  /** decode speed of one sequence, tokens per second */
  decodeTps: number;
  /** prefill speed, tokens per second */
  prefillTps: number;
  /** GPUs the paper's setup would use for this size */
  gpus: number;
}

/** The demo's model line-up: the paper's size classes (large, medium, small, tiny) and a medical model. */
export const MODELS: ModelProfile[] = [
  {
    name: 'synthetic/large-moe-402b (synthetic)',
    simulatorName: 'simulator/large-moe-402b-sim',
    family: 'synthetic-moe',
    parameterCountB: 402,
    activeParameterCountB: 17,
    sizeClass: 'LARGE',
    specialisation: 'GENERAL',
    quantisation: null,
    supportsThinking: false,
    temperature: 0.6,
    skill: 0.86,
    promptSensitivity: 0.7,
    brokenRate: 0.004,
    fieldInvalidRate: 0.003,
    decodeTps: 34,
    prefillTps: 9000,
    gpus: 8,
  },
  {
    name: 'synthetic/medium-dense-72b (synthetic)',
    simulatorName: 'simulator/medium-dense-72b-sim',
    family: 'synthetic-dense',
    parameterCountB: 72,
    activeParameterCountB: null,
    sizeClass: 'MEDIUM',
    specialisation: 'GENERAL',
    quantisation: null,
    supportsThinking: false,
    temperature: 0.6,
    skill: 0.84,
    promptSensitivity: 0.8,
    brokenRate: 0.006,
    fieldInvalidRate: 0.004,
    decodeTps: 19,
    prefillTps: 6000,
    gpus: 4,
  },
  {
    name: 'synthetic/small-dense-24b (synthetic)',
    simulatorName: 'simulator/small-dense-24b-sim',
    family: 'synthetic-dense',
    parameterCountB: 24,
    activeParameterCountB: null,
    sizeClass: 'SMALL',
    specialisation: 'GENERAL',
    quantisation: null,
    supportsThinking: false,
    temperature: 0.15,
    skill: 0.84,
    promptSensitivity: 0.9,
    brokenRate: 0.006,
    fieldInvalidRate: 0.005,
    decodeTps: 38,
    prefillTps: 8000,
    gpus: 1,
  },
  {
    name: 'synthetic/small-reasoner-8b (synthetic)',
    simulatorName: 'simulator/small-reasoner-8b-sim',
    family: 'synthetic-reasoner',
    parameterCountB: 8,
    activeParameterCountB: null,
    sizeClass: 'SMALL',
    specialisation: 'GENERAL',
    quantisation: null,
    supportsThinking: true,
    temperature: 0.6,
    skill: 0.76,
    promptSensitivity: 1.1,
    brokenRate: 0.02,
    fieldInvalidRate: 0.01,
    decodeTps: 62,
    prefillTps: 12000,
    gpus: 1,
  },
  {
    name: 'synthetic/tiny-1.7b (synthetic)',
    simulatorName: 'simulator/tiny-1.7b-sim',
    family: 'synthetic-reasoner',
    parameterCountB: 1.7,
    activeParameterCountB: null,
    sizeClass: 'TINY',
    specialisation: 'GENERAL',
    quantisation: 'Q4_K_M',
    supportsThinking: true,
    temperature: 0.6,
    skill: 0.55,
    promptSensitivity: 1.4,
    brokenRate: 0.07,
    fieldInvalidRate: 0.04,
    decodeTps: 110,
    prefillTps: 20000,
    gpus: 1,
  },
  {
    name: 'synthetic/medical-70b (synthetic)',
    simulatorName: 'simulator/medical-70b-sim',
    family: 'synthetic-medical',
    parameterCountB: 70,
    activeParameterCountB: null,
    sizeClass: 'MEDIUM',
    specialisation: 'MEDICAL',
    quantisation: null,
    supportsThinking: false,
    temperature: 0.4,
    skill: 0.79,
    promptSensitivity: 0.8,
    brokenRate: 0.015,
    fieldInvalidRate: 0.008,
    decodeTps: 19,
    prefillTps: 6000,
    gpus: 4,
  },
];

/** Extra gain of each strategy over zero-shot in the probability of a right cell (scaled by promptSensitivity). */
export const STRATEGY_GAIN: Record<Strategy, number> = {
  ZERO_SHOT: 0,
  ONE_SHOT: 0.035,
  FEW_SHOT: 0.045,
  CHAIN_OF_THOUGHT: 0.05,
  SELF_CONSISTENCY: 0.055,
  PROMPT_GRAPH: 0.075,
};

const REASONING_STRATEGIES = new Set<Strategy>(['CHAIN_OF_THOUGHT', 'SELF_CONSISTENCY', 'PROMPT_GRAPH']);

export interface SimulatedAnswer {
  /** the model's text, as a server would return it in `content` */
  content: string;
  /** reasoning a reasoning model returns in a separate field (vLLM's reasoning_content) */
  reasoning: string | null;
  finishReason: 'stop' | 'length';
  promptTokens: number;
  completionTokens: number;
  latencyMs: number;
}

export interface AnswerRequest {
  model: ModelProfile;
  strategy: Strategy;
  variables: VarDef[];
  truth: Record<string, Value>;
  /** tokens of the prompt around the report (instructions, examples) */
  promptOverheadTokens: number;
  reportText: string;
  /** per-use-case gain (the paper's strategy effects differ by use case) */
  useCaseStrategyScale?: number;
  thinking?: boolean;
  /** distractor values per key, for plausible wrong free text and lists */
  distractors?: Record<string, readonly string[]>;
  rng: Rng;
}

export const tokens = (text: string): number => Math.max(1, Math.round(text.length / 3.6));

/**
 * One simulated answer: each cell is right with a probability from the model's skill, the
 * strategy's gain and the variable's difficulty; wrong cells take plausible wrong values; a few
 * cells and a few whole answers are invalid in the ways the RADS paper's taxonomy lists.
 */
export function simulateAnswer(req: AnswerRequest): SimulatedAnswer {
  const { model, strategy, variables, truth, rng } = req;
  const gain = STRATEGY_GAIN[strategy] * model.promptSensitivity * (req.useCaseStrategyScale ?? 1);
  const out: Record<string, unknown> = {};
  const reasoningLines: string[] = [];
  for (const v of variables) {
    const t = truth[v.key] ?? missingOf(v);
    const p = Math.min(0.995, Math.max(0.15, model.skill + gain + v.difficulty + rng.normal() * 0.02));
    let value: unknown;
    if (rng.chance(model.fieldInvalidRate)) value = invalidValue(rng, v, t);
    else if (rng.chance(p)) value = t;
    else value = wrongValue(rng, v, t, req.distractors?.[v.key]);
    out[v.key] = value;
    reasoningLines.push(`- ${v.key}: ${isMissing(v, t) ? 'not mentioned in the report' : 'stated in the report'} → ${JSON.stringify(value)}`);
  }
  if (strategy === 'PROMPT_GRAPH') {
    // a step whose condition fails is not asked: its variables keep their defaults
    for (const v of variables) {
      if (!v.dependsOn) continue;
      const parent = out[v.dependsOn.key];
      if (!v.dependsOn.values.some((x) => String(x).toLowerCase() === String(parent).toLowerCase())) out[v.key] = missingOf(v);
    }
  }
  const reasons = REASONING_STRATEGIES.has(strategy) || req.thinking === true;
  const thinkingText = reasons ? `Let me go through the report field by field.\n${reasoningLines.join('\n')}\nNow the final JSON.` : null;
  let body = JSON.stringify(out, null, 2);
  if (rng.chance(0.08)) body = body.replace(/\n}$/, ',\n}');
  let content = `\`\`\`json\n${body}\n\`\`\``;
  let finishReason: 'stop' | 'length' = 'stop';
  if (rng.chance(model.brokenRate)) {
    const kind = rng.pick(['truncated', 'prose', 'missing-key', 'empty'] as const);
    if (kind === 'truncated') {
      content = content.slice(0, Math.floor(content.length * 0.55));
      finishReason = 'length';
    } else if (kind === 'prose') {
      content = 'I am unable to determine all requested fields with certainty from this report. Please consult the pathologist.';
    } else if (kind === 'missing-key') {
      const drop = rng.pick(variables).key;
      const partial = { ...out };
      delete partial[drop];
      content = `\`\`\`json\n${JSON.stringify(partial, null, 2)}\n\`\`\``;
    } else {
      content = '';
    }
  }
  const inlineThink = thinkingText !== null && !model.supportsThinking;
  const shown = inlineThink ? `<think>\n${thinkingText}\n</think>\n\n${content}` : content;
  const reasoning = thinkingText !== null && model.supportsThinking ? thinkingText : null;
  const samples = strategy === 'SELF_CONSISTENCY' ? 3 : 1;
  const steps = strategy === 'PROMPT_GRAPH' ? Math.max(1, new Set(variables.map((v) => v.graphStep)).size) : 1;
  const promptTokens = (tokens(req.reportText) + req.promptOverheadTokens) * samples * steps;
  const completionTokens = (tokens(shown) + (reasoning ? tokens(reasoning) : 0)) * samples + (steps > 1 ? steps * 25 : 0);
  const jitter = Math.exp(rng.normal() * 0.25);
  const latencyMs = Math.round(((promptTokens / model.prefillTps) * 1000 + (completionTokens / model.decodeTps) * 1000 / Math.min(samples, 2)) * jitter + 60 * steps);
  return { content: shown, reasoning, finishReason, promptTokens, completionTokens, latencyMs };
}

/** A CSV cell of a value: lists as JSON arrays, numbers with a decimal point. */
export function csvCell(value: Value): string {
  const s = Array.isArray(value) ? JSON.stringify(value) : String(value);
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
