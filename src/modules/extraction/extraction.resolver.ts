import { Arg, Ctx, FieldResolver, Mutation, Resolver, Root } from 'type-graphql';
import type { GraphQLContext } from '../../graphql/context';
import { decodeId } from '../../graphql/node';
import { UseCase } from '../use-case/use-case.entity';
import { ConfigFormat, ExtractInput, ExtractPayload, ImportUseCaseConfigInput, ImportUseCaseConfigPayload } from './extraction.input';

@Resolver(() => UseCase)
export class ExtractionResolver {
  @Mutation(() => ExtractPayload, { description: 'Extracts one text now, with a model, prompt and strategy; nothing is stored. Ends at its deadline or when the client goes away.' })
  extract(@Arg('input') input: ExtractInput, @Ctx() ctx: GraphQLContext): Promise<ExtractPayload> {
    return ctx.services.extraction.extract(
      ctx.principal,
      decodeId(input.useCaseId, 'UseCase', 'useCaseId'),
      decodeId(input.modelId, 'Model', 'modelId'),
      input.promptId ? decodeId(input.promptId, 'Prompt', 'promptId') : null,
      input,
      ctx.signal,
    );
  }

  @Mutation(() => ImportUseCaseConfigPayload, { description: 'A MedicalRecordLLM prompt YAML (+ model YAML) → use case, variables and prompt.' })
  importUseCaseConfig(@Arg('input') input: ImportUseCaseConfigInput, @Ctx() ctx: GraphQLContext): Promise<ImportUseCaseConfigPayload> {
    return ctx.services.extraction.importConfig(ctx.principal, decodeId(input.projectId, 'Project', 'projectId'), input);
  }

  @FieldResolver(() => String, { description: 'The use case as a MedicalRecordLLM prompt YAML.' })
  exportConfig(
    @Root() useCase: UseCase,
    @Arg('format', () => ConfigFormat, { defaultValue: ConfigFormat.MEDICAL_RECORD_LLM_YAML }) _format: ConfigFormat,
    @Ctx() ctx: GraphQLContext,
  ): Promise<string> {
    return ctx.services.extraction.exportConfig(ctx.principal, useCase);
  }
}
