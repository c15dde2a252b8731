import { execute, parse } from 'graphql';
import { buildReportQlSchema } from '../../src/graphql/schema';
import { createContext } from '../../src/graphql/context';
import { ExecutionPacer } from '../../src/graphql/execution-pacer';
import { testLogger } from '../support/test-log';
import { createLoadedDataset, createProject, importPredictions, standardPredictions } from '../support/graphql-fixtures';
import { SERVER_ADMIN, startTestApp, type TestApp } from '../support/test-app';

describe('answers built in slices of the event loop', () => {
  let t: TestApp;
  let useCaseId: string;

  beforeAll(async () => {
    t = await startTestApp();
    const project = await createProject(t, 'Paced');
    const loaded = await createLoadedDataset(t, project.id);
    useCaseId = loaded.useCase.id;
    for (const [model, grades] of [
      ['model-a', ['G2', 'G3', 'G1', 'G1', 'G2']],
      ['model-b', ['G1', 'G3', 'G1', 'Not specified', 'G3']],
      ['model-c', ['G3', 'G3', 'G2', 'G1', 'G1']],
    ] as const) {
      await importPredictions(t, loaded.datasetId, { modelName: model, format: 'JSONL', layout: 'JSON_COLUMN', content: standardPredictions([...grades]) }, project.adminKey);
    }
  });
  afterAll(() => t.close());

  it('a paced answer equals the unpaced one, however many of its objects wait for a later turn', async () => {
    const schema = await buildReportQlSchema();
    const document = parse(`query($u: ID!) { node(id: $u) { ... on UseCase { name variables { key type }
      runs(first: 10) { nodes { name model { servedName endpoint { id } } predictions(first: 50) { totalCount nodes { id status report { externalId } fields { key value } } } } } } } }`);
    const principal = SERVER_ADMIN;
    const run = async (pacer: ExecutionPacer) => {
      const contextValue = { ...createContext(t.dataSource, t.services, testLogger(), principal), pacer };
      let deferred = 0;
      const admit = pacer.admit.bind(pacer);
      pacer.admit = () => {
        const answer = admit();
        if (answer !== true) deferred += 1;
        return answer;
      };
      const result = await execute({ schema, document, variableValues: { u: useCaseId }, contextValue });
      return { result, deferred };
    };
    const unpaced = await run(new ExecutionPacer(60_000));
    const paced = await run(new ExecutionPacer(0));
    expect(unpaced.result.errors).toBeUndefined();
    const runs = (unpaced.result.data as any).node.runs.nodes;
    expect(runs).toHaveLength(3);
    expect(runs[0].predictions.nodes).toHaveLength(5);
    expect(paced.result).toEqual(unpaced.result);
    // With a slice of 0 objects of the answer were completed in later turns of the event loop.
    expect(unpaced.deferred).toBe(0);
    expect(paced.deferred).toBeGreaterThan(0);
  });
});
