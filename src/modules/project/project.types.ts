import { Field, InputType, ObjectType } from 'type-graphql';
import { ConnectionType } from '../../graphql/connection';
import { ApiKey, Role } from '../api-key/api-key.entity';
import { Project } from './project.entity';

export const ProjectConnection = ConnectionType(Project, 'Project');

@ObjectType({ description: 'The calling API key.' })
export class Viewer {
  @Field(() => ApiKey) apiKey!: ApiKey;
  @Field(() => Role, { nullable: true, description: 'Null for a server admin key.' }) role!: Role | null;
  @Field() serverAdmin!: boolean;
  @Field(() => Project, { nullable: true, description: 'The project of a project key.' }) project!: Project | null;
}

@ObjectType({ description: 'A newly issued key: the secret is shown here once and never again.' })
export class IssuedApiKey {
  @Field(() => ApiKey) apiKey!: ApiKey;
  @Field({ description: 'Send as "Authorization: Bearer <secret>".' }) secret!: string;
}

@InputType()
export class CreateProjectInput {
  @Field() name!: string;
}

@ObjectType()
export class CreateProjectPayload {
  @Field(() => Project) project!: Project;
  @Field(() => IssuedApiKey, { description: 'An ADMIN key of the new project.' }) adminKey!: IssuedApiKey;
}
