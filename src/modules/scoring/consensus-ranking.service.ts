import { estimateFrom } from '../../analytics/bootstrap';
import { requireRole, type Principal } from '../api-key/principal';
import { Role } from '../api-key/api-key.entity';
import type { ScoringGrids } from './scoring-grids';
import type { ResolvedStatsOptions } from './stats-options';
import type { Run } from '../run/run.entity';
import { loadModelsOf, loadUseCases } from './scoring-data';
import { emptyRanking, pointEstimate, rankingOf, toEstimate } from './estimates';
import { RankingLevel, VoterScheme, type Estimate, type Ranking, type RankingEntry } from './stats.types';

/** Kemeny–Young across use cases: models (or model × strategy) matched across use cases, each use case's variables or macro average voting (docs/scoring.md §6). */
export class ConsensusRankingService {
  constructor(private readonly grids: ScoringGrids) {}

  async consensusRanking(
    principal: Principal,
    projectId: string,
    useCaseIds: string[],
    level: RankingLevel,
    voters: VoterScheme,
    options: ResolvedStatsOptions,
  ): Promise<Ranking> {
    requireRole(principal, projectId, Role.VIEWER, 'Project');
    const useCases = await loadUseCases(this.grids.dataSource, projectId, useCaseIds);
    return this.grids.cached(principal, options, projectId, 'consensus', { useCaseIds, level, voters, options }, async () => {
      const units = await this.grids.useCaseGrids(principal, useCases, level, options);
      // Candidates: model (MODEL level) or model × strategy (RUN level), matched across use cases.
      const keyOf = (run: Run) => (level === RankingLevel.MODEL ? (run.modelId ?? `run:${run.id}`) : `${run.modelId ?? `run:${run.id}`}|${run.strategy}`);
      const candidateKeys: string[] = [];
      const candidateIndex = new Map<string, number>();
      const sample = new Map<number, Run>();
      for (const unit of units) {
        for (const r of unit.selected) {
          const key = keyOf(unit.g.runs[r]!);
          if (!candidateIndex.has(key)) {
            candidateIndex.set(key, candidateKeys.length);
            sample.set(candidateKeys.length, unit.g.runs[r]!);
            candidateKeys.push(key);
          }
        }
      }
      const K = candidateKeys.length;
      if (K === 0) return emptyRanking();
      const B = options.resamples;
      const voterRows: Float64Array[] = [];
      const voterReplicates: Float64Array[] = [];
      const macroSum = new Float64Array(K);
      const macroCount = new Float64Array(K);
      const macroReps = new Float64Array(K * Math.max(B, 1));
      const macroRepCount = new Float64Array(K * Math.max(B, 1));
      for (const unit of units) {
        const grid = unit.g.grid!; // unitsOf keeps only datasets with a grid
        const V = unit.g.variableIndex.length;
        const GB = grid.resamples;
        const addVoter = (point: (r: number) => number, replicate: (r: number, b: number) => number) => {
          const row = new Float64Array(K).fill(Number.NaN);
          const reps = new Float64Array(K * Math.max(B, 1)).fill(Number.NaN);
          for (const r of unit.selected) {
            const k = candidateIndex.get(keyOf(unit.g.runs[r]!))!;
            row[k] = point(r);
            for (let b = 0; b < B; b++) reps[k * B + b] = replicate(r, b);
          }
          voterRows.push(row);
          voterReplicates.push(reps);
        };
        if (voters === VoterScheme.USE_CASES) {
          addVoter((r) => grid.macroPoints[r]!, (r, b) => grid.macroReplicates[r * GB + b]!);
        } else {
          for (let v = 0; v < V; v++) addVoter((r) => grid.points[r * V + v]!, (r, b) => grid.replicates[(r * V + v) * GB + b]!);
        }
        for (const r of unit.selected) {
          const k = candidateIndex.get(keyOf(unit.g.runs[r]!))!;
          if (Number.isFinite(grid.macroPoints[r]!)) {
            macroSum[k]! += grid.macroPoints[r]!;
            macroCount[k]! += 1;
          }
          for (let b = 0; b < B; b++) {
            const x = grid.macroReplicates[r * GB + b]!;
            if (Number.isFinite(x)) {
              macroReps[k * B + b]! += x;
              macroRepCount[k * B + b]! += 1;
            }
          }
        }
      }
      const macroPoints = Float64Array.from(macroSum, (s, k) => (macroCount[k]! > 0 ? s / macroCount[k]! : Number.NaN));
      const names = candidateKeys.map((key, k) => `${sample.get(k)!.name}\u0000${key}`);
      const ranking = await this.grids.statistics.kemeny(voterRows, { macro: macroPoints, names });
      let intervals: Record<number, { lower: number; upper: number }> | null = null;
      if (B > 0 && K > 1) {
        const VV = voterRows.length;
        const data = this.grids.statistics.float64(K * VV * B);
        voterReplicates.forEach((reps, v) => {
          for (let k = 0; k < K; k++) for (let b = 0; b < B; b++) data[(k * VV + v) * B + b] = reps[k * B + b]!;
        });
        const macroData = this.grids.statistics.float64(K * B);
        for (let i = 0; i < K * B; i++) macroData[i] = macroRepCount[i]! > 0 ? macroReps[i]! / macroRepCount[i]! : Number.NaN;
        const result = await this.grids.statistics.rankIntervals(
          { data, macro: macroData, candidates: K, voters: VV, replicates: B },
          { level: options.confidence, names, pointOrder: ranking.order },
        );
        intervals = {};
        for (const i of result) intervals[i.candidate] = { lower: i.lower, upper: i.upper };
      }
      const models = await loadModelsOf(this.grids.dataSource, [...sample.values()]);
      const entries: RankingEntry[] = ranking.order.map((k, position) => {
        const run = sample.get(k)!;
        const macroEstimate = this.meanEstimate(macroPoints[k]!, macroReps, macroRepCount, k, B, options);
        return {
          rank: position + 1,
          rankCiLow: intervals?.[k]?.lower ?? null,
          rankCiHigh: intervals?.[k]?.upper ?? null,
          run: units.length === 1 ? run : null,
          model: run.modelId ? (models.get(run.modelId) ?? null) : null,
          strategy: level === RankingLevel.RUN ? run.strategy : null,
          macroAverage: macroEstimate,
        };
      });
      return rankingOf(ranking, entries);
    });
  }

  private meanEstimate(value: number, sums: Float64Array, counts: Float64Array, k: number, B: number, options: ResolvedStatsOptions): Estimate | null {
    if (!Number.isFinite(value)) return null;
    if (B === 0) return pointEstimate(value);
    const reps: number[] = [];
    for (let b = 0; b < B; b++) if (counts[k * B + b]! > 0) reps.push(sums[k * B + b]! / counts[k * B + b]!);
    return toEstimate(estimateFrom(value, reps, options.confidence), B);
  }
}
