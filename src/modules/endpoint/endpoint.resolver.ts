import { Arg, Ctx, FieldResolver, Mutation, Resolver, Root } from 'type-graphql';
import type { GraphQLContext } from '../../graphql/context';
import { decodeId } from '../../graphql/node';
import { endpointById, modelsByEndpoint } from '../../graphql/node-loaders';
import { JSONScalar } from '../../graphql/scalars';
import { Endpoint, EndpointHealth } from './endpoint.entity';
import {
  RefreshEndpointInput,
  RefreshEndpointPayload,
  RegisterEndpointInput,
  RegisterEndpointPayload,
  UpdateModelInput,
  UpdateModelPayload,
} from './endpoint.input';
import { Model } from './model.entity';

@Resolver(() => Endpoint)
export class EndpointResolver {
  @Mutation(() => RegisterEndpointPayload, { description: 'Registers an OpenAI-compatible server and probes its models and capabilities.' })
  registerEndpoint(@Arg('input') input: RegisterEndpointInput, @Ctx() ctx: GraphQLContext): Promise<RegisterEndpointPayload> {
    return ctx.services.endpoints.register(ctx.principal, decodeId(input.projectId, 'Project', 'projectId'), input, ctx.signal);
  }

  @Mutation(() => RefreshEndpointPayload, { description: 'Probes the endpoint again: health, served models, capabilities.' })
  refreshEndpoint(@Arg('input') input: RefreshEndpointInput, @Ctx() ctx: GraphQLContext): Promise<RefreshEndpointPayload> {
    return ctx.services.endpoints.refresh(ctx.principal, decodeId(input.id, 'Endpoint', 'id'), input, ctx.signal);
  }

  @FieldResolver(() => EndpointHealth, {
    description: 'Last known state of the endpoint. A VIEWER sees the status; latency and error (what a probe found out about the address) need EDITOR.',
  })
  health(@Root() endpoint: Endpoint, @Ctx() ctx: GraphQLContext): EndpointHealth {
    return ctx.services.endpoints.healthShownTo(ctx.principal, endpoint);
  }

  @FieldResolver(() => JSONScalar, { description: 'Probed capabilities, e.g. {"jsonSchema": true, "thinkingToggle": false}; empty for a VIEWER.' })
  capabilities(@Root() endpoint: Endpoint, @Ctx() ctx: GraphQLContext): Record<string, unknown> {
    return ctx.services.endpoints.capabilitiesShownTo(ctx.principal, endpoint);
  }

  @FieldResolver(() => [Model], { description: 'Models the endpoint served at the last probe (and earlier ones, marked unavailable).' })
  models(@Root() endpoint: Endpoint, @Ctx() ctx: GraphQLContext): Promise<Model[]> {
    return ctx.loaders.get(modelsByEndpoint).load(endpoint.id);
  }
}

@Resolver(() => Model)
export class ModelResolver {
  @Mutation(() => UpdateModelPayload, { description: 'Model metadata used by group summaries and run defaults.' })
  async updateModel(@Arg('input') input: UpdateModelInput, @Ctx() ctx: GraphQLContext): Promise<UpdateModelPayload> {
    return { model: await ctx.services.endpoints.updateModel(ctx.principal, decodeId(input.id, 'Model', 'id'), input) };
  }

  @FieldResolver(() => Endpoint, { nullable: true })
  endpoint(@Root() model: Model, @Ctx() ctx: GraphQLContext): Promise<Endpoint | null> | null {
    return model.endpointId ? ctx.loaders.get(endpointById).load(model.endpointId) : null;
  }
}
