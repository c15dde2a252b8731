/**
 * Writes the paper-grade part of seeds/demo from a fixed seed: the extraction paper's six use
 * cases (seven folders: soft-tissue tumours in English and Dutch) and the RADS paper's ten
 * schemes, each with synthetic reports, annotators and a consensus, a prompt, and synthetic runs
 * of the demo's model line-up with usage; and seeds/demo/models.json (the models' metadata).
 *
 *   npm run demo:generate
 *
 * The output is deterministic: running it again rewrites the same bytes. The hand-written
 * folders (melanoma-nl, brain-mri-en) are left alone.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { EXTRACTION_CASES } from './cases-extraction';
import { RADS_CASES } from './cases-rads';
import type { MadeReport, UseCaseGen } from './cases-types';
import { csvCell, hash, isMissing, missingOf, MODELS, type ModelProfile, Rng, simulateAnswer, type Strategy, tokens, type Value, type VarDef, wrongValue } from './lib';

const ROOT = path.resolve(__dirname, '..', '..', 'seeds', 'demo');
/** The hand-written folders (not generated). */
const TOUR = ['brain-mri-en', 'melanoma-nl'];
const NOTE = 'synthetic demo run, not produced by a real model';

const pad = (n: number) => String(n).padStart(3, '0');

function useCaseJson(c: UseCaseGen) {
  return {
    name: c.name,
    description: c.description,
    language: c.language,
    reportType: c.reportType,
    tags: c.tags,
    missingTokens: null,
    variables: c.variables.map((v) => ({
      key: v.key,
      type: v.type,
      description: v.description,
      ...(v.instructions ? { instructions: v.instructions } : {}),
      ...(v.options ? { options: v.options } : {}),
      ...(v.aliases ? { aliases: v.aliases } : {}),
      ...(v.collapseMap ? { collapseMap: v.collapseMap } : {}),
      default: v.default,
      ...(v.tolerance !== undefined ? { tolerance: v.tolerance } : {}),
      weight: 1,
      graphStep: v.graphStep,
      ...(v.dependsOn ? { dependsOn: v.dependsOn } : {}),
    })),
  };
}

function csv(variables: VarDef[], rows: { id: string; values: Record<string, Value> }[]): string {
  const header = ['report_id', ...variables.map((v) => v.key)].map((h) => csvCell(h)).join(',');
  const body = rows.map((r) => [r.id, ...variables.map((v) => csvCell(r.values[v.key] ?? missingOf(v)))].join(','));
  return `${[header, ...body].join('\n')}\n`;
}

function reasoningOf(variables: VarDef[], truth: Record<string, Value>): string {
  return variables
    .map((v) => {
      const value = truth[v.key] ?? missingOf(v);
      return isMissing(v, value)
        ? `- ${v.key} - "not mentioned in the report" implies ${JSON.stringify(value)}`
        : `- ${v.key} - "${Array.isArray(value) ? value.join(', ') : String(value)}" as stated in the report implies ${JSON.stringify(value)}`;
    })
    .join('\n');
}

/** Annotators disagree with the consensus about as often as the paper's inter-rater agreement says. */
function annotate(rng: Rng, c: UseCaseGen, reports: { id: string; made: MadeReport }[]) {
  return reports.map(({ id, made }) => {
    const values: Record<string, Value> = {};
    for (const v of c.variables) {
      const truth = made.truth[v.key] ?? missingOf(v);
      values[v.key] = rng.chance((1 - v.ira) * 0.5 + 0.015) ? wrongValue(rng, v, truth, c.distractors?.[v.key]) : truth;
    }
    return { id, values };
  });
}

function overheadTokens(c: UseCaseGen, strategy: Strategy, exampleTokens: number): number {
  const base = 260 + c.variables.length * 70;
  switch (strategy) {
    case 'ZERO_SHOT':
      return base;
    case 'ONE_SHOT':
      return base + exampleTokens;
    case 'FEW_SHOT':
      return base + 3 * exampleTokens;
    default:
      return base + 3 * Math.round(exampleTokens * 1.4);
  }
}

interface RunEntry {
  file: string;
  modelName: string;
  strategy: Strategy;
  name?: string;
  note: string;
  usage: true;
  config: Record<string, unknown>;
}

function writeRuns(dir: string, c: UseCaseGen, reports: { id: string; made: MadeReport }[], exampleTokens: number) {
  const runsDir = path.join(dir, 'runs');
  mkdirSync(runsDir, { recursive: true });
  const entries: RunEntry[] = [];
  const plan: { model: ModelProfile; strategy: Strategy; thinking?: boolean; guided?: boolean; label: string }[] = [];
  if (c.rads) {
    for (const model of MODELS) plan.push({ model, strategy: 'ZERO_SHOT', guided: true, thinking: model.supportsThinking, label: model.supportsThinking ? 'guided · thinking' : 'guided' });
    const reasoner = MODELS.find((m) => m.name.includes('reasoner'))!;
    plan.push({ model: reasoner, strategy: 'ZERO_SHOT', guided: true, thinking: false, label: 'guided · non-thinking' });
    for (const model of [MODELS.find((m) => m.name.includes('medium-dense'))!, reasoner]) {
      plan.push({ model, strategy: 'ZERO_SHOT', guided: false, thinking: model.supportsThinking, label: 'zero-shot (no system prompt)' });
    }
  } else {
    for (const model of MODELS) for (const strategy of c.strategies) plan.push({ model, strategy, label: strategy });
  }
  for (const p of plan) {
    const slugOf = (s: string) => s.replace(/^synthetic\//, '').replace(/ \(synthetic\)$/, '').replace(/[^a-z0-9.]+/gi, '-');
    const file = `${slugOf(p.model.name)}.${p.label.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/-+$/, '')}.jsonl`;
    const rng = new Rng(hash(`${c.slug}|${p.model.name}|${p.label}`));
    const model: ModelProfile = c.rads
      ? {
          ...p.model,
          skill: p.model.skill + (p.thinking ? 0.06 : 0) - (p.guided === false ? 0.09 : 0),
          brokenRate: p.model.brokenRate * (p.guided === false ? 3 : 1) + (p.model.sizeClass === 'TINY' ? 0.04 : 0),
          fieldInvalidRate: p.model.fieldInvalidRate * (p.guided === false ? 4 : 1.5),
        }
      : p.model;
    const lines = reports.map(({ id, made }) => {
      const a = simulateAnswer({
        model,
        strategy: p.strategy,
        variables: c.variables,
        truth: made.truth,
        promptOverheadTokens: c.rads ? (p.guided === false ? 40 : 420) : overheadTokens(c, p.strategy, exampleTokens),
        reportText: made.text,
        useCaseStrategyScale: c.strategyScale,
        ...(p.thinking !== undefined ? { thinking: p.thinking } : {}),
        ...(c.distractors ? { distractors: c.distractors } : {}),
        rng,
      });
      return JSON.stringify({
        report_id: id,
        raw_output: a.content,
        reasoning: a.reasoning,
        finish_reason: a.finishReason,
        prompt_tokens: a.promptTokens,
        completion_tokens: a.completionTokens,
        latency_ms: a.latencyMs,
      });
    });
    writeFileSync(path.join(runsDir, file), `${lines.join('\n')}\n`);
    const config: Record<string, unknown> = {
      sampling: c.rads ? { temperature: 0, topP: 1, topK: 1, maxTokens: 50, seed: 42 } : { temperature: p.model.temperature, topP: 0.95, topK: 50 },
    };
    // what the run would have needed on the paper's hardware: GPUs by model size and the wall
    // time at 8 requests in flight (the imported run keeps it in its config)
    const latencies = lines.map((l) => (JSON.parse(l) as { latency_ms: number }).latency_ms);
    config['hardware'] = { gpu: 'H100 (synthetic)', gpuCount: p.model.gpus, concurrency: 8 };
    config['wallTimeMs'] = Math.round(latencies.reduce((a, b) => a + b, 0) / 8);
    if (p.thinking !== undefined) config['thinking'] = p.thinking;
    if (p.guided !== undefined) config['guided'] = p.guided;
    entries.push({
      file,
      modelName: p.model.name,
      strategy: p.strategy,
      ...(c.rads ? { name: `${p.model.name} · ${p.label} (imported)` } : {}),
      note: NOTE,
      usage: true,
      config,
    });
  }
  writeFileSync(path.join(runsDir, 'runs.json'), `${JSON.stringify(entries, null, 2)}\n`);
}

function writeCase(c: UseCaseGen): void {
  const dir = path.join(ROOT, c.slug);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const rng = new Rng(hash(c.slug));
  const reports = Array.from({ length: c.count }, (_, i) => ({ id: `${c.idPrefix}-${pad(i + 1)}`, made: c.make(rng, i) }));
  const exampleRng = new Rng(hash(`${c.slug}|examples`));
  const examples = [0, 1, 2].map((i) => c.make(exampleRng, c.count + i));
  writeFileSync(path.join(dir, 'use-case.json'), `${JSON.stringify(useCaseJson(c), null, 2)}\n`);
  writeFileSync(
    path.join(dir, 'reports.jsonl'),
    `${reports.map(({ id, made }) => JSON.stringify({ report_id: id, text: made.text, ...made.meta })).join('\n')}\n`,
  );
  const annotatorRng = new Rng(hash(`${c.slug}|annotators`));
  const annotators: { file: string; name: string; kind: 'HUMAN' | 'CONSENSUS'; isReference: boolean }[] = [];
  for (let a = 0; a < c.annotators; a += 1) {
    const letter = String.fromCharCode(65 + a);
    const file = `annotations-annotator-${letter.toLowerCase()}.csv`;
    writeFileSync(path.join(dir, file), csv(c.variables, annotate(annotatorRng, c, reports)));
    annotators.push({ file, name: `Annotator ${letter}`, kind: 'HUMAN', isReference: false });
  }
  writeFileSync(path.join(dir, 'annotations-consensus.csv'), csv(c.variables, reports.map(({ id, made }) => ({ id, values: made.truth }))));
  annotators.push({ file: 'annotations-consensus.csv', name: 'Consensus', kind: 'CONSENSUS', isReference: true });
  writeFileSync(path.join(dir, 'annotators.json'), `${JSON.stringify(annotators, null, 2)}\n`);
  const prompt = {
    name: c.rads ? `${c.name} — guided v1` : `${c.name} — paper prompt v1`,
    system: c.system ?? null,
    task: c.task,
    examples: examples.map((e) => ({
      input: e.text,
      reasoning: reasoningOf(c.variables, e.truth),
      output: Object.fromEntries(c.variables.map((v) => [v.key, e.truth[v.key] ?? missingOf(v)])),
    })),
  };
  writeFileSync(path.join(dir, 'prompt.json'), `${JSON.stringify(prompt, null, 2)}\n`);
  const exampleTokens = Math.round(examples.reduce((s, e) => s + tokens(e.text) + tokens(JSON.stringify(e.truth)), 0) / examples.length);
  writeRuns(dir, c, reports, exampleTokens);
}

function main(): void {
  for (const c of [...EXTRACTION_CASES, ...RADS_CASES]) writeCase(c);
  const models = MODELS.map((m) => ({
    servedName: m.name,
    family: m.family,
    parameterCountB: m.parameterCountB,
    activeParameterCountB: m.activeParameterCountB,
    sizeClass: m.sizeClass,
    specialisation: m.specialisation,
    quantisation: m.quantisation,
    supportsThinking: m.supportsThinking,
    defaultSampling: { temperature: m.temperature, topP: 0.95, topK: 50 },
  }));
  // listing order of the demo: the hand-written tour of every variable type (as before), then the papers' use cases
  const index = TOUR.concat([...EXTRACTION_CASES, ...RADS_CASES].map((c) => c.slug));
  writeFileSync(path.join(ROOT, 'index.json'), `${JSON.stringify(index, null, 2)}\n`);
  writeFileSync(path.join(ROOT, 'models.json'), `${JSON.stringify(models, null, 2)}\n`);
  process.stdout.write(`wrote ${EXTRACTION_CASES.length + RADS_CASES.length} use cases and models.json under ${path.relative(process.cwd(), ROOT)}\n`);
}

main();
