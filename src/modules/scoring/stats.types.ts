import { Field, Float, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { InvalidCategory } from '../annotation/annotation.entity';
import { Annotator } from '../annotation/annotator.entity';
import { Model } from '../endpoint/model.entity';
import { PromptStrategy, Run } from '../run/run.entity';
import { Variable } from '../use-case/variable.entity';

export enum Metric {
  BALANCED_ACCURACY = 'BALANCED_ACCURACY',
  ACCURACY = 'ACCURACY',
  COSINE_SIMILARITY = 'COSINE_SIMILARITY',
  SYMMETRIC_SIMILARITY = 'SYMMETRIC_SIMILARITY',
}
registerEnumType(Metric, { name: 'Metric', description: 'Primary metric of a variable type (docs/scoring.md §2).' });

export enum ScoringMode {
  EFFECTIVE = 'EFFECTIVE',
  CONDITIONAL = 'CONDITIONAL',
}
registerEnumType(ScoringMode, {
  name: 'ScoringMode',
  description: 'EFFECTIVE counts INVALID predictions as wrong; CONDITIONAL scores valid predictions only.',
});

export enum RankingLevel {
  RUN = 'RUN',
  MODEL = 'MODEL',
}
registerEnumType(RankingLevel, { name: 'RankingLevel', description: 'RUN: model × strategy candidates; MODEL: each model by its best-ranked run.' });

export enum VoterScheme {
  VARIABLES = 'VARIABLES',
  USE_CASES = 'USE_CASES',
}
registerEnumType(VoterScheme, { name: 'VoterScheme', description: 'Who votes in a ranking across use cases.' });

export enum RankingMethod {
  KEMENY_YOUNG = 'KEMENY_YOUNG',
}
registerEnumType(RankingMethod, { name: 'RankingMethod' });

export enum ModelGrouping {
  SIZE_CLASS = 'SIZE_CLASS',
  SPECIALISATION = 'SPECIALISATION',
  FAMILY = 'FAMILY',
  REASONING_MODE = 'REASONING_MODE',
  QUANTISATION = 'QUANTISATION',
}
registerEnumType(ModelGrouping, { name: 'ModelGrouping' });

@InputType({ description: 'Options of every statistic (docs/scoring.md §5).' })
export class StatsOptions {
  @Field(() => Int, { nullable: true, defaultValue: 1000, description: 'Bootstrap resamples B (0: point estimates only; at most 10000).' })
  resamples?: number | null;
  @Field(() => Int, { nullable: true, defaultValue: 42, description: 'Seed of the resamples; the same seed gives the same intervals.' })
  seed?: number | null;
  @Field(() => Float, { nullable: true, defaultValue: 0.95 }) confidence?: number | null;
  @Field(() => ID, { nullable: true, description: "Default: the dataset's reference annotator." })
  referenceAnnotatorId?: string | null;
  @Field(() => ID, { nullable: true, description: 'An embedding model; default: the built-in lexical embedder.' })
  embeddingModelId?: string | null;
  @Field(() => ScoringMode, { nullable: true, defaultValue: ScoringMode.EFFECTIVE }) scoring?: ScoringMode | null;
  @Field(() => Boolean, { nullable: true, defaultValue: false, description: 'Score categorical variables through their collapse maps.' })
  collapsed?: boolean | null;
}

@ObjectType({ description: 'A point estimate on the full sample with its percentile bootstrap interval.' })
export class Estimate {
  @Field(() => Float) value!: number;
  @Field(() => Float, { nullable: true }) ciLow!: number | null;
  @Field(() => Float, { nullable: true }) ciHigh!: number | null;
  @Field(() => Float, { nullable: true }) confidence!: number | null;
  @Field(() => Int, { nullable: true, description: 'Bootstrap resamples with a defined value.' }) resamples!: number | null;
}

@ObjectType()
export class InvalidCount {
  @Field(() => InvalidCategory) category!: InvalidCategory;
  @Field(() => Int) count!: number;
}

@ObjectType({ description: 'Which embedder produced similarity scores.' })
export class EmbedderInfo {
  @Field() provider!: string;
  @Field() model!: string;
}

@ObjectType()
export class VariableScore {
  @Field(() => Variable) variable!: Variable;
  @Field(() => Metric) metric!: Metric;
  @Field(() => Int, { description: 'Reports with a reference value.' }) n!: number;
  @Field(() => Estimate, { description: 'Effective score: INVALID counted wrong.' }) estimate!: Estimate;
  @Field(() => Estimate, { nullable: true, description: 'On valid predictions only.' }) conditional!: Estimate | null;
  @Field(() => Estimate, { nullable: true, description: 'Through the collapse map (categorical variables that have one).' })
  collapsed!: Estimate | null;
  @Field(() => Float) validity!: number;
  @Field(() => [InvalidCount]) invalid!: InvalidCount[];
  @Field(() => Estimate, { nullable: true, description: 'Agreement between the human annotators on this variable.' })
  interRaterAgreement!: Estimate | null;
  @Field(() => EmbedderInfo, { nullable: true }) embedder!: EmbedderInfo | null;
}

@ObjectType()
export class RunScores {
  @Field(() => Estimate) macroAverage!: Estimate;
  @Field(() => Float, { description: 'Valid predictions / scored predictions over all variables.' }) validity!: number;
  @Field(() => [InvalidCount]) invalid!: InvalidCount[];
  @Field(() => [VariableScore], { description: 'Variables with at least one reference value, in order.' })
  variables!: VariableScore[];
  @Field(() => Annotator, { description: 'The reference standard used.' }) reference!: Annotator;
  @Field(() => EmbedderInfo) embedder!: EmbedderInfo;
}

@ObjectType()
export class RankingEntry {
  @Field(() => Int) rank!: number;
  @Field(() => Int, { nullable: true }) rankCiLow!: number | null;
  @Field(() => Int, { nullable: true }) rankCiHigh!: number | null;
  @Field(() => Run, { nullable: true, description: 'The run (RUN level within a use case; the best run at MODEL level).' }) run!: Run | null;
  @Field(() => Model, { nullable: true }) model!: Model | null;
  @Field(() => PromptStrategy, { nullable: true }) strategy!: PromptStrategy | null;
  @Field(() => Estimate, { nullable: true }) macroAverage!: Estimate | null;
}

@ObjectType({ description: 'A Kemeny–Young consensus ranking (docs/scoring.md §6).' })
export class Ranking {
  @Field(() => RankingMethod) method!: RankingMethod;
  @Field({ description: 'True when the order is proven optimal.' }) exact!: boolean;
  @Field(() => Int, { description: 'Total disagreement of the order with the voters.' }) score!: number;
  @Field(() => Int, { description: 'Σ min(w_ij, w_ji): no order scores lower.' }) lowerBound!: number;
  @Field(() => Int) voterCount!: number;
  @Field(() => [RankingEntry], { description: 'Best first.' }) entries!: RankingEntry[];
}

@ObjectType()
export class AnnotatorPairAgreement {
  @Field(() => Annotator) a!: Annotator;
  @Field(() => Annotator) b!: Annotator;
  @Field(() => Int, { description: 'Reports both annotated.' }) n!: number;
  @Field(() => Float, { description: 'Mean of B scored against A and A against B.' }) value!: number;
}

@ObjectType()
export class VariableAgreement {
  @Field(() => Variable) variable!: Variable;
  @Field(() => Metric) metric!: Metric;
  @Field(() => Estimate) estimate!: Estimate;
  @Field(() => [AnnotatorPairAgreement]) pairs!: AnnotatorPairAgreement[];
}

@ObjectType({ description: 'Inter-rater agreement, the human ceiling (docs/scoring.md §7).' })
export class AgreementSummary {
  @Field(() => [Annotator]) annotators!: Annotator[];
  @Field(() => Estimate, { nullable: true, description: 'Macro average over variables; null when fewer than two annotators.' })
  macroAverage!: Estimate | null;
  @Field(() => [VariableAgreement]) variables!: VariableAgreement[];
}

@ObjectType({ description: "Mean of the group's models' best-strategy macro averages (docs/scoring.md §8)." })
export class GroupSummary {
  @Field() group!: string;
  @Field(() => [Model]) models!: Model[];
  @Field(() => Int, { description: 'Model × use case results averaged.' }) memberCount!: number;
  @Field(() => Estimate) estimate!: Estimate;
}

@ObjectType()
export class VarianceComponentShare {
  @Field() name!: string;
  @Field(() => Int) levelCount!: number;
  @Field(() => Float) variance!: number;
  @Field(() => Float, { description: 'Share of the total variance.' }) share!: number;
}

@ObjectType({ description: 'REML fit of per-report scores with crossed random intercepts for model and strategy (docs/scoring.md §8).' })
export class VarianceDecomposition {
  @Field(() => Int, { description: 'Per-report scores fitted.' }) observations!: number;
  @Field(() => Float) intercept!: number;
  @Field(() => [VarianceComponentShare]) components!: VarianceComponentShare[];
  @Field(() => Float) residualVariance!: number;
  @Field(() => Float) residualShare!: number;
  @Field() converged!: boolean;
  @Field(() => [String], { description: 'Why the shares may not mean what they seem, e.g. model and strategy not crossed.' })
  warnings!: string[];
}

