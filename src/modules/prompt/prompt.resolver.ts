import { Arg, Ctx, Mutation, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../../graphql/context';
import { decodeId } from '../../graphql/node';
import { CreatePromptInput, CreatePromptPayload } from './prompt.input';
import { Prompt } from './prompt.entity';

@Resolver(() => Prompt)
export class PromptResolver {
  @Mutation(() => CreatePromptPayload, { description: 'Creates version n+1 of the named prompt.' })
  async createPrompt(@Arg('input') input: CreatePromptInput, @Ctx() ctx: GraphQLContext): Promise<CreatePromptPayload> {
    return { prompt: await ctx.services.prompts.create(ctx.principal, decodeId(input.useCaseId, 'UseCase', 'useCaseId'), input) };
  }
}
