import { Arg, Args, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import type { GraphQLContext } from '../../graphql/context';
import { PageArgs } from '../../graphql/connection';
import { fromGlobalId, Node } from '../../graphql/node';
import { nestedConnection } from '../../graphql/child-connections';
import { endpointsPageByProject, experimentsPageByProject, modelsPageByProject, NODE_LOADERS, projectById, useCasesPageByProject } from '../../graphql/node-loaders';
import { EndpointConnection, ModelConnection } from '../endpoint/endpoint.types';
import { ExperimentConnection } from '../run/run.types';
import { UseCaseConnection, UseCaseSearchArgs } from '../use-case/use-case.types';
import { ApiKey } from '../api-key/api-key.entity';
import { Project } from './project.entity';
import { CreateProjectInput, CreateProjectPayload, ProjectConnection, Viewer } from './project.types';

@Resolver(() => Project)
export class ProjectResolver {
  @Query(() => Node, { nullable: true, description: 'Any object by its global ID; null when it does not exist or is not yours.' })
  async node(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<Node | null> {
    const decoded = fromGlobalId(id);
    if (!decoded) return null;
    if (decoded.type === 'ApiKey') return ctx.services.apiKeys.get(ctx.principal, decoded.id);
    return ctx.loaders.get(NODE_LOADERS[decoded.type]).load(decoded.id);
  }

  @Query(() => Viewer)
  async viewer(@Ctx() ctx: GraphQLContext): Promise<Viewer> {
    const apiKey = await ctx.services.apiKeys.get(ctx.principal, ctx.principal.keyId);
    const project = ctx.principal.projectId ? await ctx.loaders.get(projectById).load(ctx.principal.projectId) : null;
    return { apiKey: apiKey!, role: ctx.principal.role, serverAdmin: ctx.principal.serverAdmin, project };
  }

  @Query(() => ProjectConnection, { description: 'The projects the key can see: its own, or all for a server admin.' })
  projects(@Args() page: PageArgs, @Ctx() ctx: GraphQLContext) {
    return ctx.services.projects.list(ctx.principal, page);
  }

  @Query(() => Project, { nullable: true })
  project(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<Project | null> {
    const decoded = fromGlobalId(id);
    if (!decoded || decoded.type !== 'Project') return Promise.resolve(null);
    return ctx.loaders.get(projectById).load(decoded.id);
  }

  @Mutation(() => CreateProjectPayload, { description: 'Server admins only.' })
  createProject(@Arg('input') input: CreateProjectInput, @Ctx() ctx: GraphQLContext): Promise<CreateProjectPayload> {
    return ctx.services.projects.create(ctx.principal, input);
  }

  @FieldResolver(() => UseCaseConnection)
  useCases(@Root() project: Project, @Args() args: UseCaseSearchArgs, @Ctx() ctx: GraphQLContext) {
    if (args.search?.trim()) return ctx.services.useCases.list(project.id, args);
    return nestedConnection(ctx.loaders, useCasesPageByProject, project.id, args, () => ctx.services.useCases.list(project.id, args));
  }

  @FieldResolver(() => [ApiKey], { description: "The project's API keys (not their secrets), newest first; ADMIN only." })
  apiKeys(@Root() project: Project, @Ctx() ctx: GraphQLContext): Promise<ApiKey[]> {
    return ctx.services.apiKeys.listForProject(ctx.principal, project.id);
  }

  @FieldResolver(() => EndpointConnection)
  endpoints(@Root() project: Project, @Args() page: PageArgs, @Ctx() ctx: GraphQLContext) {
    return nestedConnection(ctx.loaders, endpointsPageByProject, project.id, page, () => ctx.services.endpoints.list(project.id, page));
  }

  @FieldResolver(() => ModelConnection)
  models(@Root() project: Project, @Args() page: PageArgs, @Ctx() ctx: GraphQLContext) {
    return nestedConnection(ctx.loaders, modelsPageByProject, project.id, page, () => ctx.services.endpoints.listModels(project.id, page));
  }

  @FieldResolver(() => ExperimentConnection)
  experiments(@Root() project: Project, @Args() page: PageArgs, @Ctx() ctx: GraphQLContext) {
    return nestedConnection(ctx.loaders, experimentsPageByProject, project.id, page, () => ctx.services.runs.listExperiments(project.id, page));
  }
}
