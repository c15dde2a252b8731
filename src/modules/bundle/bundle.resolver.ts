import { Arg, Ctx, Mutation, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../../graphql/context';
import { ImportProjectBundleInput, ImportProjectBundlePayload } from './bundle.types';

@Resolver()
export class BundleResolver {
  @Mutation(() => ImportProjectBundlePayload, {
    description: 'Server admins only: a project bundle as a new project with fresh ids, all or nothing. Runs that were queued or running arrive CANCELLED; endpoints arrive without API keys.',
  })
  importProjectBundle(@Arg('input') input: ImportProjectBundleInput, @Ctx() ctx: GraphQLContext): Promise<ImportProjectBundlePayload> {
    return ctx.services.bundles.import(ctx.principal, input);
  }
}
