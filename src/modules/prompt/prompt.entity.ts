import { Field, InputType, Int, ObjectType } from 'type-graphql';
import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { Node } from '../../graphql/node';
import { DateTimeScalar, JSONScalar } from '../../graphql/scalars';

@ObjectType({ description: 'A worked example: input report, optional reasoning, expected output object.' })
@InputType('PromptExampleInput')
export class PromptExample {
  @Field(() => String, { nullable: true, description: 'Name to pick it by in one/few-shot runs.' })
  name?: string | null;

  @Field()
  input!: string;

  @Field(() => String, { nullable: true, description: 'Shown before the answer in chain-of-thought prompts.' })
  reasoning?: string | null;

  @Field(() => JSONScalar, { description: 'The expected JSON object.' })
  output!: Record<string, unknown>;
}

@Entity('prompts')
@Index(['useCaseId', 'name', 'version'], { unique: true })
@ObjectType({ implements: Node, description: 'A versioned prompt template of a use case; parts left null use the built-in layout.' })
export class Prompt extends Node {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ name: 'project_id', type: 'uuid' })
  projectId!: string;

  @Column({ name: 'use_case_id', type: 'uuid' })
  useCaseId!: string;

  @Field()
  @Column({ type: 'text' })
  name!: string;

  @Field(() => Int)
  @Column({ type: 'integer' })
  version!: number;

  @Field(() => String, { nullable: true })
  @Column({ type: 'text', nullable: true })
  system!: string | null;

  @Field(() => String, { nullable: true })
  @Column({ name: 'field_instructions', type: 'text', nullable: true })
  fieldInstructions!: string | null;

  @Field(() => String, { nullable: true })
  @Column({ type: 'text', nullable: true })
  task!: string | null;

  @Field(() => String, { nullable: true })
  @Column({ name: 'example_intro', type: 'text', nullable: true })
  exampleIntro!: string | null;

  @Field(() => String, { nullable: true })
  @Column({ name: 'final_instruction', type: 'text', nullable: true })
  final!: string | null;

  @Field(() => [PromptExample])
  @Column({ type: 'jsonb', default: () => "'[]'" })
  examples!: PromptExample[];

  @Field(() => JSONScalar, { description: 'Strategy-specific settings (e.g. guided, merge messages).' })
  @Column({ type: 'jsonb', default: () => "'{}'" })
  settings!: Record<string, unknown>;

  @Field(() => DateTimeScalar)
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
