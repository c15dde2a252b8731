import { Field, ID, InputType, ObjectType } from 'type-graphql';
import { JSONScalar } from '../../graphql/scalars';
import { Prompt, PromptExample } from './prompt.entity';

@InputType({ description: 'Parts left out use the built-in layout of the extraction paper (Table A3).' })
export class CreatePromptInput {
  @Field(() => ID) useCaseId!: string;
  @Field({ description: 'A new version is created when the name exists.' }) name!: string;
  @Field(() => String, { nullable: true }) system?: string | null;
  @Field(() => String, { nullable: true }) fieldInstructions?: string | null;
  @Field(() => String, { nullable: true }) task?: string | null;
  @Field(() => String, { nullable: true }) exampleIntro?: string | null;
  @Field(() => String, { nullable: true }) final?: string | null;
  @Field(() => [PromptExample], { nullable: true }) examples?: PromptExample[] | null;
  @Field(() => JSONScalar, { nullable: true }) settings?: Record<string, unknown> | null;
}

@ObjectType()
export class CreatePromptPayload {
  @Field(() => Prompt) prompt!: Prompt;
}
