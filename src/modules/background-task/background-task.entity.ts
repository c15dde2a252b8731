import { Field, Int, ObjectType, registerEnumType } from 'type-graphql';
import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { Node } from '../../graphql/node';
import { DateTimeScalar, JSONScalar } from '../../graphql/scalars';
import type { Principal } from '../api-key/principal';

export enum BackgroundTaskKind {
  REPORT_IMPORT = 'REPORT_IMPORT',
  ANNOTATION_IMPORT = 'ANNOTATION_IMPORT',
  PREDICTION_IMPORT = 'PREDICTION_IMPORT',
  EXPERIMENT = 'EXPERIMENT',
}
registerEnumType(BackgroundTaskKind, { name: 'BackgroundTaskKind', description: 'What a background task does.' });

export enum BackgroundTaskStatus {
  QUEUED = 'QUEUED',
  RUNNING = 'RUNNING',
  SUCCEEDED = 'SUCCEEDED',
  FAILED = 'FAILED',
}
registerEnumType(BackgroundTaskStatus, {
  name: 'BackgroundTaskStatus',
  description: 'QUEUED until a worker takes the task up, RUNNING while it works (again after a worker died), then SUCCEEDED (all written) or FAILED (nothing written).',
});

@ObjectType({ description: 'Why a background task failed: the error the synchronous mutation would have answered.' })
export class BackgroundTaskError {
  @Field({ description: 'One of the request error codes (BAD_USER_INPUT, NOT_FOUND, CONFLICT, FORBIDDEN, INTERNAL_SERVER_ERROR).' }) code!: string;
  @Field() message!: string;
  @Field(() => JSONScalar, { nullable: true, description: 'The extensions the synchronous mutation would have carried (reason, field, row errors).' })
  details!: Record<string, unknown> | null;
}

/** What the task's work answered, kept for its reader. */
export interface BackgroundTaskResult {
  experimentId?: string;
  annotatorId?: string;
  runId?: string;
  /** importReports' counts */
  inserted?: number;
  updated?: number;
  /** importAnnotations' counts */
  reports?: number;
  values?: number;
  /** importPredictions' counts */
  imported?: number;
  missingReports?: number;
  /** startExperiment's runs */
  runs?: number;
}

@Entity('background_tasks')
@ObjectType({
  implements: Node,
  description:
    'Long work (a large import, a large experiment) done by a worker instead of inside a request: follow it with backgroundTaskProgress or read it with node(id:). All or nothing.',
})
export class BackgroundTask extends Node {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ name: 'project_id', type: 'uuid' })
  projectId!: string;

  @Field(() => BackgroundTaskKind)
  @Column({ type: 'varchar', length: 32 })
  kind!: BackgroundTaskKind;

  @Field(() => BackgroundTaskStatus)
  @Column({ type: 'varchar', length: 16 })
  status!: BackgroundTaskStatus;

  /** The key that started the task: the work runs with its rights. */
  @Column({ type: 'jsonb' })
  principal!: Principal;

  /** The mutation's input with row ids (the file is in background_task_files). */
  @Column({ type: 'jsonb' })
  input!: Record<string, unknown>;

  @Field(() => String, { nullable: true, description: 'The key the client gave: a request with the same key finds this task instead of starting another.' })
  @Column({ name: 'idempotency_key', type: 'text', nullable: true })
  idempotencyKey!: string | null;

  @Field(() => Int, { description: 'Records written so far (reports of an import, runs of an experiment); reset when a worker starts the task again.' })
  @Column({ type: 'int' })
  processed!: number;

  @Column({ type: 'jsonb', nullable: true })
  result!: BackgroundTaskResult | null;

  @Column({ name: 'error_code', type: 'varchar', length: 32, nullable: true })
  errorCode!: string | null;

  @Column({ name: 'error_message', type: 'text', nullable: true })
  errorMessage!: string | null;

  @Column({ name: 'error_details', type: 'jsonb', nullable: true })
  errorDetails!: Record<string, unknown> | null;

  @Field(() => Int, { description: 'How often a worker started the task (more than 1 after a worker died or stopped).' })
  @Column({ type: 'int' })
  attempts!: number;

  @Column({ type: 'text', nullable: true })
  worker!: string | null;

  @Column({ name: 'lease_until', type: 'timestamptz', nullable: true })
  leaseUntil!: Date | null;

  @Field(() => DateTimeScalar)
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Field(() => DateTimeScalar, { nullable: true })
  @Column({ name: 'started_at', type: 'timestamptz', nullable: true })
  startedAt!: Date | null;

  @Field(() => DateTimeScalar, { nullable: true })
  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt!: Date | null;
}
