/**
 * Relay global IDs ("Type:uuid", base64url). Services decode the IDs of their inputs with them,
 * so they live outside the GraphQL layer; graphql/node.ts builds the Node interface on them.
 */
import { DomainException } from './errors';

/** Type names that can appear in a global ID; kept in one place so `node(id:)` can route them. */
export const NODE_TYPES = [
  'Project',
  'ApiKey',
  'UseCase',
  'Variable',
  'Dataset',
  'Report',
  'Annotator',
  'Annotation',
  'Endpoint',
  'Model',
  'Prompt',
  'Experiment',
  'Run',
  'Prediction',
  'BackgroundTask',
] as const;
export type NodeType = (typeof NODE_TYPES)[number];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Opaque Relay global ID: base64url of "Type:uuid". */
export function toGlobalId(type: NodeType, id: string): string {
  return Buffer.from(`${type}:${id}`, 'utf8').toString('base64url');
}

/** Decodes a global ID; null when it is not one of ours (callers answer NOT_FOUND or BAD_USER_INPUT). */
export function fromGlobalId(globalId: string): { type: NodeType; id: string } | null {
  if (typeof globalId !== 'string' || globalId.length > 200 || !/^[A-Za-z0-9_-]+$/.test(globalId)) return null;
  const decoded = Buffer.from(globalId, 'base64url').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  const type = decoded.slice(0, colon);
  const id = decoded.slice(colon + 1);
  if (!(NODE_TYPES as readonly string[]).includes(type) || !UUID.test(id)) return null;
  return { type: type as NodeType, id };
}

/** The row id behind a global ID of the expected type; BAD_USER_INPUT when it is no ID of ours. */
export function decodeId(globalId: string, expected: NodeType, field: string): string {
  const decoded = fromGlobalId(globalId);
  if (!decoded) {
    throw new DomainException('BAD_USER_INPUT', `${field} is not a valid ID`, { field });
  }
  if (decoded.type !== expected) {
    throw new DomainException('NOT_FOUND', `${expected} not found`, { field });
  }
  return decoded.id;
}
