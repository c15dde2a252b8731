import 'reflect-metadata';
import { ArgsType, Field, Int, ObjectType, type ClassType } from 'type-graphql';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, type ConnectionShape, type PageInfoShape, type PageRequest } from '../db/pagination';

@ObjectType({ description: 'Relay page information.' })
export class PageInfo implements PageInfoShape {
  @Field() hasNextPage!: boolean;
  @Field() hasPreviousPage!: boolean;
  @Field(() => String, { nullable: true }) startCursor!: string | null;
  @Field(() => String, { nullable: true }) endCursor!: string | null;
}

@ArgsType()
export class PageArgs implements PageRequest {
  @Field(() => Int, { nullable: true, description: `Page size, at most ${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}).` })
  first?: number | null;

  @Field(() => String, { nullable: true, description: 'Cursor of the last edge of the previous page.' })
  after?: string | null;
}

/** Builds the `XConnection` and `XEdge` types of a node type. */
export function ConnectionType<T extends object>(nodeType: ClassType<T>, name: string): ClassType<ConnectionShape<T>> {
  @ObjectType(`${name}Edge`)
  class Edge {
    @Field() cursor!: string;
    @Field(() => nodeType) node!: T;
  }

  @ObjectType(`${name}Connection`)
  class Connection implements ConnectionShape<T> {
    @Field(() => [Edge]) edges!: Edge[];
    @Field(() => [nodeType], { description: 'The nodes of `edges`, for clients that need no cursors.' })
    nodes!: T[];
    @Field(() => PageInfo) pageInfo!: PageInfo;
    count!: () => Promise<number>;

    @Field(() => Int, { description: 'Number of items over all pages.' })
    totalCount(): Promise<number> {
      return this.count();
    }
  }
  return Connection;
}

