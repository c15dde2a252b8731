import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { DuplicatePolicy, ImportFormat } from '../imports/import.types';
import { GraphQLUpload, type FileUpload } from '../imports/upload';
import { Dataset } from './dataset.entity';

@InputType()
export class CreateDatasetInput {
  @Field(() => ID) useCaseId!: string;
  @Field() name!: string;
  @Field(() => String, { nullable: true }) language?: string | null;
  @Field(() => String, { nullable: true, description: 'Licence and provenance of the reports.' }) provenance?: string | null;
}

@ObjectType()
export class CreateDatasetPayload {
  @Field(() => Dataset) dataset!: Dataset;
}

@InputType()
export class ImportReportsInput {
  @Field(() => ID) datasetId!: string;
  @Field(() => ImportFormat) format!: ImportFormat;
  @Field(() => String, { nullable: true, description: 'The file content, UTF-8 (or upload it as file).' }) content?: string | null;
  @Field(() => GraphQLUpload, {
    nullable: true,
    description: 'The file as a GraphQL multipart request upload (instead of content), read and inserted as it arrives, never held whole; UTF-8.',
  })
  file?: Promise<FileUpload> | null;
  @Field({ defaultValue: 'id', description: 'Column or key holding the external id.' }) idField!: string;
  @Field({ defaultValue: 'text', description: 'Column or key holding the report text.' }) textField!: string;
  @Field(() => [String], { nullable: true, description: 'Fields kept as metadata; default: every other field.' })
  metadataFields?: string[] | null;
  @Field(() => DuplicatePolicy, { defaultValue: DuplicatePolicy.REJECT }) onDuplicate!: DuplicatePolicy;
  @Field(() => String, { nullable: true, description: 'CSV delimiter; detected when left out.' }) delimiter?: string | null;
}

@ObjectType()
export class ImportReportsPayload {
  @Field(() => Dataset) dataset!: Dataset;
  @Field(() => Int) inserted!: number;
  @Field(() => Int, { description: 'Existing reports replaced (onDuplicate: UPSERT).' }) updated!: number;
}
