/**
 * The browser tests (tests/browser): GraphiQL in headless Chromium, the machine's own
 * (Debian: apt-get install chromium; or CHROMIUM_PATH). `npm run test:browser`.
 * @type {import('jest').Config}
 */
const base = require('./jest.config');

module.exports = {
  ...base,
  roots: ['<rootDir>/tests/browser'],
  testPathIgnorePatterns: ['/node_modules/'],
};
