import type { DataSource } from 'typeorm';
import { paginate, type PageRequest } from '../../db/pagination';
import { badInput } from '../../domain/errors';
import { Role } from '../api-key/api-key.entity';
import type { ApiKeyService, IssuedKey } from '../api-key/api-key.service';
import { requireServerAdmin, type Principal } from '../api-key/principal';
import { Project } from './project.entity';

export class ProjectService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly apiKeys: ApiKeyService,
  ) {}

  /** Server admins only; the new project comes with its first ADMIN key. */
  async create(principal: Principal, input: { name: string }): Promise<{ project: Project; adminKey: IssuedKey }> {
    requireServerAdmin(principal);
    const name = input.name.trim();
    if (!name) throw badInput('name must not be empty', { field: 'name' });
    return this.dataSource.transaction(async (manager) => {
      const project = await manager.getRepository(Project).save(manager.getRepository(Project).create({ name }));
      const adminKey = await this.apiKeys.issue(manager, {
        projectId: project.id,
        role: Role.ADMIN,
        serverAdmin: false,
        name: `${name} admin`,
      });
      return { project, adminKey };
    });
  }

  list(principal: Principal, args: PageRequest) {
    const query = this.dataSource.getRepository(Project).createQueryBuilder('e');
    if (!principal.serverAdmin) query.where('e.id = :id', { id: principal.projectId });
    return paginate(query, args, { column: 'e.created_at', scope: 'projects', value: (p) => p.createdAt });
  }

}
