import type { EntityManager } from 'typeorm';
import { notFound } from '../domain/errors';

/**
 * NOT_FOUND (Project) unless the project exists, with a share lock held until the caller's
 * transaction ends, so it cannot be deleted before the rows that will point at it are written.
 * A server admin key passes every role check, so an unknown project id reaches the insert:
 * without this the foreign key would refuse it as an internal error.
 */
export async function lockProject(manager: EntityManager, projectId: string): Promise<void> {
  const rows = (await manager.query('SELECT id FROM projects WHERE id = $1 FOR SHARE', [projectId])) as unknown[];
  if (rows.length === 0) throw notFound('Project');
}
