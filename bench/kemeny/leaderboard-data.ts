/**
 * The cold-leaderboard data of bench/graphql-leaderboard as grid input: 1,252 reports, 12
 * categorical variables with 2–9 classes and 4 numeric ones (one group), `runs` runs of skill
 * uniform in [0.45, 0.95] with 2 % missing answers. Deterministic.
 */
import type { GridRun, GridVariable } from '../../src/analytics/bootstrap';

export const LEADERBOARD_REPORTS = 1252;
export const LEADERBOARD_VARIABLES = 16;

export function lcg32(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

export function leaderboardGridInput(runCount: number): { variables: GridVariable[]; runs: GridRun[] } {
  const N = LEADERBOARD_REPORTS;
  const V = LEADERBOARD_VARIABLES;
  const rnd = lcg32(20261129);
  const classes = Array.from({ length: V }, (_, v) => (v < 12 ? 2 + (v % 8) : 10));
  const truth = Array.from({ length: V }, (_, v) => Int32Array.from({ length: N }, () => Math.floor(rnd() * classes[v]!)));
  const variables: GridVariable[] = truth.map((g, v) => ({ key: `v${v}`, groups: v < 12 ? g : new Int32Array(N) }));
  const runs: GridRun[] = Array.from({ length: runCount }, (_, r) => {
    const skill = 0.45 + 0.5 * rnd();
    return {
      id: `run${r}`,
      items: truth.map((g, v) =>
        Float64Array.from(g, (t) => {
          const u = rnd();
          if (u < 0.02) return 0;
          if (u < skill) return 1;
          return Math.floor(rnd() * classes[v]!) === t ? 1 : 0;
        }),
      ),
    };
  });
  return { variables, runs };
}
