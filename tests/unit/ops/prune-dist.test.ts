import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const script = path.resolve(__dirname, '../../../scripts/prune-dist.mjs');

describe('scripts/prune-dist.mjs', () => {
  it('removes compiled files whose source is gone and keeps the others', () => {
    const dist = mkdtempSync(path.join(os.tmpdir(), 'reportql-dist-'));
    try {
      const analytics = path.join(dist, 'src/analytics');
      mkdirSync(path.join(analytics, 'kemeny'), { recursive: true });
      const stale = ['kemeny.js', 'kemeny.js.map', 'kemeny.d.ts', 'kemeny.d.ts.map'].map((f) => path.join(analytics, f));
      const kept = [path.join(analytics, 'metrics.js'), path.join(analytics, 'metrics.d.ts'), path.join(analytics, 'kemeny/index.js')];
      const wasm = path.join(analytics, 'wasm-copy.wasm');
      for (const file of [...stale, ...kept, wasm]) writeFileSync(file, '');
      execFileSync(process.execPath, [script, dist]);
      expect(stale.filter((f) => existsSync(f))).toEqual([]);
      expect(kept.filter((f) => !existsSync(f))).toEqual([]);
      expect(existsSync(wasm)).toBe(true);
    } finally {
      rmSync(dist, { recursive: true, force: true });
    }
  });
});
