/**
 * The demo model server: an OpenAI-compatible SIMULATOR, not a model. It speaks vLLM's dialect
 * (the test fake server's HTTP layer: /v1/models, /v1/chat/completions with reasoning_content,
 * usage and finish_reason, /v1/embeddings, Prometheus /metrics) and answers extraction requests
 * for the demo use cases: it finds the demo report in the prompt by its text, looks up the
 * synthetic reference of seeds/demo, and answers as one of the demo's model profiles would
 * (right, plausibly wrong, sometimes invalid), after a latency that follows the profile's
 * prefill and decode speed. Texts that are not demo reports get a cautious answer (every asked
 * field at its default). Asked for evidence, it adds quotes of the report to its answer (some
 * verbatim, some with changed case or spacing, slightly wrong or invented; see the fake server's
 * Evidence section). Served model names all say "simulator".
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { startFakeLlm, withFakeEvidence, type FakeChatBody, type FakeChatContext, type FakeLlm, type FakeResponseSpec } from '../../tests/support/fake-llm/fake-llm-server';
import { EXTRACTION_CASES } from '../demo/cases-extraction';
import { RADS_CASES } from '../demo/cases-rads';
import { hash, missingOf, MODELS, type ModelProfile, Rng, simulateAnswer, type Strategy, tokens, type Value, type VarDef, type VarType } from '../demo/lib';

export interface SimulatorOptions {
  port?: number;
  host?: string;
  /** Latency divisor: 1 is the profiles' realistic latency, 20 twenty times faster (tests). */
  speed?: number;
  apiKey?: string | null;
  /** seeds/demo by default */
  seedDir?: string;
}

interface DemoReport {
  id: string;
  text: string;
  /** the text as it appears in a prompt */
  probe: string;
  useCase: DemoUseCase;
  truth: Record<string, Value>;
}

interface DemoUseCase {
  slug: string;
  variables: VarDef[];
}

export interface Simulator {
  readonly baseUrl: string;
  readonly port: number;
  readonly models: string[];
  /** Chat requests answered so far, by how they were answered. */
  counts(): { demoReport: number; unknownText: number };
  close(): Promise<void>;
}

export const SIMULATOR_MODELS = MODELS.map((m) => m.simulatorName);

function defaultSeedDir(): string {
  return path.resolve(__dirname, '..', '..', 'seeds', 'demo');
}

interface SeedVariable {
  key: string;
  type: VarType;
  description: string;
  options?: string[];
  default?: unknown;
  graphStep?: number;
  dependsOn?: { key: string; values: string[] };
}

/** The demo's use cases and reports, with the consensus of each report as its truth. */
export function loadDemo(seedDir = defaultSeedDir()): { useCases: DemoUseCase[]; reports: DemoReport[] } {
  const generated = new Map([...EXTRACTION_CASES, ...RADS_CASES].map((c) => [c.slug, c]));
  const folders = JSON.parse(readFileSync(path.join(seedDir, 'index.json'), 'utf8')) as string[];
  const useCases: DemoUseCase[] = [];
  const reports: DemoReport[] = [];
  for (const slug of folders) {
    const dir = path.join(seedDir, slug);
    if (!existsSync(path.join(dir, 'use-case.json'))) continue;
    const spec = JSON.parse(readFileSync(path.join(dir, 'use-case.json'), 'utf8')) as { variables: SeedVariable[] };
    const known = new Map((generated.get(slug)?.variables ?? []).map((v) => [v.key, v]));
    const variables: VarDef[] = spec.variables.map((v) => ({
      key: v.key,
      type: v.type,
      description: v.description,
      ...(v.options ? { options: v.options } : {}),
      default: v.default ?? 'Not specified',
      graphStep: v.graphStep ?? 1,
      ...(v.dependsOn ? { dependsOn: v.dependsOn } : {}),
      ira: known.get(v.key)?.ira ?? 0.9,
      difficulty: known.get(v.key)?.difficulty ?? 0,
    }));
    const useCase: DemoUseCase = { slug, variables };
    useCases.push(useCase);
    const rows = parseCsv(readFileSync(path.join(dir, 'annotations-consensus.csv'), 'utf8'), { columns: true }) as Record<string, string>[];
    const truthById = new Map(rows.map((row) => [row['report_id'], row]));
    for (const line of readFileSync(path.join(dir, 'reports.jsonl'), 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      const r = JSON.parse(line) as { report_id: string; text: string };
      const row = truthById.get(r.report_id) ?? {};
      const truth: Record<string, Value> = {};
      for (const v of variables) {
        const cell = row[v.key];
        if (cell === undefined) continue;
        if (v.type === 'LIST') truth[v.key] = cell.trim().startsWith('[') ? (JSON.parse(cell) as string[]) : cell === '' ? [] : [cell];
        else if (v.type === 'NUMERIC' && cell.trim() !== '' && Number.isFinite(Number(cell))) truth[v.key] = Number(cell);
        else truth[v.key] = cell;
      }
      reports.push({ id: r.report_id, text: r.text, probe: r.text.trim(), useCase, truth });
    }
  }
  return { useCases, reports };
}

/** Which strategy the prompt looks like (the gain of a strategy depends on it). */
function strategyOf(ctx: FakeChatContext, scoped: boolean): Strategy {
  if (scoped) return 'PROMPT_GRAPH';
  const text = ctx.allText;
  if (/reason step-by-step|performs structured reasoning/i.test(text)) return 'CHAIN_OF_THOUGHT';
  if (/Below are \d+ examples/.test(text)) return 'FEW_SHOT';
  if (/Below is 1 example/.test(text)) return 'ONE_SHOT';
  return 'ZERO_SHOT';
}

function thinkingOf(body: FakeChatBody): boolean | undefined {
  const kwargs = body['chat_template_kwargs'] as { enable_thinking?: unknown } | undefined;
  if (kwargs && typeof kwargs.enable_thinking === 'boolean') return kwargs.enable_thinking;
  const effort = body['reasoning_effort'];
  if (typeof effort === 'string') return effort !== 'none';
  return undefined;
}

/** Starts the simulator; it listens until close(). */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const speed = options.speed && options.speed > 0 ? options.speed : 1;
  const { useCases, reports } = loadDemo(options.seedDir);
  const profiles = new Map(MODELS.map((m) => [m.simulatorName, m]));
  const counts = { demoReport: 0, unknownText: 0 };
  let fake: FakeLlm | undefined;

  const answer = (body: FakeChatBody, ctx: FakeChatContext): FakeResponseSpec | undefined => {
    const profile = profiles.get(ctx.model);
    if (!profile) return undefined;
    const text = ctx.allText;
    // the report is the last demo text in the prompt (examples come before it)
    let found: DemoReport | undefined;
    let at = -1;
    for (const r of reports) {
      const i = text.lastIndexOf(r.probe);
      if (i > at) {
        at = i;
        found = r;
      }
    }
    const before = at >= 0 ? text.slice(0, at) : text;
    const asked = (u: DemoUseCase) => u.variables.filter((v) => before.includes(JSON.stringify(v.key)));
    const useCase = found?.useCase ?? [...useCases].sort((a, b) => asked(b).length - asked(a).length)[0];
    if (!useCase) return undefined;
    let variables = asked(useCase);
    if (variables.length === 0) variables = useCase.variables;
    const scoped = variables.length < useCase.variables.length && useCase.variables.length > 1;
    const truth: Record<string, Value> = found ? found.truth : Object.fromEntries(variables.map((v) => [v.key, missingOf(v)]));
    if (found) counts.demoReport += 1;
    else counts.unknownText += 1;
    const guided = ctx.systemText.trim() !== '';
    const thinking = thinkingOf(body) ?? (profile.supportsThinking ? true : undefined);
    const model: ModelProfile = guided ? profile : { ...profile, skill: profile.skill - 0.09, brokenRate: profile.brokenRate * 3, fieldInvalidRate: profile.fieldInvalidRate * 4 };
    const rng = new Rng(hash(`${ctx.model}|${found?.id ?? text.length}|${variables.map((v) => v.key).join('|')}|${ctx.temperature ?? ''}|${thinking ?? ''}`));
    const simulated = simulateAnswer({
      model,
      strategy: strategyOf(ctx, scoped),
      variables,
      truth,
      promptOverheadTokens: 0,
      reportText: text,
      ...(thinking !== undefined ? { thinking: thinking && profile.supportsThinking } : {}),
      rng,
    });
    const promptTokens = tokens(text);
    const completionTokens = tokens(simulated.content) + (simulated.reasoning ? tokens(simulated.reasoning) : 0);
    const maxTokens = typeof body['max_tokens'] === 'number' ? (body['max_tokens'] as number) : typeof body['max_completion_tokens'] === 'number' ? (body['max_completion_tokens'] as number) : null;
    // Asked for evidence, the simulator quotes the report as a model would: mostly right, some
    // quotes with changed case or spacing, slightly wrong or invented (the fake server's mix).
    let content = withFakeEvidence(simulated.content, body, ctx.messages, hash(found?.id ?? ctx.model) % 1000);
    let finishReason: string = simulated.finishReason;
    if (maxTokens !== null && tokens(content) > maxTokens) {
      content = content.slice(0, Math.floor(maxTokens * 3.6));
      finishReason = 'length';
    }
    // batching: latency grows a little with the requests in flight on this server
    const load = 1 + 0.03 * Math.max(0, (fake?.stats().inFlight ?? 1) - 1);
    const jitter = Math.exp(rng.normal() * 0.2);
    const latencyMs = ((promptTokens / profile.prefillTps + Math.min(completionTokens, maxTokens ?? Infinity) / profile.decodeTps) * 1000 * load * jitter) / speed;
    return {
      content,
      reasoning: simulated.reasoning,
      finishReason,
      usage: { promptTokens, completionTokens: Math.min(completionTokens, maxTokens ?? Infinity) },
      delayMs: Math.round(latencyMs),
    };
  };

  fake = await startFakeLlm({
    port: options.port ?? 8001,
    host: options.host ?? '127.0.0.1',
    models: SIMULATOR_MODELS.map((id) => ({ id, maxModelLen: 32768 })),
    apiKey: options.apiKey ?? null,
    recordRequests: false,
    maxRunning: 64,
  });
  fake.setHandler(answer);
  const server = fake;
  return {
    baseUrl: server.baseUrl,
    port: server.port,
    models: SIMULATOR_MODELS,
    counts: () => ({ ...counts }),
    close: () => server.close(),
  };
}
