import { Field, ObjectType } from 'type-graphql';
import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { Node } from '../../graphql/node';
import { DateTimeScalar, JSONScalar } from '../../graphql/scalars';

@Entity('experiments')
@ObjectType({ implements: Node, description: 'A grid of runs (models × prompts × strategies) over one dataset.' })
export class Experiment extends Node {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ name: 'project_id', type: 'uuid' })
  projectId!: string;

  @Column({ name: 'use_case_id', type: 'uuid' })
  useCaseId!: string;

  @Column({ name: 'dataset_id', type: 'uuid' })
  datasetId!: string;

  @Field()
  @Column({ type: 'text' })
  name!: string;

  @Field(() => JSONScalar)
  @Column({ type: 'jsonb', default: () => "'{}'" })
  config!: Record<string, unknown>;

  @Field(() => DateTimeScalar)
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
