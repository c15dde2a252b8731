import { forbidden, notFound } from '../../domain/errors';
import { Role } from './api-key.entity';

/** Who is calling: the API key behind the request. */
export interface Principal {
  keyId: string;
  /** Null for a server admin key. */
  projectId: string | null;
  role: Role | null;
  serverAdmin: boolean;
}

const RANK: Record<Role, number> = { [Role.VIEWER]: 1, [Role.EDITOR]: 2, [Role.ADMIN]: 3 };

export function canSee(principal: Principal, projectId: string): boolean {
  return principal.serverAdmin || principal.projectId === projectId;
}

/** Whether the caller holds at least `minimum` in the project (a server admin holds every role). */
export function hasRole(principal: Principal, projectId: string, minimum: Role): boolean {
  if (!canSee(principal, projectId)) return false;
  return principal.serverAdmin || (principal.role !== null && RANK[principal.role] >= RANK[minimum]);
}

/**
 * Guards an action on a project's object. Another project's object answers NOT_FOUND (its
 * existence is not revealed); a role below `minimum` answers FORBIDDEN.
 */
export function requireRole(principal: Principal, projectId: string, minimum: Role, what = 'Object'): void {
  if (!canSee(principal, projectId)) throw notFound(what);
  if (principal.serverAdmin) return;
  if (principal.role === null || RANK[principal.role] < RANK[minimum]) {
    throw forbidden(`This needs the ${minimum} role in the project; the key has ${principal.role ?? 'none'}`);
  }
}

export function requireServerAdmin(principal: Principal): void {
  if (!principal.serverAdmin) throw forbidden('This needs a server admin key');
}
