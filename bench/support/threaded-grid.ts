/**
 * The bootstrap grid as the server computes it on its statistics engine: the multiplicities drawn
 * by the engine, the runs in slices of `slice`, every slice handed over at once (the engine
 * queues them; the server holds back slices only where the kernels' memory would exceed its
 * limit, which is far above the paper's size), the parts put together. Equal bit for bit to one
 * bootstrapGrid call on the same runs and seed (grid-bench.ts checks it).
 */
import type { BootstrapGridResult, GridRun, GridVariable } from '../../src/analytics/bootstrap';
import { concatGrids } from '../../src/modules/scoring/chunked';
import { runsPerSliceOf, type StatisticsEngine } from '../../src/modules/scoring/statistics-engine';

export async function threadedGrid(
  engine: StatisticsEngine,
  variables: GridVariable[],
  runs: GridRun[],
  options: { reports: number; resamples: number; seed: number; slice: number; confidence?: number },
): Promise<BootstrapGridResult> {
  const { reports, resamples, seed, slice } = options;
  const multiplicities = await engine.multiplicities(reports, resamples, seed);
  const slices = Array.from({ length: Math.ceil(runs.length / slice) }, (_, i) => runs.slice(i * slice, (i + 1) * slice));
  const parts = await Promise.all(slices.map((part) => engine.grid(variables, part, multiplicities, options.confidence ?? 0.95)));
  return concatGrids(parts, (length) => engine.float64(length));
}

/** Runs per grid slice as the server takes them for `runs` runs of `reports` reports and `resamples` resamples. */
export function serverGridSlice(engine: StatisticsEngine, reports: number, runs: number, resamples: number): number {
  return engine.gridSliceRuns(runsPerSliceOf(reports), runs, reports * resamples);
}
