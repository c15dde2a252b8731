import { Field, Int, ObjectType, registerEnumType } from 'type-graphql';
import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import type { NormalisedCell } from '../../analytics/types';
import type { AlignedQuote } from '../../extraction/evidence-alignment';
import { Node } from '../../graphql/node';
import { DateTimeScalar, JSONScalar } from '../../graphql/scalars';
import { InvalidCategory } from '../annotation/annotation.entity';

export enum PredictionStatus {
  SUCCEEDED = 'SUCCEEDED',
  FAILED = 'FAILED',
}
registerEnumType(PredictionStatus, {
  name: 'PredictionStatus',
  description: 'SUCCEEDED: the model answered (its fields may still be invalid). FAILED: no answer (transport error).',
});

/** Per-variable outcome as stored: the normalised cell plus whether a prompt-graph step skipped it. */
export type StoredCell = NormalisedCell & { skipped?: boolean };

export enum EvidenceStatus {
  EXACT = 'EXACT',
  NORMALISED = 'NORMALISED',
  FUZZY = 'FUZZY',
  UNALIGNED = 'UNALIGNED',
}
registerEnumType(EvidenceStatus, {
  name: 'EvidenceStatus',
  description:
    'How a quote was found in the report (docs/concepts.md, Evidence): EXACT as written; NORMALISED after case, Unicode form, whitespace and line-end hyphens were evened out; FUZZY as the most similar passage (similarity at least 0.85); UNALIGNED not found (no span: the quote is only what the model wrote).',
});

@ObjectType({ description: "A quote the model gave for a value, and where it is in the report: [start, end) in UTF-16 code units, as JavaScript's String.slice counts." })
export class EvidenceSpan {
  @Field({ description: "What the model quoted, as it wrote it: the model's text, not the report's." })
  quote!: string;

  @Field(() => EvidenceStatus)
  status!: EvidenceStatus;

  @Field(() => Int, { nullable: true, description: 'First UTF-16 code unit of the span in the report text; null when UNALIGNED.' })
  start!: number | null;

  @Field(() => Int, { nullable: true, description: "One past the span's last code unit; null when UNALIGNED." })
  end!: number | null;

  @Field(() => String, { nullable: true, description: "The report's text of the span (text.slice(start, end)); null when UNALIGNED." })
  text!: string | null;

  @Field(() => Int, { description: 'How many places of the report matched as well (the span is the first); 0 when UNALIGNED.' })
  occurrences!: number;
}

@ObjectType({ description: 'One variable of one prediction.' })
export class PredictedField {
  @Field()
  key!: string;

  @Field(() => JSONScalar, { nullable: true, description: 'Normalised value; null when MISSING or INVALID.' })
  value!: unknown;

  @Field({ description: 'False when the model output could not be scored as a value.' })
  valid!: boolean;

  @Field({ description: 'The normalised value is MISSING (a valid answer: "not specified").' })
  missing!: boolean;

  @Field(() => InvalidCategory, { nullable: true })
  invalidCategory!: InvalidCategory | null;

  @Field({ description: 'A prompt-graph condition skipped this variable; it took its default.' })
  skipped!: boolean;

  @Field(() => [EvidenceSpan], { description: "The model's quotes for this value, each aligned to the report; empty when the run asked for no evidence. Never part of the value's score." })
  evidence!: EvidenceSpan[];
}

@Entity('predictions')
@Index(['runId', 'reportId'], { unique: true })
@ObjectType({ implements: Node, description: "One report's result in a run." })
export class Prediction extends Node {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ name: 'project_id', type: 'uuid' })
  projectId!: string;

  @Column({ name: 'run_id', type: 'uuid' })
  runId!: string;

  @Column({ name: 'report_id', type: 'uuid' })
  reportId!: string;

  /** The report's ordinal in its dataset: predictions list in report order. */
  @Column({ name: 'report_ordinal', type: 'integer' })
  reportOrdinal!: number;

  @Field(() => PredictionStatus)
  @Column({ type: 'varchar', length: 16 })
  status!: PredictionStatus;

  @Field(() => JSONScalar, { nullable: true, description: 'Normalised values by variable key.' })
  @Column({ type: 'jsonb', nullable: true })
  values!: Record<string, unknown> | null;

  @Column({ type: 'jsonb', default: () => "'{}'" })
  cells!: Record<string, StoredCell>;

  @Field(() => JSONScalar, { nullable: true, description: 'The JSON object found in the output, before normalisation.' })
  @Column({ type: 'jsonb', nullable: true })
  parsed!: Record<string, unknown> | null;

  @Field(() => String, { nullable: true })
  @Column({ type: 'text', nullable: true })
  raw!: string | null;

  @Field(() => String, { nullable: true })
  @Column({ type: 'text', nullable: true })
  reasoning!: string | null;

  @Field(() => JSONScalar, { nullable: true, description: 'Self-consistency samples or prompt-graph steps.' })
  @Column({ type: 'jsonb', nullable: true })
  samples!: unknown[] | null;

  @Field(() => String, { nullable: true })
  @Column({ name: 'finish_reason', type: 'text', nullable: true })
  finishReason!: string | null;

  @Field(() => Int, { nullable: true })
  @Column({ name: 'latency_ms', type: 'integer', nullable: true })
  latencyMs!: number | null;

  @Field(() => Int, { nullable: true })
  @Column({ name: 'prompt_tokens', type: 'integer', nullable: true })
  promptTokens!: number | null;

  @Field(() => Int, { nullable: true })
  @Column({ name: 'completion_tokens', type: 'integer', nullable: true })
  completionTokens!: number | null;

  @Field(() => Int)
  @Column({ type: 'integer', default: 1 })
  attempts!: number;

  @Field(() => String, { nullable: true, description: 'Why the prediction failed: a short message, secrets redacted.' })
  @Column({ type: 'text', nullable: true })
  error!: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'Code of the failure: HTTP_<status>, RATE_LIMITED, TIMEOUT, CONNECTION, UNREADABLE, DEADLINE, CONTEXT_TOO_LONG, …',
  })
  @Column({ name: 'error_code', type: 'varchar', length: 32, nullable: true })
  errorCode!: string | null;

  /** With evidence QUOTES: each variable's quotes aligned to the report (read through `fields`). */
  @Column({ type: 'jsonb', nullable: true })
  evidence!: Record<string, AlignedQuote[]> | null;

  @Field({ description: "The report was cut to the model's context before it was sent." })
  @Column({ name: 'input_truncated', type: 'boolean', default: false })
  inputTruncated!: boolean;

  @Field(() => DateTimeScalar)
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
