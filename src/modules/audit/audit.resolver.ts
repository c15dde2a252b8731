import { Arg, Args, Ctx, FieldResolver, Resolver, Root } from 'type-graphql';
import type { GraphQLContext } from '../../graphql/context';
import { PageArgs } from '../../graphql/connection';
import { Project } from '../project/project.entity';
import { AuditEventConnection, AuditKind } from './audit-event.entity';

@Resolver(() => Project)
export class AuditResolver {
  @FieldResolver(() => AuditEventConnection, {
    description:
      'Who read report texts, annotations, predictions or exports of the project and who changed it (every mutation), oldest first; ADMIN only. Append-only.',
  })
  auditLog(@Root() project: Project, @Args() page: PageArgs, @Arg('kind', () => AuditKind, { nullable: true }) kind: AuditKind | null, @Ctx() ctx: GraphQLContext) {
    return ctx.services.audit.list(ctx.principal, project.id, { ...page, kind });
  }
}
