import { Field, Float, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { Annotator } from '../annotation/annotator.entity';
import { Model } from '../endpoint/model.entity';
import { PromptStrategy, Run } from '../run/run.entity';
import { UseCase } from '../use-case/use-case.entity';
import { Variable } from '../use-case/variable.entity';
import { InvalidCount, Metric } from './stats.types';
import { Estimate } from './stats.types';

@ObjectType({ description: 'A difference (A − B) on the full sample with its paired bootstrap interval and two-sided p-value (docs/scoring.md §5).' })
export class Difference {
  @Field(() => Float) value!: number;
  @Field(() => Float, { nullable: true }) ciLow!: number | null;
  @Field(() => Float, { nullable: true }) ciHigh!: number | null;
  @Field(() => Float, { nullable: true }) confidence!: number | null;
  @Field(() => Int, { nullable: true, description: 'Resamples with a defined difference.' }) resamples!: number | null;
  @Field(() => Float, { nullable: true, description: 'Two-sided bootstrap p-value of "no difference"; null without resamples.' })
  pValue!: number | null;
  @Field(() => Float, { nullable: true, description: 'Benjamini–Hochberg q-value across the comparisons of the answer (null where not adjusted).' })
  qValue!: number | null;
}

@ObjectType()
export class VariableDifference {
  @Field(() => Variable) variable!: Variable;
  @Field(() => Metric) metric!: Metric;
  @Field(() => Difference, { description: 'q-value across the variables of the comparison.' }) difference!: Difference;
}

@ObjectType({ description: 'Paired comparison of two runs over the same dataset: the run minus the baseline.' })
export class RunComparison {
  @Field(() => Run) run!: Run;
  @Field(() => Run) baseline!: Run;
  @Field(() => Estimate) runMacroAverage!: Estimate;
  @Field(() => Estimate) baselineMacroAverage!: Estimate;
  @Field(() => Difference, { description: 'Difference of the macro averages (its qValue is null).' }) macroAverage!: Difference;
  @Field(() => [VariableDifference]) variables!: VariableDifference[];
}

@ObjectType({ description: 'One cell of the strategy-effect table: a strategy (or the best one) against the baseline strategy.' })
export class StrategyEffect {
  @Field(() => Model, { nullable: true, description: 'Null: every model pooled.' }) model!: Model | null;
  @Field(() => UseCase, { nullable: true, description: 'Null: pooled across the use cases.' }) useCase!: UseCase | null;
  @Field(() => PromptStrategy, { nullable: true, description: 'Null on a best-strategy row.' }) strategy!: PromptStrategy | null;
  @Field({ description: "True: the model's best strategy (its highest-placed run in the leaderboard) against the baseline." }) best!: boolean;
  @Field(() => [PromptStrategy], { description: 'Best-strategy rows: the strategy that was best in each member, in member order.' })
  bestStrategies!: PromptStrategy[];
  @Field(() => Run, { nullable: true, description: 'The run compared (one model in one use case).' }) run!: Run | null;
  @Field(() => Run, { nullable: true, description: 'The baseline run (one model in one use case).' }) baselineRun!: Run | null;
  @Field(() => Int, { description: 'Model × use case results averaged.' }) memberCount!: number;
  @Field(() => Estimate, { description: 'Mean macro average of the strategy over the members.' }) value!: Estimate;
  @Field(() => Estimate, { description: 'Mean macro average of the baseline over the members.' }) baselineValue!: Estimate;
  @Field(() => Difference, { description: 'Strategy − baseline, macro-average scale (×100: percentage points); q-value across the table.' })
  difference!: Difference;
}

@ObjectType()
export class StrategyCount {
  @Field(() => PromptStrategy) strategy!: PromptStrategy;
  @Field(() => Int) count!: number;
}

@ObjectType({ description: 'Effects of prompting strategies against a baseline (extraction paper §3.2).' })
export class StrategyEffectTable {
  @Field(() => PromptStrategy) baseline!: PromptStrategy;
  @Field(() => [StrategyEffect], { description: 'Per model (per use case, then pooled), then every model pooled.' }) rows!: StrategyEffect[];
  @Field(() => [StrategyCount], { description: 'How often each strategy was the best of a model in a use case.' }) topRanked!: StrategyCount[];
  @Field(() => Int, { description: 'Differences adjusted together by Benjamini–Hochberg.' }) comparisons!: number;
}

export enum ReasoningMode {
  THINKING = 'THINKING',
  NON_THINKING = 'NON_THINKING',
}
registerEnumType(ReasoningMode, {
  name: 'ReasoningMode',
  description: "A run's reasoning mode: its config.thinking when set, otherwise its model's supportsThinking.",
});

@InputType({ description: 'Runs that meet every given criterion (an empty selector takes every run).' })
export class RunSelector {
  @Field(() => [ID], { nullable: true }) modelIds?: string[] | null;
  @Field(() => [PromptStrategy], { nullable: true }) strategies?: PromptStrategy[] | null;
  @Field(() => ReasoningMode, { nullable: true }) reasoningMode?: ReasoningMode | null;
  @Field(() => Boolean, { nullable: true, description: 'Guided (rich system prompt, config.guided not false) or zero-shot prompting (RADS paper).' })
  guided?: boolean | null;
  @Field(() => [String], { nullable: true }) families?: string[] | null;
  @Field(() => [String], { nullable: true, description: 'Size classes (TINY, SMALL, MEDIUM, LARGE).' }) sizeClasses?: string[] | null;
}

@InputType({ description: 'What splits observations into strata; give exactly one.' })
export class StratumInput {
  @Field(() => String, { nullable: true, description: "A key of the reports' metadata (modality, RADS scheme, language, …); reports without it: UNKNOWN." })
  reportMetadata?: string | null;
  @Field(() => String, { nullable: true, description: 'A prefix of use-case tags, e.g. "complexity:": the use case\'s first tag with it (UNKNOWN when none).' })
  useCaseTagPrefix?: string | null;
  @Field(() => Boolean, { nullable: true, description: 'One stratum per use case (its name).' }) useCase?: boolean | null;
  @Field(() => Boolean, { nullable: true, description: 'One stratum per variable (its key).' }) variable?: boolean | null;
}

@ObjectType({ description: 'Difference of group A and group B in a linear probability model with cluster-robust (by report) standard errors.' })
export class ContrastEstimate {
  @Field(() => Float, { description: 'Mean of A − mean of B (the group coefficient; adjusted for strata in the overall row when strata are given).' })
  difference!: number;
  @Field(() => Float, { nullable: true }) standardError!: number | null;
  @Field(() => Float, { nullable: true }) ciLow!: number | null;
  @Field(() => Float, { nullable: true }) ciHigh!: number | null;
  @Field(() => Float, { nullable: true }) pValue!: number | null;
  @Field(() => Float, { nullable: true, description: 'Benjamini–Hochberg across the strata of this outcome (null on the overall row).' }) qValue!: number | null;
  @Field(() => Float, { nullable: true }) meanA!: number | null;
  @Field(() => Float, { nullable: true }) meanB!: number | null;
  @Field(() => Int) nA!: number;
  @Field(() => Int) nB!: number;
  @Field(() => Int, { description: 'Reports (clusters) in the model.' }) clusters!: number;
  @Field({ description: 'False when a group has no observation in the stratum.' }) estimable!: boolean;
}

@ObjectType()
export class ContrastRow {
  @Field(() => String, { nullable: true, description: 'Null: overall.' }) stratum!: string | null;
  @Field(() => ContrastEstimate, { description: 'Effective score (INVALID counted wrong; CONDITIONAL scoring: valid predictions only).' })
  effective!: ContrastEstimate;
  @Field(() => ContrastEstimate, { description: 'Validity (1 valid, 0 invalid).' }) validity!: ContrastEstimate;
}

@ObjectType({ description: 'Group contrast of two sets of runs (docs/scoring.md §8; RADS paper §2.12, Supplementary Table 5).' })
export class ContrastTable {
  @Field(() => [Run]) groupA!: Run[];
  @Field(() => [Run]) groupB!: Run[];
  @Field(() => ContrastRow) overall!: ContrastRow;
  @Field(() => [ContrastRow], { description: 'In order of first appearance.' }) strata!: ContrastRow[];
}

export enum RunAttribute {
  ALL = 'ALL',
  RUN = 'RUN',
  MODEL = 'MODEL',
  STRATEGY = 'STRATEGY',
  FAMILY = 'FAMILY',
  SIZE_CLASS = 'SIZE_CLASS',
  SIZE_BIN = 'SIZE_BIN',
  REASONING_MODE = 'REASONING_MODE',
  GUIDANCE = 'GUIDANCE',
  SPECIALISATION = 'SPECIALISATION',
  QUANTISATION = 'QUANTISATION',
}
registerEnumType(RunAttribute, { name: 'RunAttribute', description: 'What groups runs in stratified results.' });

@InputType()
export class RunGroupingInput {
  @Field(() => RunAttribute) by!: RunAttribute;
  @Field(() => [Float], {
    nullable: true,
    description: 'SIZE_BIN: ascending upper bounds in billions of parameters, e.g. [1, 10, 29, 100] gives ≤1B, 1–10B, 10–29B, 29–100B, >100B.',
  })
  sizeBinEdges?: number[] | null;
}

@ObjectType({ description: "Pooled results of a group of runs in a stratum: every scored prediction (run × report × variable) counts once." })
export class StratifiedResult {
  @Field() group!: string;
  @Field(() => String, { nullable: true, description: 'Null: every stratum.' }) stratum!: string | null;
  @Field(() => Int) runCount!: number;
  @Field(() => Int, { description: 'Scored predictions: run × report × variable with a reference value.' }) predictions!: number;
  @Field(() => Int) valid!: number;
  @Field(() => Estimate) validity!: Estimate;
  @Field(() => Estimate, { description: 'Mean item score, INVALID counted wrong (1/0 for categorical, numeric, exact; similarity for text and lists).' })
  effective!: Estimate;
  @Field(() => Estimate, { nullable: true, description: 'Mean item score of the valid predictions.' }) conditional!: Estimate | null;
  @Field(() => [InvalidCount]) invalid!: InvalidCount[];
}

export enum AlphaLevel {
  NOMINAL = 'NOMINAL',
  INTERVAL = 'INTERVAL',
}
registerEnumType(AlphaLevel, { name: 'AlphaLevel', description: "Krippendorff's α distance: NOMINAL (categories) or INTERVAL (squared difference of numbers)." });

@ObjectType()
export class AnnotatorPairKappa {
  @Field(() => Annotator) a!: Annotator;
  @Field(() => Annotator) b!: Annotator;
  @Field(() => Int, { description: 'Reports both rated.' }) n!: number;
  @Field(() => Estimate, { nullable: true, description: "Cohen's κ; null when undefined (no shared report, or one category only)." })
  kappa!: Estimate | null;
}

@ObjectType()
export class VariableChanceAgreement {
  @Field(() => Variable) variable!: Variable;
  @Field(() => AlphaLevel) alphaLevel!: AlphaLevel;
  @Field(() => Estimate, { nullable: true, description: "Krippendorff's α over every annotator, missing ratings allowed." })
  krippendorffAlpha!: Estimate | null;
  @Field(() => Estimate, { nullable: true, description: "Fleiss' κ on the reports every annotator rated." }) fleissKappa!: Estimate | null;
  @Field(() => Int, { description: "Reports every annotator rated (Fleiss' κ)." }) fleissReports!: number;
  @Field(() => [AnnotatorPairKappa]) pairs!: AnnotatorPairKappa[];
}

@ObjectType({ description: 'Chance-corrected agreement of annotators per variable, with bootstrap intervals over reports.' })
export class ChanceCorrectedAgreement {
  @Field(() => [Annotator]) annotators!: Annotator[];
  @Field(() => [VariableChanceAgreement], { description: 'Categorical, binary, numeric and exact-string variables with ratings.' })
  variables!: VariableChanceAgreement[];
}
