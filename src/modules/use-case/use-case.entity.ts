import { Field, ObjectType } from 'type-graphql';
import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import { DEFAULT_MISSING_TOKENS } from '../../analytics/normalise';
import { Node } from '../../graphql/node';
import { DateTimeScalar } from '../../graphql/scalars';

@Entity('use_cases')
@Index(['projectId', 'name'], { unique: true })
@ObjectType({ implements: Node, description: 'An extraction task, e.g. melanoma pathology reports in Dutch.' })
export class UseCase extends Node {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ name: 'project_id', type: 'uuid' })
  projectId!: string;

  @Field()
  @Column({ type: 'text' })
  name!: string;

  @Field(() => String, { nullable: true })
  @Column({ type: 'text', nullable: true })
  description!: string | null;

  @Field(() => String, { nullable: true, description: 'BCP-47 language tag of the reports, e.g. nl, en, cs.' })
  @Column({ type: 'text', nullable: true })
  language!: string | null;

  @Field(() => String, { nullable: true, description: 'e.g. pathology, radiology.' })
  @Column({ name: 'report_type', type: 'text', nullable: true })
  reportType!: string | null;

  @Field(() => [String])
  @Column({ type: 'text', array: true, default: () => "'{}'" })
  tags!: string[];

  /** Null: the defaults of docs/scoring.md §1. */
  @Column({ name: 'missing_tokens', type: 'text', array: true, nullable: true })
  customMissingTokens!: string[] | null;

  @Field(() => [String], { description: 'Answers read as MISSING (case-insensitive).' })
  get missingTokens(): string[] {
    return this.customMissingTokens ?? [...DEFAULT_MISSING_TOKENS];
  }

  @Field(() => DateTimeScalar)
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Field(() => DateTimeScalar)
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
