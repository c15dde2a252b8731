import { readFileSync } from 'node:fs';
import path from 'node:path';
import semver from 'semver';

const ROOT = path.resolve(__dirname, '../../..');
const read = (file: string) => JSON.parse(readFileSync(path.join(ROOT, file), 'utf8'));

/** npm warns EBADENGINE for every installed package whose engines.node the running Node misses. */
describe('the Node.js requirement', () => {
  const stated = read('package.json').engines.node as string;
  const lock = read('package-lock.json') as { packages: Record<string, { version?: string; engines?: { node?: string } | string[]; os?: string[]; cpu?: string[] }> };

  it('includes the Node.js these machines run, and every version it states is one each package accepts', () => {
    expect(semver.satisfies(process.version, stated)).toBe(true);
    // The lowest version of each alternative (20.x, 22.x, …) the requirement states.
    const lowest = stated.split('||').map((range) => semver.minVersion(range.trim())!.version);
    const refusing: string[] = [];
    for (const [name, entry] of Object.entries(lock.packages)) {
      const node = !Array.isArray(entry.engines) ? entry.engines?.node : undefined;
      if (!name || !node) continue;
      if (entry.os && !entry.os.includes(process.platform)) continue;
      for (const version of [process.version, ...lowest]) {
        if (!semver.satisfies(version, node)) refusing.push(`${name}@${entry.version} wants node ${node}, refuses ${version}`);
      }
    }
    expect(refusing).toEqual([]);
  });
});
