/**
 * A typed ReportQL client: every request and answer below has the types generated from the
 * server's schema (npm run generate), so a field that does not exist or a variable of the
 * wrong type fails at `npm run build`, not at run time.
 *
 *   REPORTQL_KEY=rql_… REPORTQL_URL=http://localhost:4000/graphql npm start
 */
import { LeaderboardDocument, ProjectsDocument, type TypedDocumentString } from './generated/graphql.js';

const url = process.env.REPORTQL_URL ?? 'http://localhost:4000/graphql';
const key = process.env.REPORTQL_KEY;

/** A GraphQL error of the API, with its extensions.code (BAD_USER_INPUT, NOT_FOUND, …). */
class ReportQLError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

/** Sends one operation; its result type and variables follow from the document. */
async function request<Result, Variables>(document: TypedDocumentString<Result, Variables>, variables: Variables): Promise<Result> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ query: document.toString(), variables }),
  });
  const body = (await response.json()) as { data?: Result | null; errors?: { message: string; extensions?: { code?: string } }[] };
  if (body.errors?.length) {
    const [first] = body.errors;
    throw new ReportQLError(first!.message, first!.extensions?.code);
  }
  if (!body.data) throw new ReportQLError(`HTTP ${response.status} without data`, undefined);
  return body.data;
}

const percent = (x: number | null | undefined) => (x === null || x === undefined ? '   –' : `${(100 * x).toFixed(1).padStart(5)}`);

async function main(): Promise<void> {
  if (!key) throw new ReportQLError('set REPORTQL_KEY to an API key of the server', undefined);
  const { projects } = await request(ProjectsDocument, {});
  // The first use case with a dataset that has a reference standard.
  const choice = projects.nodes
    .flatMap((project) => project.useCases.nodes)
    .map((useCase) => ({ useCase, dataset: useCase.datasets.nodes.find((d) => d.referenceAnnotator !== null) }))
    .find((c) => c.dataset !== undefined);
  if (!choice?.dataset) {
    console.log(`${projects.nodes.length} project(s), no dataset with a reference standard yet`);
    return;
  }
  const { useCase, dataset } = choice;
  const { node } = await request(LeaderboardDocument, { useCaseId: useCase.id, datasetId: dataset.id, resamples: 200 });
  if (node?.__typename !== 'UseCase') throw new ReportQLError('the use case is gone', 'NOT_FOUND');
  console.log(`${useCase.name}, dataset "${dataset.name}" (${dataset.reportCount} reports, reference ${dataset.referenceAnnotator?.name}):`);
  console.log(`models ranked by Kemeny–Young${node.leaderboard.exact ? ' (exact)' : ''}; macro average with its 95% interval`);
  for (const entry of node.leaderboard.entries) {
    const m = entry.macroAverage;
    console.log(
      `${String(entry.rank).padStart(3)}  [${entry.rankCiLow ?? '?'}–${entry.rankCiHigh ?? '?'}]  ${percent(m?.value)} (${percent(m?.ciLow)} –${percent(m?.ciHigh)})  ${entry.model?.servedName ?? '?'} · ${entry.strategy ?? '?'} · ${entry.model?.sizeClass ?? 'size unknown'}`,
    );
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof ReportQLError ? `ReportQL${error.code ? ` ${error.code}` : ''}: ${error.message}` : error);
  process.exitCode = 1;
});
