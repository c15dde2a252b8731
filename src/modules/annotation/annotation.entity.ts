import { Field, ObjectType, registerEnumType } from 'type-graphql';
import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import type { InvalidCategory as AnalyticsInvalidCategory } from '../../analytics/types';
import { Node } from '../../graphql/node';
import { JSONScalar } from '../../graphql/scalars';

export enum ValueStatus {
  VALUE = 'VALUE',
  MISSING = 'MISSING',
  INVALID = 'INVALID',
}
registerEnumType(ValueStatus, { name: 'ValueStatus', description: 'Outcome of normalisation (docs/scoring.md §1).' });

export enum InvalidCategory {
  MISSING = 'MISSING',
  OUT_OF_FORMAT = 'OUT_OF_FORMAT',
  MULTI_VALUED = 'MULTI_VALUED',
  AMBIGUOUS = 'AMBIGUOUS',
  OTHER = 'OTHER',
}
registerEnumType(InvalidCategory, { name: 'InvalidCategory', description: 'Invalid-output taxonomy (docs/scoring.md §3).' });

const sameSet: Record<AnalyticsInvalidCategory, InvalidCategory> = {
  MISSING: InvalidCategory.MISSING,
  OUT_OF_FORMAT: InvalidCategory.OUT_OF_FORMAT,
  MULTI_VALUED: InvalidCategory.MULTI_VALUED,
  AMBIGUOUS: InvalidCategory.AMBIGUOUS,
  OTHER: InvalidCategory.OTHER,
};
void sameSet;

@Entity('annotations')
@Index(['annotatorId', 'reportId', 'variableId'], { unique: true })
@Index(['reportId'])
@ObjectType({ implements: Node, description: "One annotator's value for one variable of one report." })
export class Annotation extends Node {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ name: 'project_id', type: 'uuid' })
  projectId!: string;

  @Column({ name: 'dataset_id', type: 'uuid' })
  datasetId!: string;

  @Column({ name: 'annotator_id', type: 'uuid' })
  annotatorId!: string;

  @Column({ name: 'report_id', type: 'uuid' })
  reportId!: string;

  @Column({ name: 'variable_id', type: 'uuid' })
  variableId!: string;

  @Field(() => JSONScalar, { nullable: true, description: 'The value as imported.' })
  @Column({ type: 'jsonb', nullable: true })
  raw!: unknown;

  @Field(() => JSONScalar, { nullable: true, description: 'Normalised value; null when MISSING or INVALID.' })
  @Column({ type: 'jsonb', nullable: true })
  value!: unknown;

  @Field(() => ValueStatus)
  @Column({ type: 'varchar', length: 8 })
  status!: ValueStatus;

  @Field(() => InvalidCategory, { nullable: true })
  @Column({ name: 'invalid_category', type: 'varchar', length: 16, nullable: true })
  invalidCategory!: InvalidCategory | null;
}
