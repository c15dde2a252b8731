import { byIdLoaderFactory } from '../../graphql/loader-registry';
import { Project } from './project.entity';

export const projectById = byIdLoaderFactory(Project);
