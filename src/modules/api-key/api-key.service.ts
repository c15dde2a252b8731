import { createHash, randomBytes } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { IsNull } from 'typeorm';
import { DomainException, badInput, notFound } from '../../domain/errors';
import { Project } from '../project/project.entity';
import { ApiKey, Role } from './api-key.entity';
import { canSee, requireRole, requireServerAdmin, type Principal } from './principal';

const SECRET_PREFIX = 'rql_';
const LAST_USED_RESOLUTION_MS = 60_000;
/** How long a key looked up stays trusted without asking the database again. */
export const KEY_CACHE_MS = 1000;
const KEY_CACHE_CAPACITY = 10_000;

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64url');
}

export interface IssuedKey {
  apiKey: ApiKey;
  /** Shown once; only its hash is stored. */
  secret: string;
}

interface CachedKey {
  principal: Principal;
  /** Date.now() after which the database is asked again. */
  until: number;
}

export class ApiKeyService {
  /**
   * Valid keys by secret hash, trusted for KEY_CACHE_MS: a revocation reaches every process
   * at once through `forget` (the `keyRevoked` event) and, should that event be missed, within
   * KEY_CACHE_MS. Unknown and revoked keys are never cached (a new key works at once).
   */
  private readonly cache = new Map<string, CachedKey>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly cacheMs = KEY_CACHE_MS,
  ) {}

  /** Resolves `Authorization: Bearer <key>`; any failure is UNAUTHENTICATED without detail on which. */
  async authenticate(authorization: string | undefined | null): Promise<Principal> {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!match) throw new DomainException('UNAUTHENTICATED', 'Send an API key as "Authorization: Bearer <key>"');
    const secretHash = hashSecret(match[1] as string);
    const now = Date.now();
    const cached = this.cache.get(secretHash);
    if (cached && now < cached.until) return cached.principal;
    this.cache.delete(secretHash);
    const key = await this.dataSource.getRepository(ApiKey).findOneBy({ secretHash });
    if (!key || key.revokedAt) throw new DomainException('UNAUTHENTICATED', 'The API key is unknown or revoked');
    if (!key.lastUsedAt || now - key.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
      await this.dataSource.getRepository(ApiKey).update({ id: key.id }, { lastUsedAt: new Date(now) });
      key.lastUsedAt = new Date(now);
    }
    const principal: Principal = { keyId: key.id, projectId: key.projectId, role: key.role, serverAdmin: key.serverAdmin };
    // A key is cached only until its last-used time would need writing again.
    if (this.cacheMs > 0 && !this.revoked.has(key.id)) {
      if (this.cache.size >= KEY_CACHE_CAPACITY) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(secretHash, { principal, until: Math.min(now + this.cacheMs, key.lastUsedAt.getTime() + LAST_USED_RESOLUTION_MS) });
    }
    return principal;
  }

  /**
   * The caller behind a signed URL (which names its key by id, never by secret): the key must
   * still exist and not be revoked; any failure is UNAUTHENTICATED without detail on which.
   */
  async principalOf(keyId: string): Promise<Principal> {
    const key = await this.dataSource.getRepository(ApiKey).findOneBy({ id: keyId });
    if (!key || key.revokedAt) throw new DomainException('UNAUTHENTICATED', 'The signed URL is invalid, expired or its key was revoked');
    return { keyId: key.id, projectId: key.projectId, role: key.role, serverAdmin: key.serverAdmin };
  }

  /** Ids revoked while their lookup may have been in flight: such a lookup is not cached. */
  private readonly revoked = new Set<string>();

  /** Drops a key from this process's cache (it was revoked here or in another process). */
  forget(keyId: string): void {
    for (const [hash, entry] of this.cache) if (entry.principal.keyId === keyId) this.cache.delete(hash);
    this.revoked.add(keyId);
    setTimeout(() => this.revoked.delete(keyId), Math.max(this.cacheMs, 1000) * 5).unref();
  }

  async issue(
    manager: EntityManager,
    fields: { projectId: string | null; role: Role | null; serverAdmin: boolean; name: string; secret?: string },
  ): Promise<IssuedKey> {
    const secret = fields.secret ?? generateSecret();
    const apiKey = await manager.getRepository(ApiKey).save(
      manager.getRepository(ApiKey).create({
        projectId: fields.projectId,
        role: fields.role,
        serverAdmin: fields.serverAdmin,
        name: fields.name,
        prefix: secret.slice(0, 12),
        secretHash: hashSecret(secret),
      }),
    );
    return { apiKey, secret };
  }

  async create(
    principal: Principal,
    input: { projectId: string | null; name: string; role: Role | null; serverAdmin: boolean },
  ): Promise<IssuedKey> {
    const name = input.name.trim();
    if (!name) throw badInput('name must not be empty', { field: 'name' });
    if (input.serverAdmin) {
      requireServerAdmin(principal);
      if (input.projectId || input.role) throw badInput('A server admin key has no project and no role');
      return this.issue(this.dataSource.manager, { projectId: null, role: null, serverAdmin: true, name });
    }
    if (!input.projectId) throw badInput('projectId is required for a project key', { field: 'projectId' });
    if (!input.role) throw badInput('role is required for a project key', { field: 'role' });
    requireRole(principal, input.projectId, Role.ADMIN, 'Project');
    const project = await this.dataSource.getRepository(Project).findOneBy({ id: input.projectId });
    if (!project) throw notFound('Project');
    return this.issue(this.dataSource.manager, { projectId: project.id, role: input.role, serverAdmin: false, name });
  }

  async revoke(principal: Principal, id: string): Promise<ApiKey> {
    const repo = this.dataSource.getRepository(ApiKey);
    const key = await repo.findOneBy({ id });
    // A server admin key is invisible to project keys: it answers exactly like an unknown ID.
    if (!key || (key.projectId === null && !principal.serverAdmin)) throw notFound('API key');
    if (key.projectId !== null) requireRole(principal, key.projectId, Role.ADMIN, 'API key');
    if (!key.revokedAt) {
      key.revokedAt = new Date();
      await repo.update({ id: key.id }, { revokedAt: key.revokedAt });
    }
    this.forget(key.id);
    return key;
  }

  /** A project's keys, newest first; ADMINs only (keys are credentials). */
  async listForProject(principal: Principal, projectId: string): Promise<ApiKey[]> {
    requireRole(principal, projectId, Role.ADMIN, 'Project');
    return this.dataSource.getRepository(ApiKey).find({ where: { projectId }, order: { createdAt: 'DESC', id: 'ASC' } });
  }

  async get(principal: Principal, id: string): Promise<ApiKey | null> {
    const key = await this.dataSource.getRepository(ApiKey).findOneBy({ id });
    if (!key) return null;
    if (key.projectId === null) return principal.serverAdmin ? key : null;
    return canSee(principal, key.projectId) ? key : null;
  }

  /**
   * First start: makes sure a server admin key exists. With ADMIN_API_KEY set it is that key;
   * otherwise a key is generated and returned (printed once by the caller).
   */
  async ensureServerAdmin(configuredSecret: string | undefined): Promise<string | null> {
    const repo = this.dataSource.getRepository(ApiKey);
    if (configuredSecret) {
      const find = () => repo.findOneBy({ secretHash: hashSecret(configuredSecret) });
      const accept = (existing: ApiKey): null => {
        if (!existing.serverAdmin || existing.revokedAt) {
          throw badInput('ADMIN_API_KEY matches a key that is not an active server admin key');
        }
        return null;
      };
      const existing = await find();
      if (existing) return accept(existing);
      try {
        await this.issue(this.dataSource.manager, {
          projectId: null,
          role: null,
          serverAdmin: true,
          name: 'server admin (ADMIN_API_KEY)',
          secret: configuredSecret,
        });
      } catch (error) {
        // Another process starting with the same ADMIN_API_KEY inserted it first.
        if ((error as { code?: string }).code !== '23505') throw error;
        const inserted = await find();
        if (!inserted) throw error;
        return accept(inserted);
      }
      return null;
    }
    const active = await repo.countBy({ serverAdmin: true, revokedAt: IsNull() });
    if (active > 0) return null;
    const issued = await this.issue(this.dataSource.manager, { projectId: null, role: null, serverAdmin: true, name: 'server admin' });
    return issued.secret;
  }
}
