import { Field, Float, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { Node } from '../../graphql/node';
import { DateTimeScalar } from '../../graphql/scalars';

export enum SizeClass {
  TINY = 'TINY',
  SMALL = 'SMALL',
  MEDIUM = 'MEDIUM',
  LARGE = 'LARGE',
}
registerEnumType(SizeClass, { name: 'SizeClass', description: 'TINY < 4B ≤ SMALL < 40B ≤ MEDIUM ≤ 150B < LARGE.' });

export enum Specialisation {
  GENERAL = 'GENERAL',
  MEDICAL = 'MEDICAL',
}
registerEnumType(Specialisation, { name: 'Specialisation' });

@ObjectType({ description: 'Decoding parameters; unset ones are left to the server.' })
@InputType('SamplingParamsInput')
export class SamplingParams {
  @Field(() => Float, { nullable: true }) temperature?: number | null;
  @Field(() => Float, { nullable: true }) topP?: number | null;
  @Field(() => Int, { nullable: true }) topK?: number | null;
  @Field(() => Int, { nullable: true }) maxTokens?: number | null;
  @Field(() => Int, { nullable: true }) seed?: number | null;
  @Field(() => Float, { nullable: true }) frequencyPenalty?: number | null;
  @Field(() => Float, { nullable: true }) presencePenalty?: number | null;
  @Field(() => Float, { nullable: true }) repetitionPenalty?: number | null;
}

@Entity('models')
@Index('models_endpoint_served_name', ['endpointId', 'servedName'], { unique: true, where: '"endpoint_id" IS NOT NULL' })
@Index('models_imported_served_name', ['projectId', 'servedName'], { unique: true, where: '"endpoint_id" IS NULL' })
@ObjectType({ implements: Node, description: 'A served model; endpoint is null for models known only from imported runs.' })
export class Model extends Node {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ name: 'project_id', type: 'uuid' })
  projectId!: string;

  @Column({ name: 'endpoint_id', type: 'uuid', nullable: true })
  endpointId!: string | null;

  @Field({ description: 'The name the endpoint serves it under (the `model` of requests).' })
  @Column({ name: 'served_name', type: 'text' })
  servedName!: string;

  @Field(() => String, { nullable: true })
  @Column({ name: 'hf_repo', type: 'text', nullable: true })
  hfRepo!: string | null;

  @Field(() => String, { nullable: true })
  @Column({ type: 'text', nullable: true })
  family!: string | null;

  @Field(() => Float, { nullable: true, description: 'Total parameters, billions.' })
  @Column({ name: 'parameter_count_b', type: 'double precision', nullable: true })
  parameterCountB!: number | null;

  @Field(() => Float, { nullable: true, description: 'Active parameters per token (mixture of experts), billions.' })
  @Column({ name: 'active_parameter_count_b', type: 'double precision', nullable: true })
  activeParameterCountB!: number | null;

  @Field(() => SizeClass, { nullable: true })
  @Column({ name: 'size_class', type: 'varchar', length: 8, nullable: true })
  sizeClass!: SizeClass | null;

  @Field(() => Specialisation, { nullable: true })
  @Column({ type: 'varchar', length: 8, nullable: true })
  specialisation!: Specialisation | null;

  @Field(() => String, { nullable: true })
  @Column({ type: 'text', nullable: true })
  quantisation!: string | null;

  @Field()
  @Column({ name: 'supports_thinking', type: 'boolean', default: false })
  supportsThinking!: boolean;

  @Field(() => Int, { nullable: true, description: 'Context length the server reports.' })
  @Column({ name: 'max_model_len', type: 'integer', nullable: true })
  maxModelLen!: number | null;

  @Field(() => SamplingParams)
  @Column({ name: 'default_sampling', type: 'jsonb', default: () => "'{}'" })
  defaultSampling!: SamplingParams;

  @Field({ description: 'Still listed by its endpoint at the last probe.' })
  @Column({ type: 'boolean', default: true })
  available!: boolean;

  @Field(() => DateTimeScalar)
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
