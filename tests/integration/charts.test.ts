import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createLogger } from '../../src/logger';
import { demoSeedDir, seedDemo } from '../../src/seeds/demo-seed';
import { createApiKey, createProjectWithKeys, ok, unknownId } from '../support/graphql-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

const FOLDERS = ['paper-melanoma-nl', 'paper-stt-en'];
const HOSTILE_NAME = '<script>alert("x")</script> & "run"';

/** Text content of an SVG as Python's XML parser reads it (it fails on anything that is not well-formed XML). */
function svgText(svg: string): { root: string; text: string[]; hrefs: string[] } {
  const script =
    'import json,sys,xml.etree.ElementTree as ET; root=ET.fromstring(sys.stdin.buffer.read()); ' +
    'json.dump({"root": root.tag, "text": [t for e in root.iter() for t in [e.text] if t], ' +
    '"hrefs": [v for e in root.iter() for k, v in e.attrib.items() if k.endswith("href") or k == "src"]}, sys.stdout)';
  return JSON.parse(execFileSync('python3', ['-c', script], { input: svg }).toString('utf8'));
}

/** Every string in a JSON value that looks like a URL, and every `url` key. */
function urlsIn(value: unknown, found: string[] = []): string[] {
  if (typeof value === 'string') {
    if (/\b(https?|ftp|file|data):/i.test(value)) found.push(value);
  } else if (Array.isArray(value)) {
    value.forEach((v) => urlsIn(v, found));
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === 'url') found.push(`url: ${JSON.stringify(v)}`);
      if (k !== '$schema') urlsIn(v, found);
    }
  }
  return found;
}

describe('charts: Vega-Lite specifications from GraphQL and SVG rendered on the server', () => {
  let t: TestApp;
  let projectId: string;
  let viewer: string;
  let useCases: { id: string; name: string; datasetId: string }[];
  let seedDir: string;

  const get = (p: string, key: string | null = viewer) => fetch(`http://127.0.0.1:${t.port}${p}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });

  beforeAll(async () => {
    t = await startTestApp();
    seedDir = mkdtempSync(path.join(tmpdir(), 'reportql-charts-'));
    for (const folder of FOLDERS) symlinkSync(path.join(demoSeedDir(), folder), path.join(seedDir, folder));
    symlinkSync(path.join(demoSeedDir(), 'models.json'), path.join(seedDir, 'models.json'));
    writeFileSync(path.join(seedDir, 'index.json'), JSON.stringify(FOLDERS));
    await seedDemo(t.dataSource, t.services, createLogger('silent'), seedDir);
    const data = ok(await t.gql(`{ projects { nodes { id useCases(first: 10) { nodes { id name datasets { nodes { id } } } } } } }`));
    const project = data.projects.nodes[0];
    projectId = project.id;
    useCases = project.useCases.nodes.map((u: any) => ({ id: u.id, name: u.name, datasetId: u.datasets.nodes[0].id }));
    viewer = (await createApiKey(t, projectId, 'VIEWER')).secret;
    // A run name is text from outside: it must come out of the SVG as text, escaped.
    await t.dataSource.query(`UPDATE runs SET name = $1 WHERE id = (SELECT id FROM runs WHERE use_case_id = (SELECT use_case_id FROM datasets WHERE id = $2) ORDER BY created_at LIMIT 1)`, [
      HOSTILE_NAME,
      Buffer.from(useCases[0]!.datasetId, 'base64url').toString('utf8').split(':')[1],
    ]);
  });
  afterAll(async () => {
    await t.close();
    rmSync(seedDir, { recursive: true, force: true });
  });

  it('the heatmap holds what the leaderboard, Run.scores and the inter-rater agreement give, and renders to SVG with every run name', async () => {
    const { id, datasetId } = useCases[0]!;
    const data = ok(
      await t.gql(
        `query ($u: ID!, $d: ID!) {
          node(id: $u) { ... on UseCase {
            heatmapChart(datasetId: $d, options: { resamples: 200, seed: 5 })
            leaderboard(datasetId: $d, options: { resamples: 200, seed: 5 }) { entries { rank rankCiLow rankCiHigh run { id name } macroAverage { value ciLow ciHigh } } }
          } }
          dataset: node(id: $d) { ... on Dataset { interRaterAgreement(options: { resamples: 200, seed: 5 }) { macroAverage { value ciLow ciHigh } } } }
        }`,
        { u: id, d: datasetId },
        viewer,
      ),
    );
    const spec = data.node.heatmapChart;
    const entries = data.node.leaderboard.entries as any[];
    for (const e of entries) {
      const scores = ok(
        await t.gql(
          `query ($r: ID!) { node(id: $r) { ... on Run { scores(options: { resamples: 200, seed: 5 }) { variables { variable { key } estimate { value ciLow ciHigh } interRaterAgreement { value } } } } } }`,
          { r: e.run.id },
          viewer,
        ),
      );
      e.run.scores = scores.node.scores;
    }
    expect(entries.length).toBeGreaterThan(5);
    expect(spec.$schema).toMatch(/vega-lite\/v5\.json$/);
    const cells = spec.data.values as any[];
    const at = (row: string, column: string) => cells.find((c) => c.row === row && c.column === column);
    // Rows in leaderboard order, after the agreement row.
    expect(spec.encoding.y.sort).toEqual(['Inter-rater agreement', ...entries.map((e) => e.run.name)]);
    const variables = entries[0].run.scores.variables.map((v: any) => v.variable.key);
    expect(spec.encoding.x.sort).toEqual(['Macro average', ...variables, 'Rank']);
    for (const e of entries) {
      expect(at(e.run.name, 'Macro average')).toEqual(expect.objectContaining({ value: e.macroAverage.value, ciLow: e.macroAverage.ciLow, ciHigh: e.macroAverage.ciHigh }));
      expect(at(e.run.name, 'Rank')).toEqual(expect.objectContaining({ rank: e.rank, rankCiLow: e.rankCiLow, rankCiHigh: e.rankCiHigh, label: `${e.rank} [${e.rankCiLow}–${e.rankCiHigh}]` }));
      for (const v of e.run.scores.variables) expect(at(e.run.name, v.variable.key)).toEqual(expect.objectContaining({ value: v.estimate.value, ciLow: v.estimate.ciLow, ciHigh: v.estimate.ciHigh }));
    }
    const agreement = data.dataset.interRaterAgreement.macroAverage;
    expect(agreement).not.toBeNull();
    expect(at('Inter-rater agreement', 'Macro average')).toEqual(expect.objectContaining({ value: agreement.value, ciLow: agreement.ciLow, ciHigh: agreement.ciHigh }));
    for (const v of entries[0].run.scores.variables) expect(at('Inter-rater agreement', v.variable.key).value).toBe(v.interRaterAgreement?.value ?? null);
    expect(urlsIn(spec)).toEqual([]);

    const response = await get(`/charts/use-cases/${id}/heatmap.svg?datasetId=${datasetId}&resamples=200&seed=5`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/svg+xml; charset=utf-8');
    // fetch asks for gzip and unpacks it.
    expect(response.headers.get('content-encoding')).toBe('gzip');
    const svg = await response.text();
    const parsed = svgText(svg);
    expect(parsed.root).toBe('{http://www.w3.org/2000/svg}svg');
    for (const e of entries) expect(parsed.text).toContain(e.run.name);
    expect(parsed.text).toContain(HOSTILE_NAME);
    expect(svg).not.toContain('<script>');
    // Nothing to fetch: no link, no image, no URL but the XML namespaces; url() only names a gradient inside the document.
    expect(parsed.hrefs).toEqual([]);
    expect(svg.replace(/xmlns(:xlink)?="http:\/\/www\.w3\.org\/[^"]*"/g, '')).not.toMatch(/(https?|ftp|file|data):|url\((?!#)|@import/i);
    // The specification route gives what GraphQL gives.
    expect(await (await get(`/charts/use-cases/${id}/heatmap.json?datasetId=${datasetId}&resamples=200&seed=5`)).json()).toEqual(spec);
  });

  it('bars with intervals and the agreement ceiling hold the leaderboard at both levels', async () => {
    const { id, datasetId } = useCases[1]!;
    for (const level of ['RUN', 'MODEL']) {
      const data = ok(
        await t.gql(
          `query ($u: ID!, $d: ID!, $level: RankingLevel!) { node(id: $u) { ... on UseCase {
            leaderboardChart(datasetId: $d, level: $level, options: { resamples: 100 })
            leaderboard(datasetId: $d, level: $level, options: { resamples: 100 }) { entries { rank strategy model { servedName } run { name } macroAverage { value ciLow ciHigh } } } } }
            dataset: node(id: $d) { ... on Dataset { interRaterAgreement(options: { resamples: 100 }) { macroAverage { value } } } } }`,
          { u: id, d: datasetId, level },
          viewer,
        ),
      );
      const spec = data.node.leaderboardChart;
      const entries = data.node.leaderboard.entries as any[];
      expect(spec.data.values.map((b: any) => ({ value: b.value, ciLow: b.ciLow, ciHigh: b.ciHigh, rank: b.rank }))).toEqual(
        entries.map((e) => ({ value: e.macroAverage.value, ciLow: e.macroAverage.ciLow, ciHigh: e.macroAverage.ciHigh, rank: e.rank })),
      );
      if (level === 'MODEL') expect(spec.data.values.map((b: any) => b.label)).toEqual(entries.map((e) => `${e.model.servedName} · ${e.strategy}`));
      const ceiling = spec.layer.find((l: any) => l.mark.type === 'rule' && l.mark.strokeDash);
      expect(ceiling.data.values[0].value).toBe(data.dataset.interRaterAgreement.macroAverage.value);
      expect(urlsIn(spec)).toEqual([]);
      const svg = await (await get(`/charts/use-cases/${id}/leaderboard.svg?datasetId=${datasetId}&level=${level}&resamples=100`)).text();
      const parsed = svgText(svg);
      for (const b of spec.data.values) expect(parsed.text).toContain(b.label);
    }
  });

  it('the ranking across use cases holds each use case’s ranks and the consensus; throughput and model size hold the model metadata', async () => {
    const ids = useCases.map((u) => u.id);
    const data = ok(
      await t.gql(
        `query ($p: ID!, $ids: [ID!]!) { project(id: $p) {
          rankingChart(useCaseIds: $ids, options: { resamples: 100 })
          throughputChart(useCaseIds: $ids)
          modelSizeChart(useCaseIds: $ids)
          consensusRanking(useCaseIds: $ids, options: { resamples: 100 }) { entries { rank rankCiLow rankCiHigh model { servedName parameterCountB } } }
          first: consensusRanking(useCaseIds: [$ids[0]], voters: VARIABLES, options: { resamples: 0 }) { entries { rank model { servedName } } } } }`.replace('[$ids[0]]', `["${ids[0]}"]`),
        { p: projectId, ids },
        viewer,
      ),
    ).project;
    const ranking = data.rankingChart;
    const consensus = ranking.data.values.filter((c: any) => c.column === 'Consensus');
    expect(consensus.map((c: any) => ({ model: c.model, rank: c.rank }))).toEqual(data.consensusRanking.entries.map((e: any) => ({ model: e.model.servedName, rank: e.rank })));
    const firstColumn = ranking.data.values.filter((c: any) => c.column === useCases[0]!.name);
    for (const e of data.first.entries) expect(firstColumn.find((c: any) => c.model === e.model.servedName).rank).toBe(e.rank);

    const throughput = data.throughputChart.data.values as any[];
    expect(throughput.length).toBeGreaterThan(3);
    for (const point of throughput) {
      expect(point.tokensPerSecondPerGpu).toBeGreaterThan(0);
      expect(point.meanMacroAverage).toBeGreaterThan(0);
      expect(point.useCases).toBe(2);
    }
    const large = data.consensusRanking.entries.find((e: any) => e.model.parameterCountB > 300);
    expect(throughput.find((p) => p.model === large.model.servedName).parameterCountB).toBe(large.model.parameterCountB);
    const sizes = data.modelSizeChart.data.values as any[];
    expect(new Set(sizes.map((v) => v.measure))).toEqual(new Set(['Accuracy', 'Validity']));
    for (const v of sizes) expect(v.value).toBeGreaterThanOrEqual(0);

    // A reference annotator named in the options must exist in these use cases; one of a single
    // use case stands in there, and the others use their own reference.
    const unknown = await t.gql(`query ($p: ID!, $ids: [ID!]!, $a: ID!) { project(id: $p) { groupSummary(useCaseIds: $ids, groupBy: SIZE_CLASS, options: { referenceAnnotatorId: $a }) { group } } }`, {
      p: projectId,
      ids,
      a: unknownId('Annotator'),
    });
    expect(unknown.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const annotator = ok(await t.gql(`query ($d: ID!) { node(id: $d) { ... on Dataset { annotators { id isReference } } } }`, { d: useCases[0]!.datasetId })).node.annotators.find((a: any) => !a.isReference).id;
    const withReference = ok(
      await t.gql(`query ($p: ID!, $ids: [ID!]!, $a: ID!) { project(id: $p) { rankingChart(useCaseIds: $ids, options: { resamples: 0, referenceAnnotatorId: $a }) } }`, { p: projectId, ids, a: annotator }, viewer),
    ).project.rankingChart;
    expect(withReference.data.values.filter((c: any) => c.column === useCases[1]!.name).every((c: any) => typeof c.rank === 'number')).toBe(true);

    const query = `useCaseIds=${ids.join(',')}&resamples=100`;
    for (const [name, spec] of [['ranking', ranking], ['throughput', data.throughputChart], ['model-size', data.modelSizeChart]] as const) {
      expect(urlsIn(spec)).toEqual([]);
      const response = await get(`/charts/projects/${projectId}/${name}.svg?${query}`);
      expect(response.status).toBe(200);
      const parsed = svgText(await response.text());
      expect(parsed.hrefs).toEqual([]);
      if (name !== 'model-size') for (const e of data.consensusRanking.entries) expect(parsed.text.join('\n')).toContain(e.model.servedName);
    }
  });

  it('chart routes take the keys and roles of GraphQL and answer errors as JSON with a code', async () => {
    const { id, datasetId } = useCases[0]!;
    const route = `/charts/use-cases/${id}/heatmap.svg?datasetId=${datasetId}&resamples=0`;
    const code = async (response: Response) => ({ status: response.status, code: ((await response.json()) as any).errors[0].extensions.code });
    expect(await code(await get(route, null))).toEqual({ status: 401, code: 'UNAUTHENTICATED' });
    const other = await createProjectWithKeys(t, 'Elsewhere');
    expect(await code(await get(route, other.admin))).toEqual({ status: 404, code: 'NOT_FOUND' });
    expect(await code(await get(`/charts/use-cases/${id}/pie.svg?datasetId=${datasetId}`))).toEqual({ status: 404, code: 'NOT_FOUND' });
    expect(await code(await get(`/charts/use-cases/${id}/heatmap.svg`))).toEqual({ status: 400, code: 'BAD_USER_INPUT' });
    expect(await code(await get(`/charts/projects/${projectId}/ranking.svg?useCaseIds=<svg>`))).toEqual({ status: 400, code: 'BAD_USER_INPUT' });
    expect(await code(await get(`/charts/projects/${projectId}/throughput.svg?useCaseIds=${useCases[0]!.id}&strategy=EVIL`))).toEqual({ status: 400, code: 'BAD_USER_INPUT' });
    expect((await get(route)).status).toBe(200);
  });

  it('a signed URL lets an <img> load a chart without a header, for that URL, while the key lives', async () => {
    const { id, datasetId } = useCases[0]!;
    const key = await createApiKey(t, projectId, 'VIEWER');
    const path = `/charts/use-cases/${id}/heatmap.svg?datasetId=${datasetId}&resamples=0`;
    const signed = ok(await t.gql(`query ($p: String!) { chartImageUrl(path: $p) { url expiresAt } }`, { p: path }, key.secret)).chartImageUrl;
    expect(signed.url.startsWith(`${path}&token=`)).toBe(true);
    expect(new Date(signed.expiresAt).getTime()).toBeGreaterThan(Date.now());
    const image = await get(signed.url, null);
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/svg+xml; charset=utf-8');
    expect(svgText(await image.text()).root).toBe('{http://www.w3.org/2000/svg}svg');
    // The signature covers the path and the query: another chart or other options are refused.
    const token = signed.url.slice(signed.url.indexOf('token='));
    expect((await get(signed.url.replace('resamples=0', 'resamples=1'), null)).status).toBe(401);
    expect((await get(`/charts/use-cases/${id}/leaderboard.svg?datasetId=${datasetId}&resamples=0&${token}`, null)).status).toBe(401);
    expect((await get(`${signed.url.slice(0, -3)}abc`, null)).status).toBe(401);
    // Only chart images can be signed, and a key of another project signs nothing it can then see.
    const refused = await t.gql(`query ($p: String!) { chartImageUrl(path: $p) { url } }`, { p: `/exports/runs/x/predictions.csv` }, key.secret);
    expect(refused.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const other = await createProjectWithKeys(t, 'Signed elsewhere');
    const foreign = ok(await t.gql(`query ($p: String!) { chartImageUrl(path: $p) { url } }`, { p: path }, other.viewer)).chartImageUrl;
    expect((await get(foreign.url, null)).status).toBe(404);
    // A revoked key's URLs stop working.
    ok(await t.gql(`mutation ($i: RevokeApiKeyInput!) { revokeApiKey(input: $i) { apiKey { id } } }`, { i: { id: key.id } }));
    const revoked = await get(signed.url, null);
    expect(revoked.status).toBe(401);
    expect(((await revoked.json()) as any).errors[0].extensions.code).toBe('UNAUTHENTICATED');
  });
});
