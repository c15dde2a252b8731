import { Field, ObjectType } from 'type-graphql';
import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { Node } from '../../graphql/node';
import { DateTimeScalar } from '../../graphql/scalars';

@Entity('datasets')
@Index(['useCaseId', 'name'], { unique: true })
@ObjectType({ implements: Node, description: 'A set of reports of one use case.' })
export class Dataset extends Node {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ name: 'project_id', type: 'uuid' })
  projectId!: string;

  @Column({ name: 'use_case_id', type: 'uuid' })
  useCaseId!: string;

  @Field()
  @Column({ type: 'text' })
  name!: string;

  @Field(() => String, { nullable: true })
  @Column({ type: 'text', nullable: true })
  language!: string | null;

  @Field(() => String, { nullable: true, description: 'Licence and provenance of the reports.' })
  @Column({ type: 'text', nullable: true })
  provenance!: string | null;

  @Field(() => DateTimeScalar)
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
