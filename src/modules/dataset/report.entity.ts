import { Field, ObjectType } from 'type-graphql';
import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { Node } from '../../graphql/node';
import { DateTimeScalar, JSONScalar } from '../../graphql/scalars';

@Entity('reports')
@Index(['datasetId', 'externalId'], { unique: true })
@ObjectType({ implements: Node, description: 'One narrative report.' })
export class Report extends Node {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ name: 'project_id', type: 'uuid' })
  projectId!: string;

  @Column({ name: 'dataset_id', type: 'uuid' })
  datasetId!: string;

  /** Import order inside the dataset: the stable order of listings and of bootstrap indices. */
  @Column({ type: 'integer' })
  ordinal!: number;

  @Field({ description: 'The id the report has outside ReportQL (patient, file).' })
  @Column({ name: 'external_id', type: 'text' })
  externalId!: string;

  @Field()
  @Column({ type: 'text' })
  text!: string;

  @Field(() => JSONScalar, { nullable: true })
  @Column({ type: 'jsonb', default: () => "'{}'" })
  metadata!: Record<string, unknown>;

  @Field(() => DateTimeScalar)
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
