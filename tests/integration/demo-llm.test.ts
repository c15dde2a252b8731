/**
 * The demo model server end to end, as the README's three steps: start it, registerEndpoint,
 * startExperiment and subscribe. The simulator answers the demo reports from their text, so the
 * executed runs score like the seeded ones: the large profile well, the tiny one worse, with
 * usage, latency and now and then an invalid output; its /metrics speaks vLLM's names.
 */
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startSimulator, type Simulator } from '../../scripts/demo-llm/simulator';
import { alignQuotes } from '../../src/extraction/evidence-alignment';
import { parseOutput } from '../../src/extraction/output-parser';
import { buildMessages } from '../../src/extraction/prompt-builder';
import type { RunExecutor } from '../../src/jobs/executor';
import { createLogger } from '../../src/logger';
import { demoSeedDir, seedDemo } from '../../src/seeds/demo-seed';
import { ok } from '../support/graphql-fixtures';
import { collect, startExecutor, wsClient } from '../support/run-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

describe('the demo model server (simulator)', () => {
  let t: TestApp;
  let sim: Simulator;
  let executor: RunExecutor;
  let seedDir: string;

  beforeAll(async () => {
    // one demo use case is enough here: a seed folder holding only the Czech sarcomas
    seedDir = mkdtempSync(path.join(tmpdir(), 'reportql-demo-llm-'));
    symlinkSync(path.join(demoSeedDir(), 'paper-sarcoma-cs'), path.join(seedDir, 'paper-sarcoma-cs'));
    symlinkSync(path.join(demoSeedDir(), 'models.json'), path.join(seedDir, 'models.json'));
    writeFileSync(path.join(seedDir, 'index.json'), JSON.stringify(['paper-sarcoma-cs']));
    t = await startTestApp();
    await seedDemo(t.dataSource, t.services, createLogger('silent'), seedDir);
    sim = await startSimulator({ port: 0, speed: 40 });
    executor = await startExecutor(t);
  });
  afterAll(async () => {
    await executor.stop();
    await sim.close();
    await t.close();
    rmSync(seedDir, { recursive: true, force: true });
  });

  it('lists only models named as a simulator', async () => {
    const listed = (await (await fetch(`${sim.baseUrl}/models`)).json()) as { data: { id: string }[] };
    expect(listed.data.length).toBeGreaterThanOrEqual(5);
    for (const m of listed.data) expect(m.id).toMatch(/^simulator\/.*-sim$/);
  });

  it('registers, runs an experiment over the demo dataset, reports progress over the subscription, and scores it', async () => {
    const ids = ok(await t.gql(`{ projects { nodes { id useCases { nodes { id datasets { nodes { id } } } } } } }`));
    const project = ids.projects.nodes[0];
    const useCaseId = project.useCases.nodes[0].id as string;
    const datasetId = project.useCases.nodes[0].datasets.nodes[0].id as string;

    const registered = ok(
      await t.gql(
        `mutation($input: RegisterEndpointInput!) { registerEndpoint(input: $input) { endpoint { id health { status } } models { id servedName } } }`,
        { input: { projectId: project.id, name: 'demo model server (simulator)', baseUrl: sim.baseUrl, kind: 'VLLM', maxConcurrency: 8, gpuCount: 1 } },
      ),
    );
    const models = registered.registerEndpoint.models as { id: string; servedName: string }[];
    const pick = (name: string) => models.find((m) => m.servedName === name)!.id;
    // registration probes the endpoint's capabilities with requests of its own
    const probes = sim.counts().unknownText;
    const large = pick('simulator/large-moe-402b-sim');
    const tiny = pick('simulator/tiny-1.7b-sim');

    const started = ok(
      await t.gql(
        `mutation($input: StartExperimentInput!) { startExperiment(input: $input) { experiment { id } runs { id strategy model { servedName } } } }`,
        { input: { datasetId, name: 'simulator experiment', modelIds: [large, tiny], strategies: ['ZERO_SHOT', 'FEW_SHOT'] } },
      ),
    );
    expect(started.startExperiment.runs).toHaveLength(4);
    const client = wsClient(t);
    try {
      const events = await collect(
        client,
        `subscription($id: ID!) { experimentProgress(experimentId: $id) { progress { runs finished predictionsSucceeded predictionsFailed } } }`,
        { id: started.startExperiment.experiment.id },
      ).done;
      const last = events[events.length - 1]!.experimentProgress.progress;
      expect(last.finished).toBe(true);
      expect(last.predictionsSucceeded + last.predictionsFailed).toBe(4 * 30);
    } finally {
      await client.dispose();
    }
    expect(sim.counts().demoReport).toBeGreaterThanOrEqual(4 * 30);
    expect(sim.counts().unknownText).toBe(probes);

    const board = ok(
      await t.gql(
        `query($id: ID!) { node(id: $id) { ... on UseCase { runs(first: 50, filter: { source: EXECUTED }) { nodes { model { servedName } strategy
          usage { promptTokens completionTokens latencyP50Ms tokensPerSecond }
          scores(options: { resamples: 0 }) { macroAverage { value } validity } } } } } }`,
        { id: useCaseId },
      ),
    );
    const runs = board.node.runs.nodes as { model: { servedName: string }; strategy: string; usage: Record<string, number>; scores: { macroAverage: { value: number }; validity: number } }[];
    expect(runs).toHaveLength(4);
    for (const r of runs) {
      expect(r.usage.promptTokens).toBeGreaterThan(30 * 300);
      expect(r.usage.completionTokens).toBeGreaterThan(0);
      expect(r.usage.latencyP50Ms).toBeGreaterThan(0);
      expect(r.usage.tokensPerSecond).toBeGreaterThan(0);
    }
    const macro = (model: string) => {
      const xs = runs.filter((r) => r.model.servedName === model).map((r) => r.scores.macroAverage.value);
      return xs.reduce((a, b) => a + b, 0) / xs.length;
    };
    expect(macro('simulator/large-moe-402b-sim')).toBeGreaterThan(0.6);
    expect(macro('simulator/large-moe-402b-sim')).toBeGreaterThan(macro('simulator/tiny-1.7b-sim'));
    const fewShot = runs.filter((r) => r.strategy === 'FEW_SHOT').map((r) => r.usage.promptTokens);
    const zeroShot = runs.filter((r) => r.strategy === 'ZERO_SHOT').map((r) => r.usage.promptTokens);
    expect(Math.min(...fewShot)).toBeGreaterThan(Math.max(...zeroShot));
  });

  it('answers the prompt graph step by step, self-consistency samples and chain-of-thought reasoning', async () => {
    const ids = ok(await t.gql(`{ projects { nodes { useCases { nodes { id datasets { nodes { id } } } } models(first: 50) { nodes { id servedName endpoint { id } } } } } }`));
    const project = ids.projects.nodes[0];
    const model = (project.models.nodes as { id: string; servedName: string; endpoint: unknown }[]).find((m) => m.servedName === 'simulator/small-dense-24b-sim' && m.endpoint)!;
    const started = ok(
      await t.gql(`mutation($input: StartExperimentInput!) { startExperiment(input: $input) { experiment { id } runs { id strategy } } }`, {
        input: { datasetId: project.useCases.nodes[0].datasets.nodes[0].id, name: 'structured strategies', modelIds: [model.id], strategies: ['PROMPT_GRAPH', 'SELF_CONSISTENCY', 'CHAIN_OF_THOUGHT'] },
      }),
    );
    const client = wsClient(t);
    try {
      await collect(client, `subscription($id: ID!) { experimentProgress(experimentId: $id) { progress { finished } } }`, { id: started.startExperiment.experiment.id }).done;
    } finally {
      await client.dispose();
    }
    for (const run of started.startExperiment.runs as { id: string; strategy: string }[]) {
      const result = ok(
        await t.gql(`query($id: ID!) { node(id: $id) { ... on Run { status scores(options: { resamples: 0 }) { macroAverage { value } validity }
          predictions(first: 1) { nodes { reasoning } } } } }`, { id: run.id }),
      );
      expect({ strategy: run.strategy, status: result.node.status }).toEqual({ strategy: run.strategy, status: 'SUCCEEDED' });
      expect(result.node.scores.macroAverage.value).toBeGreaterThan(0.5);
      expect(result.node.scores.validity).toBeGreaterThan(0.9);
      if (run.strategy === 'CHAIN_OF_THOUGHT') expect(result.node.predictions.nodes[0].reasoning).toContain('field by field');
    }
  });

  it('answers a text that is not a demo report cautiously, and counts its traffic in vLLM\'s metrics', async () => {
    const before = sim.counts().unknownText;
    const response = await fetch(`${sim.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'simulator/small-dense-24b-sim',
        messages: [{ role: 'user', content: 'Extract into ```json {"necrosis": "", "tumour size": 0} ```\n\nA report the demo does not know.' }],
      }),
    });
    const body = (await response.json()) as { choices: { message: { content: string } }[]; usage: { prompt_tokens: number } };
    expect(body.choices[0]!.message.content).toContain('"necrosis"');
    expect(body.usage.prompt_tokens).toBeGreaterThan(0);
    expect(sim.counts().unknownText).toBe(before + 1);
    const metrics = await (await fetch(sim.baseUrl.replace(/\/v1$/, '/metrics'))).text();
    expect(metrics).toMatch(/vllm:generation_tokens_total\{[^}]*model_name="simulator\/small-dense-24b-sim"[^}]*\} [1-9]/);
  });

  it('quotes the report when the prompt asks for evidence, and only then', async () => {
    const report = { id: 'x', text: 'Necrosis is absent; the tumour measures 14 mm in its greatest dimension.' };
    const variables = [{ key: 'necrosis', type: 'FREE_TEXT' as const }, { key: 'tumour size', type: 'NUMERIC' as const }];
    const answer = async (evidence: boolean) => {
      const messages = buildMessages({ variables, family: 'DIRECT', report, evidence });
      const response = await fetch(`${sim.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'simulator/small-dense-24b-sim', messages }),
      });
      const content = ((await response.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
      return parseOutput({ content }, variables, { evidence: true });
    };
    const quoted = await answer(true);
    expect(Object.keys(quoted.quotes!)).toEqual(['necrosis', 'tumour size']);
    const quotes = Object.values(quoted.quotes!).flat();
    expect(quotes.length).toBeGreaterThan(0);
    expect(alignQuotes(report.text, quotes).some((q) => q.status !== 'UNALIGNED')).toBe(true);
    expect(Object.values((await answer(false)).quotes!).flat()).toEqual([]);
  });
});
