import { Field, ObjectType } from 'type-graphql';
import { DateTimeScalar } from '../../graphql/scalars';

@ObjectType({ description: 'A chart image URL that works without an Authorization header (for an <img>), for the calling key, until it expires.' })
export class ChartImageUrl {
  @Field({ description: 'The path with its query and token, relative to the server (prefix the server address).' })
  url!: string;

  @Field(() => DateTimeScalar)
  expiresAt!: Date;
}
