import { Field, Float, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import type { VariableType as AnalyticsVariableType } from '../../analytics/types';
import { Node } from '../../graphql/node';
import { JSONScalar } from '../../graphql/scalars';

export enum VariableType {
  CATEGORICAL = 'CATEGORICAL',
  BINARY = 'BINARY',
  NUMERIC = 'NUMERIC',
  FREE_TEXT = 'FREE_TEXT',
  LIST = 'LIST',
  EXACT_STRING = 'EXACT_STRING',
}
registerEnumType(VariableType, { name: 'VariableType', description: 'Decides normalisation and metric (docs/scoring.md §1).' });

// The GraphQL enum and the analytics union must stay the same set.
const sameSet: Record<AnalyticsVariableType, VariableType> = {
  CATEGORICAL: VariableType.CATEGORICAL,
  BINARY: VariableType.BINARY,
  NUMERIC: VariableType.NUMERIC,
  FREE_TEXT: VariableType.FREE_TEXT,
  LIST: VariableType.LIST,
  EXACT_STRING: VariableType.EXACT_STRING,
};
void sameSet;

export interface VariableExtractionMeta {
  frameworkType?: string | null;
  structure?: unknown[] | null;
  templateValue?: unknown;
  frameworkExtra?: Record<string, unknown> | null;
}

@ObjectType({ description: 'A prompt-graph condition: the step runs only if variable `key` took one of `values`.' })
@InputType('VariableConditionInput')
export class VariableCondition {
  @Field({ description: 'Key of a variable of an earlier graph step.' })
  key!: string;

  @Field(() => [String], { description: 'Compared with the normalised value, case-insensitively.' })
  values!: string[];
}

@Entity('variables')
@Index(['useCaseId', 'key'], { unique: true })
@ObjectType({ implements: Node, description: 'One field to extract.' })
export class Variable extends Node {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ name: 'use_case_id', type: 'uuid' })
  useCaseId!: string;

  @Column({ name: 'project_id', type: 'uuid' })
  projectId!: string;

  @Field({ description: 'The JSON key in the model output.' })
  @Column({ type: 'text' })
  key!: string;

  @Field(() => VariableType)
  @Column({ type: 'varchar', length: 16 })
  type!: VariableType;

  @Field(() => String, { nullable: true, description: 'Instructions to the model for this field.' })
  @Column({ type: 'text', nullable: true })
  description!: string | null;

  @Field(() => String, { nullable: true, description: 'How to fill the field in; lines starting "- " are bullets.' })
  @Column({ type: 'text', nullable: true })
  instructions!: string | null;

  /** Prompt details kept for the MedicalRecordLLM round trip: type name, structure, template value, unknown keys. */
  @Column({ type: 'jsonb', default: () => "'{}'" })
  extraction!: VariableExtractionMeta;

  @Field(() => [String], { nullable: true })
  @Column({ type: 'jsonb', nullable: true })
  options!: string[] | null;

  @Field(() => JSONScalar, { nullable: true, description: 'Alias → option, e.g. {"ja": "Yes"}.' })
  @Column({ type: 'jsonb', nullable: true })
  aliases!: Record<string, string> | null;

  @Field(() => JSONScalar, { nullable: true, description: 'Option → collapsed class, e.g. {"4A": "4"}.' })
  @Column({ name: 'collapse_map', type: 'jsonb', nullable: true })
  collapseMap!: Record<string, string> | null;

  @Field(() => JSONScalar, { nullable: true, description: 'Value a skipped prompt-graph step takes.' })
  @Column({ name: 'default_value', type: 'jsonb', nullable: true })
  default!: unknown;

  @Field(() => [String], { nullable: true, description: 'Overrides the use case missing tokens for this variable.' })
  @Column({ name: 'missing_tokens', type: 'text', array: true, nullable: true })
  missingTokens!: string[] | null;

  @Field(() => Float, { nullable: true, description: 'Absolute tolerance of NUMERIC equality.' })
  @Column({ type: 'double precision', nullable: true })
  tolerance!: number | null;

  @Field(() => Float)
  @Column({ type: 'double precision', default: 1 })
  weight!: number;

  @Field(() => Int)
  @Column({ name: 'position', type: 'integer' })
  order!: number;

  @Field(() => Int, { nullable: true })
  @Column({ name: 'graph_step', type: 'integer', nullable: true })
  graphStep!: number | null;

  @Field(() => VariableCondition, { nullable: true })
  @Column({ name: 'depends_on', type: 'jsonb', nullable: true })
  dependsOn!: VariableCondition | null;
}
