import { Field, Float, Int, ObjectType, registerEnumType } from 'type-graphql';
import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { Node } from '../../graphql/node';
import { DateTimeScalar, JSONScalar } from '../../graphql/scalars';

export enum PromptStrategy {
  ZERO_SHOT = 'ZERO_SHOT',
  ONE_SHOT = 'ONE_SHOT',
  FEW_SHOT = 'FEW_SHOT',
  CHAIN_OF_THOUGHT = 'CHAIN_OF_THOUGHT',
  SELF_CONSISTENCY = 'SELF_CONSISTENCY',
  PROMPT_GRAPH = 'PROMPT_GRAPH',
}
registerEnumType(PromptStrategy, { name: 'PromptStrategy' });

export enum RunStatus {
  QUEUED = 'QUEUED',
  RUNNING = 'RUNNING',
  SUCCEEDED = 'SUCCEEDED',
  PARTIAL = 'PARTIAL',
  FAILED = 'FAILED',
  CANCELLED = 'CANCELLED',
}
registerEnumType(RunStatus, { name: 'RunStatus' });

export enum RunSource {
  EXECUTED = 'EXECUTED',
  IMPORTED = 'IMPORTED',
}
registerEnumType(RunSource, { name: 'RunSource' });

@ObjectType()
export class RunProgress {
  @Field(() => Int) total!: number;
  @Field(() => Int) succeeded!: number;
  @Field(() => Int) failed!: number;
  @Field(() => Int) pending!: number;
  @Field(() => DateTimeScalar, { nullable: true }) startedAt!: Date | null;
  @Field(() => DateTimeScalar, { nullable: true }) finishedAt!: Date | null;
  @Field(() => Int, { nullable: true, description: 'Milliseconds from start to finish (or to now while running), time spent cancelled before a resume left out.' })
  elapsedMs!: number | null;
  @Field(() => Int, { nullable: true, description: 'Estimated milliseconds left, from the pace so far.' })
  etaMs!: number | null;
}

@ObjectType()
export class RunUsage {
  @Field(() => Int) promptTokens!: number;
  @Field(() => Int) completionTokens!: number;
  @Field(() => Float, { nullable: true, description: 'Mean latency of the succeeded reports that have one, milliseconds.' })
  meanLatencyMs!: number | null;
  @Field(() => Float, { nullable: true, description: 'Median latency of the succeeded reports, milliseconds.' })
  latencyP50Ms!: number | null;
  @Field(() => Float, { nullable: true, description: '95th percentile latency of the succeeded reports, milliseconds.' })
  latencyP95Ms!: number | null;
  @Field(() => Float, { nullable: true, description: 'Wall-clock seconds per finished report.' })
  secondsPerReport!: number | null;
  @Field(() => Float, { nullable: true, description: 'Completion tokens per wall-clock second.' })
  tokensPerSecond!: number | null;
  @Field(() => Float, { nullable: true, description: 'tokensPerSecond divided by the endpoint GPU count.' })
  tokensPerSecondPerGpu!: number | null;
}

@Entity('runs')
@Index(['useCaseId', 'datasetId'])
@Index(['experimentId'])
@ObjectType({ implements: Node, description: 'One model × prompt × strategy over one dataset.' })
export class Run extends Node {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ name: 'project_id', type: 'uuid' })
  projectId!: string;

  @Column({ name: 'use_case_id', type: 'uuid' })
  useCaseId!: string;

  @Column({ name: 'dataset_id', type: 'uuid', nullable: true })
  datasetId!: string | null;

  @Column({ name: 'model_id', type: 'uuid', nullable: true })
  modelId!: string | null;

  @Column({ name: 'prompt_id', type: 'uuid', nullable: true })
  promptId!: string | null;

  @Column({ name: 'experiment_id', type: 'uuid', nullable: true })
  experimentId!: string | null;

  @Field()
  @Column({ type: 'text' })
  name!: string;

  @Field(() => PromptStrategy)
  @Column({ type: 'varchar', length: 24 })
  strategy!: PromptStrategy;

  @Field(() => JSONScalar, { description: 'Immutable snapshot of everything that decided the outputs.' })
  @Column({ type: 'jsonb', default: () => "'{}'" })
  config!: Record<string, unknown>;

  @Field(() => RunStatus)
  @Column({ type: 'varchar', length: 16 })
  status!: RunStatus;

  @Field(() => RunSource)
  @Column({ type: 'varchar', length: 16 })
  source!: RunSource;

  @Column({ name: 'total_reports', type: 'integer', default: 0 })
  totalReports!: number;

  @Column({ name: 'succeeded_count', type: 'integer', default: 0 })
  succeededCount!: number;

  @Column({ name: 'failed_count', type: 'integer', default: 0 })
  failedCount!: number;

  @Column({ name: 'prompt_tokens', type: 'bigint', default: 0, transformer: { to: (v: number) => v, from: (v: string) => Number(v) } })
  promptTokens!: number;

  @Column({ name: 'completion_tokens', type: 'bigint', default: 0, transformer: { to: (v: number) => v, from: (v: string) => Number(v) } })
  completionTokens!: number;

  @Column({ name: 'latency_ms_sum', type: 'bigint', default: 0, transformer: { to: (v: number) => v, from: (v: string) => Number(v) } })
  latencyMsSum!: number;

  /** Time the run spent cancelled before it was resumed: not part of its elapsed time. */
  @Column({ name: 'paused_ms', type: 'bigint', default: 0, transformer: { to: (v: number) => v, from: (v: string) => Number(v) } })
  pausedMs!: number;

  @Field(() => DateTimeScalar, { nullable: true })
  @Column({ name: 'started_at', type: 'timestamptz', nullable: true })
  startedAt!: Date | null;

  @Field(() => DateTimeScalar, { nullable: true })
  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt!: Date | null;

  @Field(() => [String], { description: 'What the run was started with that the endpoint may not honour (unsupported options, greedy samples, …).' })
  @Column({ type: 'jsonb', default: () => "'[]'" })
  warnings!: string[];

  @Field(() => String, { nullable: true, description: 'Why the run as a whole failed, if it did.' })
  @Column({ type: 'text', nullable: true })
  error!: string | null;

  @Field(() => DateTimeScalar)
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
