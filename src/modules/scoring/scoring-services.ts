import type { DataSource } from 'typeorm';
import { AgreementService } from './agreement.service';
import { ChanceAgreementService } from './chance-agreement.service';
import { ConsensusRankingService } from './consensus-ranking.service';
import { ContrastService } from './contrast.service';
import type { EmbedderResolver } from './embedding-similarity';
import { GroupSummaryService } from './group-summary.service';
import { LeaderboardService } from './leaderboard.service';
import { RunComparisonService } from './run-comparison.service';
import { RunScoresService } from './run-scores.service';
import { ScoringGrids, type ScoringGridsOptions } from './scoring-grids';
import { StratifiedResultsService } from './stratified-results.service';
import { StrategyEffectsService } from './strategy-effects.service';
import { VarianceService } from './variance.service';

/**
 * One service per scoring question, all over one shared data and grid layer (ScoringGrids). A
 * new question (evidence scores, selective prediction, review statistics) is one more service
 * taking the layer, added here.
 */
export interface ScoringServices {
  /** The shared layer: options, the answer cache and its revisions, the run item cache, the statistics engine. */
  scoring: ScoringGrids;
  runScores: RunScoresService;
  leaderboards: LeaderboardService;
  consensusRankings: ConsensusRankingService;
  groupSummaries: GroupSummaryService;
  agreement: AgreementService;
  chanceAgreement: ChanceAgreementService;
  variance: VarianceService;
  runComparisons: RunComparisonService;
  strategyEffects: StrategyEffectsService;
  contrasts: ContrastService;
  stratifiedResults: StratifiedResultsService;
}

export function createScoringServices(dataSource: DataSource, embedderResolver: EmbedderResolver | null, options: ScoringGridsOptions = {}): ScoringServices {
  const scoring = new ScoringGrids(dataSource, embedderResolver, options);
  const agreement = new AgreementService(scoring);
  return {
    scoring,
    runScores: new RunScoresService(scoring, agreement),
    leaderboards: new LeaderboardService(scoring),
    consensusRankings: new ConsensusRankingService(scoring),
    groupSummaries: new GroupSummaryService(scoring),
    agreement,
    chanceAgreement: new ChanceAgreementService(scoring),
    variance: new VarianceService(scoring),
    runComparisons: new RunComparisonService(scoring),
    strategyEffects: new StrategyEffectsService(scoring),
    contrasts: new ContrastService(scoring),
    stratifiedResults: new StratifiedResultsService(scoring),
  };
}
