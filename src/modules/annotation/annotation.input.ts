import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { JSONScalar } from '../../graphql/scalars';
import { ImportFormat } from '../imports/import.types';
import { GraphQLUpload, type FileUpload } from '../imports/upload';
import { Annotator, AnnotatorKind } from './annotator.entity';

@InputType({ description: 'One annotator per import: one row per report, one column (or key) per variable key.' })
export class ImportAnnotationsInput {
  @Field(() => ID) datasetId!: string;
  @Field({ description: 'Created on first import; a later import with the same name updates its values.' })
  annotatorName!: string;
  @Field(() => AnnotatorKind, { nullable: true, description: 'Left out: HUMAN for a new annotator; an existing one keeps its kind.' })
  kind?: AnnotatorKind | null;
  @Field({ defaultValue: false, description: 'Make this annotator the reference standard of the dataset.' })
  isReference!: boolean;
  @Field(() => ImportFormat) format!: ImportFormat;
  @Field(() => String, { nullable: true, description: 'The file content, UTF-8 (or upload it as file).' }) content?: string | null;
  @Field(() => GraphQLUpload, {
    nullable: true,
    description: 'The file as a GraphQL multipart request upload (instead of content); UTF-8.',
  })
  file?: Promise<FileUpload> | null;
  @Field({ defaultValue: 'id', description: 'Column or key holding the report external id.' }) idField!: string;
  @Field(() => JSONScalar, { nullable: true, description: 'Variable key → column name, where they differ.' })
  columnMap?: Record<string, string> | null;
  @Field(() => String, { nullable: true }) delimiter?: string | null;
}

@ObjectType()
export class ImportAnnotationsPayload {
  @Field(() => Annotator) annotator!: Annotator;
  @Field(() => Int, { description: 'Reports that received values.' }) reports!: number;
  @Field(() => Int, { description: 'Values written (report × variable).' }) values!: number;
  @Field(() => [String], { description: 'Columns that are neither the id nor a variable; ignored.' })
  unknownColumns!: string[];
}
