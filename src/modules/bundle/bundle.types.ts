import { Field, InputType, Int, ObjectType } from 'type-graphql';
import { GraphQLUpload, type FileUpload } from '../imports/upload';
import { Project } from '../project/project.entity';
import { IssuedApiKey } from '../project/project.types';

@InputType()
export class ImportProjectBundleInput {
  @Field({ description: 'The name of the new project.' }) name!: string;
  @Field(() => String, { nullable: true, description: 'The bundle (GET /exports/projects/{projectId}/bundle.json), UTF-8 JSON (or upload it as file).' })
  content?: string | null;
  @Field(() => GraphQLUpload, { nullable: true, description: 'The bundle as a GraphQL multipart request upload (instead of content).' })
  file?: Promise<FileUpload> | null;
}

@ObjectType()
export class BundleTableCount {
  @Field({ description: 'The bundle key, e.g. reports.' }) name!: string;
  @Field(() => Int) rows!: number;
}

@ObjectType()
export class ImportProjectBundlePayload {
  @Field(() => Project) project!: Project;
  @Field(() => IssuedApiKey, { description: 'An ADMIN key of the new project.' }) adminKey!: IssuedApiKey;
  @Field(() => [String], { description: 'What did not come over as it was: runs that were under way arrive CANCELLED, endpoints arrive without API keys.' })
  warnings!: string[];
  @Field(() => [BundleTableCount], { description: 'Rows imported per table, in import order.' }) tables!: BundleTableCount[];
}
