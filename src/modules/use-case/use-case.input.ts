import { Field, Float, ID, InputType, Int, ObjectType } from 'type-graphql';
import { JSONScalar } from '../../graphql/scalars';
import { UseCase } from './use-case.entity';
import { VariableCondition, VariableType } from './variable.entity';

@InputType({ description: 'A variable of a use case; its position in the list is its order.' })
export class VariableInput {
  @Field() key!: string;
  @Field(() => VariableType) type!: VariableType;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => String, { nullable: true, description: 'How to fill the field in (framework: constraints).' }) instructions?: string | null;
  @Field(() => [String], { nullable: true }) options?: string[] | null;
  @Field(() => JSONScalar, { nullable: true, description: 'Alias → option.' }) aliases?: unknown;
  @Field(() => JSONScalar, { nullable: true, description: 'Option → collapsed class.' }) collapseMap?: unknown;
  @Field(() => JSONScalar, { nullable: true }) default?: unknown;
  @Field(() => [String], { nullable: true }) missingTokens?: string[] | null;
  @Field(() => Float, { nullable: true }) tolerance?: number | null;
  @Field(() => Float, { nullable: true, description: 'Default 1.' }) weight?: number | null;
  @Field(() => Int, { nullable: true }) graphStep?: number | null;
  @Field(() => VariableCondition, { nullable: true }) dependsOn?: VariableCondition | null;
}

@InputType()
export class CreateUseCaseInput {
  @Field(() => ID) projectId!: string;
  @Field() name!: string;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => String, { nullable: true }) language?: string | null;
  @Field(() => String, { nullable: true }) reportType?: string | null;
  @Field(() => [String], { nullable: true }) tags?: string[] | null;
  @Field(() => [String], { nullable: true, description: 'Null: the defaults of docs/scoring.md §1.' })
  missingTokens?: string[] | null;
  @Field(() => [VariableInput]) variables!: VariableInput[];
}

@InputType({
  description:
    'Fields left out stay as they are; `variables`, when given, is the new full list (matched by key). Leaving a variable out deletes it and its annotations, which needs the ADMIN role.',
})
export class UpdateUseCaseInput {
  @Field(() => ID) id!: string;
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => String, { nullable: true }) language?: string | null;
  @Field(() => String, { nullable: true }) reportType?: string | null;
  @Field(() => [String], { nullable: true }) tags?: string[] | null;
  @Field(() => [String], { nullable: true }) missingTokens?: string[] | null;
  @Field(() => [VariableInput], { nullable: true }) variables?: VariableInput[] | null;
}

@InputType()
export class DeleteUseCaseInput {
  @Field(() => ID) id!: string;
}

@ObjectType()
export class CreateUseCasePayload {
  @Field(() => UseCase) useCase!: UseCase;
}

@ObjectType()
export class UpdateUseCasePayload {
  @Field(() => UseCase) useCase!: UseCase;
}

@ObjectType()
export class DeleteUseCasePayload {
  @Field(() => ID, { description: 'Global ID of the deleted use case.' }) deletedId!: string;
}
