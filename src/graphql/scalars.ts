import { DateTimeResolver, JSONResolver } from 'graphql-scalars';

export const JSONScalar = JSONResolver;
export const DateTimeScalar = DateTimeResolver;
