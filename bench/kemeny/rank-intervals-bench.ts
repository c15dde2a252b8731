/**
 * CPU time of kemenyRankIntervals alone on the cold-leaderboard data of kemeny-bench.ts section 5
 * (1,252 reports, 12 categorical + 4 numeric variables, B = 1000), at 90 and 270 runs. The
 * bootstrap grid and the point consensus are built once per (runs, seed) and not timed.
 *
 *   node -r ./bench/kemeny/swc-register.js bench/kemeny/rank-intervals-bench.ts \
 *     [--repeats 7] [--runs 90,270] [--seeds 100] [--impl path/to/rank-intervals.ts] [--ranks-out dir]
 *
 * --impl times another copy of the module (e.g. the previous version, for a before/after in one
 * session); --ranks-out writes each (runs, seed)'s ranks and exactReplicates for comparison.
 */
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { bootstrapGrid } from '../../src/analytics/bootstrap';
import { kemeny } from '../../src/analytics/kemeny';
import * as current from '../../src/analytics/rank-intervals';
import { LEADERBOARD_VARIABLES, leaderboardGridInput } from './leaderboard-data';

const arg = (name: string): string | null => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1]! : null;
};
const repeats = Number(arg('--repeats') ?? 7);
const runCounts = (arg('--runs') ?? '90,270').split(',').map(Number);
const seeds = (arg('--seeds') ?? '100').split(',').map(Number);
const implPath = arg('--impl');
const ranksOut = arg('--ranks-out');
const impl = (implPath === null ? current : require(resolve(implPath))) as typeof current;

const cpu = <T>(f: () => T): { ms: number; value: T } => {
  const c0 = process.cpuUsage();
  const value = f();
  const c = process.cpuUsage(c0);
  return { ms: (c.user + c.system) / 1000, value };
};
const median = (xs: number[]): number => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const V = LEADERBOARD_VARIABLES;
const B = 1000;
for (const R of runCounts) {
  const { variables, runs } = leaderboardGridInput(R);
  const names = runs.map((r) => r.id);
  for (const seed of seeds) {
    const { points, replicates, macroReplicates, macroPoints } = bootstrapGrid({ variables, runs, resamples: B, seed });
    const voters = Array.from({ length: V }, (_, v) => Float64Array.from({ length: R }, (_, r) => points[r * V + v]!));
    const pointOrder = kemeny(voters, { macro: macroPoints, names }).order;
    const input = { data: replicates, candidates: R, voters: V, replicates: B };
    const options = { pointOrder, names, macro: { data: macroReplicates } };
    const times: number[] = [];
    let result: ReturnType<typeof impl.kemenyRankIntervals> | null = null;
    for (let rep = 0; rep < repeats; rep++) {
      const t = cpu(() => impl.kemenyRankIntervals(input, options));
      times.push(t.ms);
      result = t.value;
    }
    console.log(
      `R=${R} seed=${seed}: median ${median(times).toFixed(1)} ms (${times.map((x) => x.toFixed(0)).join(', ')}), ` +
        `exact ${result!.exactReplicates}/${B}`,
    );
    if (ranksOut !== null) {
      writeFileSync(join(ranksOut, `ranks-${R}-${seed}.bin`), Buffer.from(result!.ranks.buffer));
      writeFileSync(join(ranksOut, `exact-${R}-${seed}.txt`), `${result!.exactReplicates}\n`);
    }
  }
}
