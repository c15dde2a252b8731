// Minimal TypeScript runner for benchmarks: compiles .ts files on require with @swc/core
// (already a dev dependency for jest), no type checking. Usage: node ts-run.js file.ts [args]
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { transformSync } = require('@swc/core');

require.extensions['.ts'] = function compileTs(module, filename) {
  const { code } = transformSync(fs.readFileSync(filename, 'utf8'), {
    filename,
    jsc: { parser: { syntax: 'typescript', decorators: true }, target: 'es2022' },
    module: { type: 'commonjs' },
    sourceMaps: 'inline',
  });
  module._compile(code, filename);
};

const entry = process.argv[2];
if (!entry) {
  process.stderr.write('usage: node ts-run.js <file.ts> [args]\n');
  process.exit(2);
}
process.argv.splice(1, 1);
require(path.resolve(entry));
