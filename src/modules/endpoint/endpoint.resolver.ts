import { Ctx, FieldResolver, Resolver, Root } from 'type-graphql';
import type { GraphQLContext } from '../../graphql/context';
import { endpointById, modelsByEndpoint } from '../../graphql/node-loaders';
import { Endpoint } from './endpoint.entity';
import { Model } from './model.entity';

@Resolver(() => Endpoint)
export class EndpointResolver {
  @FieldResolver(() => [Model], { description: 'Models the endpoint served at the last probe (and earlier ones, marked unavailable).' })
  models(@Root() endpoint: Endpoint, @Ctx() ctx: GraphQLContext): Promise<Model[]> {
    return ctx.loaders.get(modelsByEndpoint).load(endpoint.id);
  }
}

@Resolver(() => Model)
export class ModelResolver {
  @FieldResolver(() => Endpoint, { nullable: true })
  endpoint(@Root() model: Model, @Ctx() ctx: GraphQLContext): Promise<Endpoint | null> | null {
    return model.endpointId ? ctx.loaders.get(endpointById).load(model.endpointId) : null;
  }
}
