import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { cursorFor } from '../../../src/db/pagination';

const ROOT = path.resolve(__dirname, '../../..');
const FILES = ['README.md', ...readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** Every cursor printed in the docs, as "endCursor"/"startCursor"/"cursor"/"after" values. */
function printedCursors(): { file: string; cursor: string }[] {
  const found: { file: string; cursor: string }[] = [];
  for (const file of FILES) {
    const text = readFileSync(path.join(ROOT, file), 'utf8');
    for (const match of text.matchAll(/"(?:endCursor|startCursor|cursor|after)":\s*"([A-Za-z0-9_-]{16,})"/g)) found.push({ file, cursor: match[1]! });
  }
  return found;
}

describe('cursors in the docs', () => {
  it('are in the format the server writes (key, id and list tag)', () => {
    const cursors = printedCursors();
    expect(cursors.length).toBeGreaterThan(0);
    for (const { file, cursor } of cursors) {
      const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { k: string | number; i: string; l: string };
      expect({ file, keys: Object.keys(decoded).sort() }).toEqual({ file, keys: ['i', 'k', 'l'] });
      // Re-encoding with the same key and id under the same tag gives the printed cursor back.
      const reencoded = Buffer.from(JSON.stringify({ k: decoded.k, i: decoded.i, l: decoded.l }), 'utf8').toString('base64url');
      expect(reencoded).toBe(cursor);
    }
  });

  it('of the cookbook\'s report pages carry the tag of that dataset\'s reports', () => {
    const cookbook = readFileSync(path.join(ROOT, 'docs/api-cookbook.md'), 'utf8');
    const section = cookbook.slice(cookbook.indexOf('\n## Pagination\n'));
    const datasetGlobalId = /"datasetId": "([A-Za-z0-9_-]+)"/.exec(section)![1]!;
    const datasetId = Buffer.from(datasetGlobalId, 'base64url').toString('utf8').replace(/^Dataset:/, '');
    const cursors = [...section.slice(0, section.indexOf('A loop over all pages')).matchAll(/"(?:endCursor|after)": "([A-Za-z0-9_-]+)"/g)].map((m) => m[1]!);
    expect(cursors.length).toBeGreaterThan(0);
    for (const cursor of cursors) {
      const { k, i } = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { k: number; i: string };
      expect(cursorFor('e.ordinal', datasetId, k, i)).toBe(cursor);
    }
  });
});
