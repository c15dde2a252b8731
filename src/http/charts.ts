import { gzip } from 'node:zlib';
import { promisify } from 'node:util';
import type { Express, Request, Response } from 'express';
import type { TopLevelSpec } from 'vega-lite';
import { renderSvg } from '../charts/render';
import { badInput, notFound } from '../domain/errors';
import { decodeId } from '../domain/global-id';
import type { Principal } from '../modules/api-key/principal';
import { MAX_CHART_USE_CASES } from '../modules/chart/chart.service';
import { PromptStrategy } from '../modules/run/run.entity';
import { RankingLevel } from '../modules/scoring/stats.types';
import { enumParameter, queryParameters, requiredParameter, STATS_PARAMETERS, statsOptionsOf } from './query-params';
import { authenticated, type RouteDependencies } from './route-auth';

/** A chart route's file: `<name>.svg` (the rendered chart) or `<name>.json` (its Vega-Lite specification). */
function chartFile(file: string, names: readonly string[]): { name: string; format: 'svg' | 'json' } {
  const match = /^([a-z-]+)\.(svg|json)$/.exec(file);
  if (!match || !names.includes(match[1]!)) throw notFound('Chart');
  return { name: match[1]!, format: match[2] as 'svg' | 'json' };
}

const gzipped = promisify(gzip);

async function sendChart(req: Request, res: Response, spec: TopLevelSpec, format: 'svg' | 'json'): Promise<void> {
  res.setHeader('Cache-Control', 'private, no-store');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  if (format === 'json') {
    res.json(spec);
    return;
  }
  const svg = await renderSvg(spec);
  res.status(200);
  res.setHeader('Content-Type', 'image/svg+xml; charset=utf-8');
  // Opened on its own, the image may run nothing and load nothing.
  res.setHeader('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'");
  res.vary('Accept-Encoding');
  // SVG text shrinks about tenfold; a large heatmap is megabytes uncompressed.
  if (/\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) {
    res.setHeader('Content-Encoding', 'gzip');
    res.end(await gzipped(svg));
  } else {
    res.end(svg);
  }
}

function useCaseIdsOf(params: Map<string, string>): string[] {
  const ids = requiredParameter(params, 'useCaseIds').split(',').filter((id) => id !== '');
  if (ids.length > MAX_CHART_USE_CASES) throw badInput(`useCaseIds takes at most ${MAX_CHART_USE_CASES} use cases`, { field: 'useCaseIds' });
  return ids.map((id, i) => decodeId(id, 'UseCase', `useCaseIds[${i}]`));
}

/**
 * GET /charts/…: the charts of the GraphQL `…Chart` fields, rendered to SVG on the server for an
 * <img> (or, as `.json`, their Vega-Lite specification), with the same keys, roles and
 * statistics options as GraphQL.
 */
/** Chart routes also take a signed URL (Query.chartImageUrl), for an <img> that sends no header. */
const SIGNED = { signedUrls: true };

export function registerChartRoutes(app: Express, deps: RouteDependencies): void {
  const { services } = deps;

  app.get(
    '/charts/use-cases/:useCaseId/:file',
    authenticated(deps, async (req: Request, res: Response, principal: Principal) => {
      const { name, format } = chartFile(String(req.params['file']), ['heatmap', 'leaderboard']);
      const params = queryParameters(req, ['datasetId', ...(name === 'leaderboard' ? ['level'] : []), ...STATS_PARAMETERS, 'token']);
      const useCaseId = decodeId(String(req.params['useCaseId']), 'UseCase', 'useCaseId');
      const datasetId = decodeId(requiredParameter(params, 'datasetId'), 'Dataset', 'datasetId');
      const options = services.scoring.resolveOptions(statsOptionsOf(params));
      const spec =
        name === 'heatmap'
          ? await services.charts.heatmap(principal, useCaseId, datasetId, options)
          : await services.charts.leaderboard(principal, useCaseId, datasetId, enumParameter(params, 'level', Object.values(RankingLevel)) ?? RankingLevel.RUN, options);
      await sendChart(req, res, spec, format);
    }, SIGNED),
  );

  app.get(
    '/charts/projects/:projectId/:file',
    authenticated(deps, async (req: Request, res: Response, principal: Principal) => {
      const { name, format } = chartFile(String(req.params['file']), ['ranking', 'throughput', 'model-size']);
      const params = queryParameters(req, ['useCaseIds', ...(name === 'throughput' ? ['strategy'] : []), ...STATS_PARAMETERS, 'token']);
      const projectId = decodeId(String(req.params['projectId']), 'Project', 'projectId');
      const useCaseIds = useCaseIdsOf(params);
      const options = services.scoring.resolveOptions(statsOptionsOf(params));
      let spec: TopLevelSpec;
      if (name === 'ranking') {
        spec = await services.charts.ranking(principal, projectId, useCaseIds, options);
      } else if (name === 'throughput') {
        const strategy = enumParameter(params, 'strategy', [...Object.values(PromptStrategy), 'ALL'] as const) ?? PromptStrategy.FEW_SHOT;
        spec = await services.charts.throughput(principal, projectId, useCaseIds, strategy === 'ALL' ? null : strategy, options);
      } else {
        spec = await services.charts.modelSize(principal, projectId, useCaseIds, options);
      }
      await sendChart(req, res, spec, format);
    }, SIGNED),
  );
}
