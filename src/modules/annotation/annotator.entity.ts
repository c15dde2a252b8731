import { Field, ObjectType, registerEnumType } from 'type-graphql';
import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { Node } from '../../graphql/node';
import { DateTimeScalar } from '../../graphql/scalars';

export enum AnnotatorKind {
  HUMAN = 'HUMAN',
  CONSENSUS = 'CONSENSUS',
}
registerEnumType(AnnotatorKind, { name: 'AnnotatorKind' });

@Entity('annotators')
@Index(['datasetId', 'name'], { unique: true })
@Index('annotators_one_reference_per_dataset', ['datasetId'], { unique: true, where: '"is_reference"' })
@ObjectType({ implements: Node, description: 'A rater of a dataset: a person or a consensus.' })
export class Annotator extends Node {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ name: 'project_id', type: 'uuid' })
  projectId!: string;

  @Column({ name: 'dataset_id', type: 'uuid' })
  datasetId!: string;

  @Field()
  @Column({ type: 'text' })
  name!: string;

  @Field(() => AnnotatorKind)
  @Column({ type: 'varchar', length: 16, default: AnnotatorKind.HUMAN })
  kind!: AnnotatorKind;

  @Field({ description: 'The reference standard models are scored against.' })
  @Column({ name: 'is_reference', type: 'boolean', default: false })
  isReference!: boolean;

  @Field(() => DateTimeScalar)
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
