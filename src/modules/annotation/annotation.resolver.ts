import { Arg, Ctx, FieldResolver, Mutation, Resolver, Root } from 'type-graphql';
import type { GraphQLContext } from '../../graphql/context';
import { decodeId } from '../../graphql/node';
import { annotatorById, variableById } from '../../graphql/node-loaders';
import { Variable } from '../use-case/variable.entity';
import { Annotation } from './annotation.entity';
import { ImportAnnotationsInput, ImportAnnotationsPayload } from './annotation.input';
import { Annotator } from './annotator.entity';

@Resolver(() => Annotation)
export class AnnotationResolver {
  @Mutation(() => ImportAnnotationsPayload, { description: 'One annotator per import; all or nothing.' })
  importAnnotations(@Arg('input') input: ImportAnnotationsInput, @Ctx() ctx: GraphQLContext): Promise<ImportAnnotationsPayload> {
    return ctx.services.annotations.importAnnotations(ctx.principal, decodeId(input.datasetId, 'Dataset', 'datasetId'), input, ctx.inlineFiles, ctx.deadline);
  }

  @FieldResolver(() => Annotator)
  async annotator(@Root() annotation: Annotation, @Ctx() ctx: GraphQLContext): Promise<Annotator | null> {
    return ctx.loaders.get(annotatorById).load(annotation.annotatorId);
  }

  @FieldResolver(() => Variable)
  async variable(@Root() annotation: Annotation, @Ctx() ctx: GraphQLContext): Promise<Variable | null> {
    return ctx.loaders.get(variableById).load(annotation.variableId);
  }
}
