/**
 * The demo a newcomer meets on first start: the extraction paper's use cases and the RADS
 * schemes, with model metadata, so that the analyst's first queries (leaderboards with
 * intervals, agreement, size classes, variance shares, strategy effects, usage) return results.
 */
import { createLogger } from '../../src/logger';
import { seedDemo } from '../../src/seeds/demo-seed';
import { startTestApp, type TestApp } from '../support/test-app';

interface UseCaseRow {
  id: string;
  name: string;
  tags: string[];
  datasets: { nodes: { id: string }[] };
}

describe('the paper-grade demo seed', () => {
  let t: TestApp;
  let projectId: string;
  let useCases: UseCaseRow[];
  const paper = () => useCases.filter((u) => u.tags.includes('extraction-paper'));
  const rads = () => useCases.filter((u) => u.tags.includes('RADS'));
  const byName = (name: string) => useCases.find((u) => u.name === name)!;

  beforeAll(async () => {
    t = await startTestApp();
    const started = process.hrtime.bigint();
    await seedDemo(t.dataSource, t.services, createLogger('silent'));
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    process.stdout.write(`demo seed loaded in ${ms.toFixed(0)} ms\n`);
    const result = await t.gql(`{ projects { nodes { id useCases(first: 50) { nodes { id name tags datasets { nodes { id } } } } } } }`);
    expect(result.errors).toBeUndefined();
    projectId = result.data!.projects.nodes[0].id;
    useCases = result.data!.projects.nodes[0].useCases.nodes;
  });
  afterAll(() => t.close());

  it('holds the six use cases of the extraction paper (seven sub-use cases) and ten RADS schemes', () => {
    expect(paper().map((u) => u.name).sort()).toEqual([
      'Colorectal liver metastases (Dutch)',
      'Liver tumours (Dutch)',
      'Melanomas (Dutch)',
      'Neurodegenerative diseases, brain MRI (Dutch)',
      'Sarcomas (Czech)',
      'Soft-tissue tumours (Dutch)',
      'Soft-tissue tumours (English)',
    ]);
    expect(rads()).toHaveLength(10);
    for (const u of rads()) expect(u.tags.some((tag) => /^complexity:(minimal|moderate|high)$/.test(tag))).toBe(true);
  });

  it('the models carry the size classes of the paper and a medical model', async () => {
    const result = await t.gql(`query($id: ID!) { project(id: $id) { models(first: 50) { nodes { servedName sizeClass specialisation parameterCountB supportsThinking endpoint { id } } } } }`, {
      id: projectId,
    });
    expect(result.errors).toBeUndefined();
    const models = result.data!.project.models.nodes as { servedName: string; sizeClass: string; specialisation: string; endpoint: unknown }[];
    const synthetic = models.filter((m) => m.servedName.startsWith('synthetic/large') || m.servedName.includes('-70b') || m.servedName.includes('tiny'));
    expect(synthetic.length).toBeGreaterThanOrEqual(3);
    expect(new Set(models.map((m) => m.sizeClass))).toEqual(expect.objectContaining({}));
    for (const cls of ['LARGE', 'MEDIUM', 'SMALL', 'TINY']) expect(models.some((m) => m.sizeClass === cls)).toBe(true);
    expect(models.some((m) => m.specialisation === 'MEDICAL')).toBe(true);
    expect(models.every((m) => m.endpoint === null)).toBe(true);
    for (const m of models) expect(m.servedName).toMatch(/synthetic/);
  });

  it('a paper use case ranks 18 runs (6 models × 3 strategies) with intervals, next to the annotators\' agreement', async () => {
    const melanoma = byName('Melanomas (Dutch)');
    const result = await t.gql(
      `query($id: ID!, $ds: ID!) {
        uc: node(id: $id) { ... on UseCase { leaderboard(datasetId: $ds, options: { resamples: 200 }) { exact entries { rank rankCiLow rankCiHigh strategy model { sizeClass } macroAverage { value ciLow ciHigh } } } } }
        ds: node(id: $ds) { ... on Dataset { annotators { name } interRaterAgreement(options: { resamples: 200 }) { macroAverage { value ciLow ciHigh } } } } }`,
      { id: melanoma.id, ds: melanoma.datasets.nodes[0]!.id },
    );
    expect(result.errors).toBeUndefined();
    const board = result.data!.uc.leaderboard;
    expect(board.exact).toBe(true);
    expect(board.entries).toHaveLength(18);
    expect(new Set(board.entries.map((e: { strategy: string }) => e.strategy))).toEqual(new Set(['ZERO_SHOT', 'ONE_SHOT', 'FEW_SHOT']));
    for (const e of board.entries) {
      expect(e.macroAverage.ciLow).toBeLessThanOrEqual(e.macroAverage.value);
      expect(e.macroAverage.value).toBeLessThanOrEqual(e.macroAverage.ciHigh);
      expect(e.model.sizeClass).not.toBeNull();
    }
    const top = board.entries[0].macroAverage.value as number;
    const last = board.entries[board.entries.length - 1].macroAverage.value as number;
    expect(top).toBeGreaterThan(0.7);
    expect(top - last).toBeGreaterThan(0.1);
    const ira = result.data!.ds.interRaterAgreement.macroAverage.value as number;
    expect(ira).toBeGreaterThan(0.6);
    expect(ira).toBeLessThan(0.98);
  });

  it('three annotators in the Czech sarcomas give three pairs', async () => {
    const sarcoma = byName('Sarcomas (Czech)');
    const result = await t.gql(`query($ds: ID!) { node(id: $ds) { ... on Dataset { interRaterAgreement(options: { resamples: 0 }) { annotators { name } variables { pairs { a { name } b { name } } } } } } }`, {
      ds: sarcoma.datasets.nodes[0]!.id,
    });
    expect(result.errors).toBeUndefined();
    const agreement = result.data!.node.interRaterAgreement;
    expect(agreement.annotators).toHaveLength(3);
    expect(agreement.variables[0].pairs).toHaveLength(3);
  });

  it('size classes, strategy effects and variance shares across the paper use cases', async () => {
    const ids = paper().map((u) => u.id);
    const result = await t.gql(
      `query($p: ID!, $ids: [ID!]!) { project(id: $p) {
        groupSummary(useCaseIds: $ids, groupBy: SIZE_CLASS, options: { resamples: 100 }) { group memberCount estimate { value ciLow ciHigh } }
        specialisation: groupSummary(useCaseIds: $ids, groupBy: SPECIALISATION, options: { resamples: 100 }) { group estimate { value } }
        strategyEffects(useCaseIds: $ids, options: { resamples: 100 }) { baseline topRanked { strategy count } rows { strategy best model { servedName } difference { value } } }
      } }`,
      { p: projectId, ids },
    );
    expect(result.errors).toBeUndefined();
    const groups = result.data!.project.groupSummary as { group: string; estimate: { value: number } }[];
    expect(groups.map((g) => g.group).sort()).toEqual(['LARGE', 'MEDIUM', 'SMALL', 'TINY']);
    const value = (g: string) => groups.find((x) => x.group === g)!.estimate.value;
    expect(value('TINY')).toBeLessThan(value('LARGE'));
    expect(value('TINY')).toBeLessThan(value('SMALL'));
    expect(result.data!.project.specialisation.map((g: { group: string }) => g.group).sort()).toEqual(['GENERAL', 'MEDICAL']);
    const effects = result.data!.project.strategyEffects;
    const strategies = new Set(effects.rows.map((r: { strategy: string }) => r.strategy));
    for (const s of ['ONE_SHOT', 'FEW_SHOT', 'CHAIN_OF_THOUGHT', 'SELF_CONSISTENCY', 'PROMPT_GRAPH']) expect(strategies.has(s)).toBe(true);
    const pooledBest = effects.rows.find((r: { best: boolean; model: unknown }) => r.best && r.model === null);
    expect(pooledBest.difference.value).toBeGreaterThan(0);

    const neuro = byName('Neurodegenerative diseases, brain MRI (Dutch)');
    const variance = await t.gql(`query($id: ID!, $ds: ID!) { node(id: $id) { ... on UseCase { varianceDecomposition(datasetId: $ds) { components { name share } residualShare warnings } } } }`, {
      id: neuro.id,
      ds: neuro.datasets.nodes[0]!.id,
    });
    expect(variance.errors).toBeUndefined();
    const decomposition = variance.data!.node.varianceDecomposition;
    expect(decomposition.warnings).toEqual([]);
    expect(decomposition.components.length).toBeGreaterThanOrEqual(2);
    expect(decomposition.residualShare).toBeGreaterThan(0);
  });

  it('RADS: validity and accuracy by size bin and complexity, guided against zero-shot', async () => {
    const ids = rads().map((u) => u.id);
    const result = await t.gql(
      `query($p: ID!, $ids: [ID!]!) { project(id: $p) {
        bySize: stratifiedResults(useCaseIds: $ids, groupBy: { by: SIZE_BIN, sizeBinEdges: [1, 10, 29, 100] }, stratifyBy: { useCaseTagPrefix: "complexity:" }, options: { resamples: 100 }) {
          group stratum predictions validity { value } effective { value } invalid { category count } }
        byGuidance: stratifiedResults(useCaseIds: $ids, groupBy: { by: GUIDANCE }, options: { resamples: 100 }) { group validity { value } effective { value } }
      } }`,
      { p: projectId, ids },
    );
    expect(result.errors).toBeUndefined();
    const rows = result.data!.project.bySize as { group: string; stratum: string; validity: { value: number }; invalid: { category: string; count: number }[] }[];
    expect(new Set(rows.filter((r) => r.stratum !== null).map((r) => r.stratum))).toEqual(new Set(['complexity:minimal', 'complexity:moderate', 'complexity:high']));
    expect(rows.some((r) => r.validity.value < 1)).toBe(true);
    const guided = result.data!.project.byGuidance as { group: string; validity: { value: number }; effective: { value: number } }[];
    const g = guided.find((x) => x.group === 'GUIDED')!;
    const z = guided.find((x) => x.group === 'ZERO_SHOT')!;
    expect(g.validity.value).toBeGreaterThan(z.validity.value);
    expect(g.effective.value).toBeGreaterThan(z.effective.value);
  });

  it('imported runs carry usage: tokens and latency percentiles', async () => {
    const crlm = byName('Colorectal liver metastases (Dutch)');
    const result = await t.gql(`query($id: ID!) { node(id: $id) { ... on UseCase { runs(first: 50) { nodes { strategy usage { promptTokens completionTokens latencyP50Ms latencyP95Ms } } } } } }`, {
      id: crlm.id,
    });
    expect(result.errors).toBeUndefined();
    const runs = result.data!.node.runs.nodes as { strategy: string; usage: { promptTokens: number; completionTokens: number; latencyP50Ms: number; latencyP95Ms: number } }[];
    expect(runs).toHaveLength(18);
    for (const r of runs) {
      expect(r.usage.promptTokens).toBeGreaterThan(0);
      expect(r.usage.completionTokens).toBeGreaterThan(0);
      expect(r.usage.latencyP50Ms).toBeGreaterThan(0);
      expect(r.usage.latencyP95Ms).toBeGreaterThanOrEqual(r.usage.latencyP50Ms);
    }
    const mean = (s: string) => {
      const xs = runs.filter((r) => r.strategy === s).map((r) => r.usage.promptTokens);
      return xs.reduce((a, b) => a + b, 0) / xs.length;
    };
    expect(mean('FEW_SHOT')).toBeGreaterThan(mean('ZERO_SHOT'));
  });
});
