import { readFileSync } from 'node:fs';
import path from 'node:path';
import { printSortedSchema } from '../../../src/graphql/schema';

describe('schema/schema.graphql', () => {
  it('is the SDL the code builds (run `npm run schema` after changing the API)', async () => {
    const committed = readFileSync(path.resolve(__dirname, '../../../schema/schema.graphql'), 'utf8');
    expect(await printSortedSchema()).toBe(committed);
  });
});
