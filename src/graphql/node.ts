import { Field, ID, InterfaceType } from 'type-graphql';
import { toGlobalId, type NodeType } from '../domain/global-id';

// Resolvers and loaders read IDs through the Node module; the coding itself is domain code that services use too.
export { decodeId, fromGlobalId, NODE_TYPES, toGlobalId, type NodeType } from '../domain/global-id';

@InterfaceType('Node', {
  description: 'An object with a global ID, fetchable with `node(id:)`.',
  resolveType: (value: object) => value.constructor.name,
})
export abstract class Node {
  /** Row id (uuid); not exposed, the GraphQL `id` is the global ID. */
  abstract id: string;

  @Field(() => ID, { name: 'id', description: 'Opaque global ID.' })
  get globalId(): string {
    return toGlobalId(this.constructor.name as NodeType, this.id);
  }
}
