import { ArgsType, Field } from 'type-graphql';
import { ConnectionType, PageArgs } from '../../graphql/connection';
import { UseCase } from './use-case.entity';

export const UseCaseConnection = ConnectionType(UseCase, 'UseCase');

@ArgsType()
export class UseCaseSearchArgs extends PageArgs {
  @Field(() => String, { nullable: true, description: 'Case-insensitive match on name and description.' })
  search?: string | null;
}
