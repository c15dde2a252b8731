'use strict';
// Require hook that runs the TypeScript sources without a build step (tests' child processes and
// threads, benchmarks, demo scripts): compiles .ts with @swc/core using the settings of
// jest.config.js (legacy decorators with metadata, as the entities and resolvers need).
const fs = require('node:fs');
const { transformSync } = require('@swc/core');

require.extensions['.ts'] = function compileTs(module, filename) {
  const { code } = transformSync(fs.readFileSync(filename, 'utf8'), {
    filename,
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
    },
    module: { type: 'commonjs' },
    sourceMaps: 'inline',
  });
  module._compile(code, filename);
};
