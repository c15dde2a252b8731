import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { bootstrapGrid, bootstrapMultiplicities } from '../../src/analytics/bootstrap';
import { lexicalSimilarity } from '../../src/analytics/embedding/lexical';
import { buildGridInput } from '../../src/analytics/grid-input';
import { kemeny } from '../../src/analytics/kemeny';
import { normaliseRecord, type RecordCell } from '../../src/analytics/normalise';
import type { VariableSpec } from '../../src/analytics/types';
import { parseOutput } from '../../src/extraction/output-parser';
import { createLogger } from '../../src/logger';
import { demoSeedDir, seedDemo } from '../../src/seeds/demo-seed';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * The GraphQL statistics must equal the analytics layer fed straight from the seed files
 * (no database): a check of loading, ordering, normalisation round trips and wiring.
 */
describe('scores through GraphQL equal the analytics layer', () => {
  let t: TestApp;
  const folder = path.join(demoSeedDir(), 'melanoma-nl');
  let useCaseId: string;
  let datasetId: string;
  let runs: { id: string; name: string }[];

  beforeAll(async () => {
    t = await startTestApp();
    await seedDemo(t.dataSource, t.services, createLogger('silent'));
    const result = await t.gql(`{ projects { nodes { useCases(first: 50) { nodes { id name datasets { nodes { id } }
      runs { nodes { id name } } } } } } }`);
    const useCase = result.data!.projects.nodes[0].useCases.nodes.find((u: { name: string }) => u.name === 'Melanoma pathology (Dutch)');
    useCaseId = useCase.id;
    datasetId = useCase.datasets.nodes[0].id;
    runs = useCase.runs.nodes;
  });
  afterAll(() => t.close());

  function independentGrid(resamples: number, seed: number) {
    const spec = JSON.parse(readFileSync(path.join(folder, 'use-case.json'), 'utf8')) as { variables: VariableSpec[] };
    const specs = spec.variables;
    const reports = readFileSync(path.join(folder, 'reports.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as { report_id: string }).report_id);
    const consensus = parseCsv(readFileSync(path.join(folder, 'annotations-consensus.csv'), 'utf8'), { columns: true }) as Record<string, string>[];
    const byId = new Map(consensus.map((row) => [row.report_id, row]));
    const references = reports.map((id) => {
      const row = { ...byId.get(id)! } as Record<string, unknown>;
      delete row.report_id;
      return normaliseRecord(specs, row, 'reference') as Record<string, RecordCell>;
    });
    const runFiles = JSON.parse(readFileSync(path.join(folder, 'runs', 'runs.json'), 'utf8')) as { file: string; modelName: string }[];
    const gridRuns = runFiles.map((file) => {
      const lines = readFileSync(path.join(folder, 'runs', file.file), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { report_id: string; raw_output: string; finish_reason?: string });
      const byReport = new Map(lines.map((l) => [l.report_id, l]));
      return {
        id: file.modelName,
        records: reports.map((id) => {
          const line = byReport.get(id);
          return line ? parseOutput({ content: line.raw_output, finishReason: line.finish_reason ?? null }, specs).cells : undefined;
        }),
      };
    });
    const input = buildGridInput(specs, references, gridRuns, { similarity: lexicalSimilarity() });
    const grid = bootstrapGrid({ ...input, multiplicities: bootstrapMultiplicities(reports.length, resamples, seed) });
    return { grid, runNames: runFiles.map((f) => f.modelName), specs };
  }

  it('run scores: every per-variable estimate, interval and the macro average', async () => {
    const { grid, runNames, specs } = independentGrid(300, 7);
    for (const run of runs) {
      const result = await t.gql(
        `query($id: ID!) { node(id: $id) { ... on Run { scores(options: { resamples: 300, seed: 7 }) {
          macroAverage { value ciLow ciHigh resamples } variables { variable { key } n estimate { value ciLow ciHigh } } } } } }`,
        { id: run.id },
      );
      expect(result.errors).toBeUndefined();
      const scores = result.data!.node.scores;
      const r = runNames.findIndex((name) => run.name.startsWith(name));
      expect(r).toBeGreaterThanOrEqual(0);
      expect(scores.macroAverage.value).toBeCloseTo(grid.macro[r]!.value, 9);
      expect(scores.macroAverage.ciLow).toBeCloseTo(grid.macro[r]!.ciLow, 9);
      expect(scores.macroAverage.ciHigh).toBeCloseTo(grid.macro[r]!.ciHigh, 9);
      expect(scores.variables.map((v: { variable: { key: string } }) => v.variable.key)).toEqual(specs.map((s) => s.key));
      scores.variables.forEach((v: { estimate: { value: number; ciLow: number; ciHigh: number } }, i: number) => {
        expect(Math.abs(v.estimate.value - grid.perVariable[r]![i]!.value)).toBeLessThan(1e-9);
        expect(Math.abs(v.estimate.ciLow - grid.perVariable[r]![i]!.ciLow)).toBeLessThan(1e-9);
        expect(Math.abs(v.estimate.ciHigh - grid.perVariable[r]![i]!.ciHigh)).toBeLessThan(1e-9);
      });
    }
  });

  it('leaderboard: the Kemeny order of the runs by per-variable scores, macro averages with intervals', async () => {
    const { grid, runNames, specs } = independentGrid(200, 42);
    const V = specs.length;
    const voters = specs.map((_, v) => Float64Array.from(runNames, (_, r) => grid.points[r * V + v]!));
    const expected = kemeny(voters, { macro: grid.macroPoints });
    const result = await t.gql(
      `query($id: ID!, $ds: ID!) { node(id: $id) { ... on UseCase { leaderboard(datasetId: $ds, options: { resamples: 200 }) {
        exact score lowerBound voterCount entries { rank rankCiLow rankCiHigh run { name } macroAverage { value ciLow ciHigh } } } } } }`,
      { id: useCaseId, ds: datasetId },
    );
    expect(result.errors).toBeUndefined();
    const board = result.data!.node.leaderboard;
    expect(board.exact).toBe(true);
    expect(board.score).toBe(expected.score);
    expect(board.voterCount).toBe(expected.voterCount);
    board.entries.forEach((entry: { rank: number; run: { name: string }; macroAverage: { value: number; ciLow: number } }, position: number) => {
      const r = expected.order[position]!;
      expect(entry.rank).toBe(position + 1);
      expect(entry.run.name.startsWith(runNames[r]!)).toBe(true);
      expect(Math.abs(entry.macroAverage.value - grid.macro[r]!.value)).toBeLessThan(1e-9);
      expect(Math.abs(entry.macroAverage.ciLow - grid.macro[r]!.ciLow)).toBeLessThan(1e-9);
    });
  });

  it('the same seed gives the same intervals; another seed other intervals', async () => {
    const query = `query($id: ID!, $seed: Int!) { node(id: $id) { ... on Run { scores(options: { resamples: 100, seed: $seed }) { macroAverage { ciLow ciHigh } } } } }`;
    const a = await t.gql(query, { id: runs[0]!.id, seed: 1 });
    const b = await t.gql(query, { id: runs[0]!.id, seed: 1 });
    const c = await t.gql(query, { id: runs[0]!.id, seed: 2 });
    expect(a.data).toEqual(b.data);
    expect(a.data).not.toEqual(c.data);
  });

  it('rejects options outside their domain with BAD_USER_INPUT', async () => {
    const result = await t.gql(`query($id: ID!) { node(id: $id) { ... on Run { scores(options: { confidence: 1.5 }) { validity } } } }`, { id: runs[0]!.id });
    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('cached results are invalidated when annotations change', async () => {
    const query = `query($id: ID!) { node(id: $id) { ... on Run { scores(options: { resamples: 0 }) { variables { variable { key } estimate { value } } } } } }`;
    const before = await t.gql(query, { id: runs[0]!.id });
    const first = readFileSync(path.join(folder, 'reports.jsonl'), 'utf8').split('\n')[0]!;
    const reportId = (JSON.parse(first) as { report_id: string }).report_id;
    const changed = await t.gql(
      `mutation($ds: ID!, $content: String!) { importAnnotations(input: { datasetId: $ds, annotatorName: "Consensus", kind: CONSENSUS, isReference: true,
        format: CSV, idField: "report_id", content: $content }) { values } }`,
      { ds: datasetId, content: `report_id,breslow_thickness_mm\n${reportId},99\n` },
    );
    expect(changed.errors).toBeUndefined();
    const after = await t.gql(query, { id: runs[0]!.id });
    const breslow = (data: any) => data.node.scores.variables.find((v: { variable: { key: string } }) => v.variable.key === 'breslow_thickness_mm').estimate.value;
    expect(breslow(after.data)).toBeLessThan(breslow(before.data));
  });

  it('variance decomposition warns when model and strategy are not crossed', async () => {
    // the demo runs: one model per strategy
    const result = await t.gql(`query($id: ID!, $ds: ID!) { node(id: $id) { ... on UseCase { varianceDecomposition(datasetId: $ds) {
      observations components { name share } residualShare warnings } } } }`, { id: useCaseId, ds: datasetId });
    expect(result.errors).toBeUndefined();
    const decomposition = result.data!.node.varianceDecomposition;
    expect(decomposition.warnings).toHaveLength(1);
    const total = decomposition.components.reduce((sum: number, c: { share: number }) => sum + c.share, decomposition.residualShare);
    expect(total).toBeCloseTo(1, 9);
  });
});
