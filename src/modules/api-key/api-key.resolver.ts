import { Arg, Ctx, Field, FieldResolver, ID, InputType, Mutation, ObjectType, Resolver, Root } from 'type-graphql';
import type { GraphQLContext } from '../../graphql/context';
import { decodeId } from '../../graphql/node';
import { loggableError } from '../../logger';
import { projectById } from '../../graphql/node-loaders';
import { Project } from '../project/project.entity';
import { ApiKey, Role } from './api-key.entity';

@InputType()
export class CreateApiKeyInput {
  @Field(() => ID, { nullable: true, description: 'The project; left out only for a server admin key.' })
  projectId?: string | null;
  @Field() name!: string;
  @Field(() => Role, { nullable: true }) role?: Role | null;
  @Field({ defaultValue: false, description: 'A server-wide admin key (server admins only).' }) serverAdmin!: boolean;
}

@ObjectType()
export class CreateApiKeyPayload {
  @Field(() => ApiKey) apiKey!: ApiKey;
  @Field({ description: 'Shown once; only its hash is stored.' }) secret!: string;
}

@InputType()
export class RevokeApiKeyInput {
  @Field(() => ID) id!: string;
}

@ObjectType()
export class RevokeApiKeyPayload {
  @Field(() => ApiKey) apiKey!: ApiKey;
}

@Resolver(() => ApiKey)
export class ApiKeyResolver {
  @Mutation(() => CreateApiKeyPayload, { description: 'Project ADMINs issue keys of their project.' })
  async createApiKey(@Arg('input') input: CreateApiKeyInput, @Ctx() ctx: GraphQLContext): Promise<CreateApiKeyPayload> {
    const issued = await ctx.services.apiKeys.create(ctx.principal, {
      projectId: input.projectId ? decodeId(input.projectId, 'Project', 'projectId') : null,
      name: input.name,
      role: input.role ?? null,
      serverAdmin: input.serverAdmin,
    });
    return { apiKey: issued.apiKey, secret: issued.secret };
  }

  @Mutation(() => RevokeApiKeyPayload, { description: 'A revoked key is refused from the next request on.' })
  async revokeApiKey(@Arg('input') input: RevokeApiKeyInput, @Ctx() ctx: GraphQLContext): Promise<RevokeApiKeyPayload> {
    const apiKey = await ctx.services.apiKeys.revoke(ctx.principal, decodeId(input.id, 'ApiKey', 'id'));
    // Every server process closes the WebSocket connections that use the key.
    await ctx.services.bus.publish({ kind: 'keyRevoked', keyId: apiKey.id }).catch((error: unknown) => ctx.logger.warn({ err: loggableError(error) }, 'publishing a key revocation failed'));
    return { apiKey };
  }

  @FieldResolver(() => Project, { nullable: true })
  project(@Root() key: ApiKey, @Ctx() ctx: GraphQLContext): Promise<Project | null> | null {
    return key.projectId ? ctx.loaders.get(projectById).load(key.projectId) : null;
  }
}
