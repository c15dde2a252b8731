/**
 * What one request can make the server do: hostile documents (fragments that double, aliases,
 * tokens, lists that point at each other, nested introspection) and the largest legitimate
 * answers, each sent alone to a real server over HTTP on a fresh embedded PostgreSQL. For each
 * request: how it was answered, its wall time, and the longest the event loop stayed blocked
 * meanwhile (perf_hooks.monitorEventLoopDelay, 10 ms resolution), i.e. how long every other
 * request (/healthz included) would have waited.
 *
 *   npm run bench:request-cost [-- --runs 50 --reports 200 --repeats 1 --only <part of a name> --verbose]
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { argument, startBenchServer } from '../support/bench-server';

function doubling(n: number, deep: boolean): string {
  const fragments = ['fragment F0 on UseCase { id name }'];
  for (let k = 1; k <= n; k += 1) {
    fragments.push(
      deep
        ? `fragment F${k} on UseCase { ...F${k - 1} a${k}: runs(first: 1) { nodes { useCase { ...F${k - 1} } } } }`
        : `fragment F${k} on UseCase { ...F${k - 1} ... on UseCase { ...F${k - 1} } }`,
    );
  }
  return `query($u: ID!) { node(id: $u) { ...F${n} } } ${fragments.join(' ')}`;
}

async function main(): Promise<void> {
  const runs = argument('runs', 50);
  const reports = argument('reports', 200);
  const variables = Array.from({ length: 16 }, (_, v) => ({ key: `v${v}`, type: 'CATEGORICAL', options: ['a', 'b', 'c'] }));
  const server = await startBenchServer();
  const { gql, port } = server;
  try {
    const project = (await gql('mutation { createProject(input: { name: "bench" }) { project { id } } }')).createProject.project.id;
    const useCase = (await gql('mutation($i: CreateUseCaseInput!) { createUseCase(input: $i) { useCase { id } } }', { i: { projectId: project, name: 'cost', variables } }))
      .createUseCase.useCase.id;
    const dataset = (await gql('mutation($u: ID!) { createDataset(input: { useCaseId: $u, name: "d" }) { dataset { id } } }', { u: useCase })).createDataset.dataset.id;
    const ids = Array.from({ length: reports }, (_, i) => `R${i}`);
    await gql('mutation($i: ImportReportsInput!) { importReports(input: $i) { inserted } }', {
      i: { datasetId: dataset, format: 'JSONL', content: ids.map((id) => JSON.stringify({ id, text: `report ${id}` })).join('\n') },
    });
    const row = (i: number, shift: number) => Object.fromEntries(variables.map((v, k) => [v.key, v.options[(i + k + shift) % 3]]));
    await gql('mutation($i: ImportAnnotationsInput!) { importAnnotations(input: $i) { values } }', {
      i: { datasetId: dataset, annotatorName: 'reference', isReference: true, format: 'JSONL', content: ids.map((id, i) => JSON.stringify({ id, ...row(i, 0) })).join('\n') },
    });
    for (let r = 0; r < runs; r += 1) {
      await gql('mutation($i: ImportPredictionsInput!) { importPredictions(input: $i) { imported } }', {
        i: {
          datasetId: dataset,
          modelName: `m${r}`,
          format: 'JSONL',
          layout: 'JSON_COLUMN',
          content: ids.map((id, i) => JSON.stringify({ id, extracted_data: row(i, i % (r + 2) === 0 ? 1 : 0) })).join('\n'),
        },
      });
    }
    const endpoint = (
      await gql('mutation($i: RegisterEndpointInput!) { registerEndpoint(input: $i) { endpoint { id } } }', {
        i: { projectId: project, name: 'thousand models', baseUrl: 'http://127.0.0.1:9/v1', timeoutMs: 1000 },
      })
    ).registerEndpoint.endpoint.id as string;
    await server.dataSource.query(
      `INSERT INTO models (project_id, endpoint_id, served_name) SELECT e.project_id, e.id, 'model-' || k FROM endpoints e, generate_series(1, 1000) k WHERE e.name = 'thousand models'`,
    );

    const cases: { name: string; query: string; variables?: Record<string, unknown> }[] = [
      { name: '40 fragments doubling at one level (2^40 paths)', query: doubling(40, false), variables: { u: useCase } },
      { name: '23 fragments doubling one level deeper each', query: doubling(23, true), variables: { u: useCase } },
      { name: '1,001 aliases of __typename', query: `{ ${Array.from({ length: 1001 }, (_, k) => `a${k}: __typename`).join(' ')} }` },
      { name: '200,000 aliases of __typename (2.6 MB)', query: `{ ${Array.from({ length: 200_000 }, (_, k) => `a${k}: __typename`).join(' ')} }` },
      {
        name: 'Endpoint.models ↔ Model.endpoint, 3 levels, 1,000 models',
        query: `query($e: ID!) { node(id: $e) { ... on Endpoint { models { endpoint { models { endpoint { models { id } } } } } } } }`,
        variables: { e: endpoint },
      },
      { name: 'Endpoint.models ↔ Model.endpoint, 1 level, 1,000 models', query: `query($e: ID!) { node(id: $e) { ... on Endpoint { models { id servedName endpoint { id } } } } }`, variables: { e: endpoint } },
      { name: 'introspection nested 7 levels', query: `{ __schema { types { fields { type { fields { type { fields { type { fields { type { fields { type { fields { name } } } } } } } } } } } } } }` },
      { name: 'standard introspection query', query: (await import('graphql')).getIntrospectionQuery() },
      {
        name: `runs(first: 200) { scores } over ${runs} runs (6 runs' worth of statistics at most cached)`,
        query: `query($u: ID!) { node(id: $u) { ... on UseCase { runs(first: 200) { nodes { name scores(options: { resamples: 0 }) { validity } } } } } }`,
        variables: { u: useCase },
      },
      {
        name: `largest prediction pages: ${Math.min(runs, 30)} runs × 200 predictions × 16 fields`,
        query: `query($u: ID!, $n: Int!) { node(id: $u) { ... on UseCase { runs(first: $n) { nodes { predictions(first: 200) { nodes { id status fields { key value } } } } } } } }`,
        variables: { u: useCase, n: Math.min(runs, 30) },
      },
    ];

    const histogram = monitorEventLoopDelay({ resolution: 10 });
    histogram.enable();
    process.stdout.write('| request | answer | wall ms | longest event-loop block ms |\n|---|---|---:|---:|\n');
    const repeats = argument('repeats', 1);
    const only = process.argv.indexOf('--only') > 0 ? process.argv[process.argv.indexOf('--only') + 1]! : '';
    for (const c of cases.filter((c) => c.name.includes(only)).flatMap((c) => Array.from({ length: repeats }, () => c))) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      histogram.reset();
      const started = process.hrtime.bigint();
      const response = await fetch(`http://127.0.0.1:${port}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${server.key}` },
        body: JSON.stringify({ query: c.query, variables: c.variables ?? {} }),
      });
      const text = await response.text();
      const wall = Number(process.hrtime.bigint() - started) / 1e6;
      // A large answer is not parsed here: this process's event loop is the server's, and parsing
      // 3 MB would count as the server's block. An answer with errors starts with them.
      const body = (text.startsWith('{"errors"') ? JSON.parse(text) : {}) as { errors?: { message?: string; extensions?: { code?: string; reason?: string } }[] };
      if (process.argv.includes('--verbose') && body.errors) process.stdout.write(`${body.errors[0]?.message}\n`);
      const answer = body.errors ? `${response.status} ${body.errors[0]?.extensions?.code}${body.errors[0]?.extensions?.reason ? ` (${body.errors[0].extensions.reason})` : ''}` : `${response.status} data, ${(text.length / 1e6).toFixed(2)} MB`;
      process.stdout.write(`| ${c.name} | ${answer} | ${wall.toFixed(0)} | ${(histogram.max / 1e6).toFixed(0)} |\n`);
    }
    histogram.disable();
  } finally {
    await server.close();
  }
}

void main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
