import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { printSortedSchema } from './schema';

void printSortedSchema().then((sdl) => {
  const target = path.resolve(__dirname, '../../../schema/schema.graphql');
  writeFileSync(target, sdl);
  process.stdout.write(`wrote ${target}\n`);
});
