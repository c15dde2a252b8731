import { Arg, Args, Ctx, FieldResolver, Mutation, Resolver, Root } from 'type-graphql';
import type { GraphQLContext } from '../../graphql/context';
import { PageArgs } from '../../graphql/connection';
import { decodeId, toGlobalId } from '../../graphql/node';
import { nestedConnection } from '../../graphql/child-connections';
import { datasetsPageByUseCase, promptsPageByUseCase, runsPageByUseCase, variablesByUseCase } from '../../graphql/node-loaders';
import { DatasetConnection } from '../dataset/dataset.types';
import { PromptConnection } from '../prompt/prompt.types';
import { RunFilter } from '../run/run.input';
import { RunConnection } from '../run/run.types';
import {
  CreateUseCaseInput,
  CreateUseCasePayload,
  DeleteUseCaseInput,
  DeleteUseCasePayload,
  UpdateUseCaseInput,
  UpdateUseCasePayload,
} from './use-case.input';
import { UseCase } from './use-case.entity';
import { Variable } from './variable.entity';

@Resolver(() => UseCase)
export class UseCaseResolver {
  @Mutation(() => CreateUseCasePayload)
  async createUseCase(@Arg('input') input: CreateUseCaseInput, @Ctx() ctx: GraphQLContext): Promise<CreateUseCasePayload> {
    return { useCase: await ctx.services.useCases.create(ctx.principal, decodeId(input.projectId, 'Project', 'projectId'), input) };
  }

  @Mutation(() => UpdateUseCasePayload, { description: 'Changing variables renormalises stored annotations and predictions.' })
  async updateUseCase(@Arg('input') input: UpdateUseCaseInput, @Ctx() ctx: GraphQLContext): Promise<UpdateUseCasePayload> {
    return { useCase: await ctx.services.useCases.update(ctx.principal, decodeId(input.id, 'UseCase', 'id'), input) };
  }

  @Mutation(() => DeleteUseCasePayload, { description: 'ADMIN only: deletes its variables, datasets, prompts and runs too.' })
  async deleteUseCase(@Arg('input') input: DeleteUseCaseInput, @Ctx() ctx: GraphQLContext): Promise<DeleteUseCasePayload> {
    const id = decodeId(input.id, 'UseCase', 'id');
    await ctx.services.useCases.delete(ctx.principal, id);
    return { deletedId: toGlobalId('UseCase', id) };
  }

  @FieldResolver(() => [Variable], { description: 'In order.' })
  variables(@Root() useCase: UseCase, @Ctx() ctx: GraphQLContext): Promise<Variable[]> {
    return ctx.loaders.get(variablesByUseCase).load(useCase.id);
  }

  @FieldResolver(() => DatasetConnection)
  datasets(@Root() useCase: UseCase, @Args() page: PageArgs, @Ctx() ctx: GraphQLContext) {
    return nestedConnection(ctx.loaders, datasetsPageByUseCase, useCase.id, page, () => ctx.services.datasets.list(useCase.id, page));
  }

  @FieldResolver(() => PromptConnection)
  prompts(@Root() useCase: UseCase, @Args() page: PageArgs, @Ctx() ctx: GraphQLContext) {
    return nestedConnection(ctx.loaders, promptsPageByUseCase, useCase.id, page, () => ctx.services.prompts.list(useCase.id, page));
  }

  @FieldResolver(() => RunConnection)
  runs(
    @Root() useCase: UseCase,
    @Args() page: PageArgs,
    @Arg('filter', () => RunFilter, { nullable: true }) filter: RunFilter | null,
    @Ctx() ctx: GraphQLContext,
  ) {
    const unfiltered = !filter || Object.values(filter).every((v) => v === null || v === undefined);
    if (unfiltered) return nestedConnection(ctx.loaders, runsPageByUseCase, useCase.id, page, () => ctx.services.runs.list(useCase.id, page, {}));
    return ctx.services.runs.list(useCase.id, page, {
      ...(filter?.datasetId ? { datasetId: decodeId(filter.datasetId, 'Dataset', 'filter.datasetId') } : {}),
      ...(filter?.modelId ? { modelId: decodeId(filter.modelId, 'Model', 'filter.modelId') } : {}),
      strategy: filter?.strategy ?? null,
      status: filter?.status ?? null,
      source: filter?.source ?? null,
    });
  }
}
