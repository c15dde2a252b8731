import type { DataSource } from 'typeorm';
import type { PageArgs } from '../../graphql/connection';
import { paginate } from '../../graphql/connection';
import { Endpoint } from './endpoint.entity';
import { Model } from './model.entity';

export class EndpointService {
  constructor(private readonly dataSource: DataSource) {}

  list(projectId: string, args: PageArgs) {
    const query = this.dataSource.getRepository(Endpoint).createQueryBuilder('e').where('e.project_id = :projectId', { projectId });
    return paginate(query, args, { column: 'e.created_at', value: (e) => e.createdAt });
  }

  listModels(projectId: string, args: PageArgs) {
    const query = this.dataSource.getRepository(Model).createQueryBuilder('e').where('e.project_id = :projectId', { projectId });
    return paginate(query, args, { column: 'e.created_at', value: (m) => m.createdAt });
  }
}
