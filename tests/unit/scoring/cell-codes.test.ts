import type { RecordCell } from '../../../src/analytics/normalise';
import { codeWidth, decodeRunCells, encodeRunCells, type CellGroup } from '../../../src/modules/scoring/cell-codes';

const packed = (ordinals: number[]) => {
  const buffer = Buffer.alloc(4 * ordinals.length);
  ordinals.forEach((o, i) => buffer.writeInt32BE(o, 4 * i));
  return buffer;
};
const value = (v: string | number): RecordCell => ({ status: 'VALUE', value: v });

/** Groups of `distinct` cells of one key spread over ordinals 0..span−1 (every `gap`-th ordinal has none). */
function groupsOf(key: string, distinct: number, span: number, gap: number): CellGroup[] {
  const lists = Array.from({ length: distinct }, () => [] as number[]);
  for (let o = 0; o < span; o++) if (o % gap !== gap - 1) lists[(o * 7919) % distinct]!.push(o);
  return lists.map((ordinals, c) => ({ key, cell: c === 0 ? null : value(`${key} ${c}`), ordinals: packed(ordinals) }));
}

describe('stored cell codes', () => {
  it('uses the narrowest width whose largest value no code reaches', () => {
    expect([0, 1, 255, 256, 65535, 65536, 1e6].map(codeWidth)).toEqual([1, 1, 1, 2, 2, 4, 4]);
  });

  it('decodes every report to the cell its groups gave it, at each width, in frame order', () => {
    // 255 / 256 / 65,536 distinct cells: widths 1, 2 and 4; the last two keys cover fewer ordinals.
    const span = 70_000;
    const groups = [...groupsOf('b', 255, 1_000, 5), ...groupsOf('a', 256, 3_000, 3), ...groupsOf('c', 65_536, span, 11)];
    const encoded = encodeRunCells(groups);
    expect(encoded.keys).toEqual(['a', 'b', 'c']);
    expect(encoded.span).toBe(span);
    expect(encoded.codes.length).toBe((2 + 1 + 4) * encoded.span);
    // A frame that lists the ordinals backwards, skips some and has more than the span.
    const reports = span + 10;
    const positionOfOrdinal = new Int32Array(reports).fill(-1);
    let position = 0;
    for (let o = reports - 1; o >= 0; o--) if (o % 13 !== 0) positionOfOrdinal[o] = position++;
    const decoded = decodeRunCells(encoded, ['a', 'b', 'c', 'absent'], positionOfOrdinal, position);
    for (const key of ['a', 'b', 'c']) {
      const expected = new Array<RecordCell | null | undefined>(position).fill(undefined);
      for (const g of groups.filter((x) => x.key === key)) {
        for (let at = 0; at < g.ordinals.length; at += 4) {
          const p = positionOfOrdinal[g.ordinals.readInt32BE(at)]!;
          if (p >= 0) expected[p] = g.cell;
        }
      }
      const column = decoded.get(key)!;
      const actual = Array.from(column.codes, (code) => (code < 0 ? undefined : column.cells[code]));
      expect({ key, same: actual.every((cell, i) => cell === expected[i]) }).toEqual({ key, same: true });
      // Most of the key's ordinals have a cell (those the frame skips or the key's span leaves out have none).
      expect(actual.filter((cell) => cell !== undefined).length).toBeGreaterThan(key === 'c' ? position / 2 : 500);
    }
    expect(decoded.get('absent')!.cells).toEqual([]);
    expect(decoded.get('absent')!.codes.every((code) => code === -1)).toBe(true);
  });

  it('survives the JSON the cells are stored as', () => {
    const encoded = encodeRunCells([
      { key: 'x', cell: value(1.5), ordinals: packed([2]) },
      { key: 'x', cell: { status: 'MISSING' }, ordinals: packed([0]) },
    ]);
    const stored = { ...encoded, cells: JSON.parse(JSON.stringify(encoded.cells)) as (RecordCell | null)[][] };
    const column = decodeRunCells(stored, ['x'], Int32Array.from([0, 1, 2]), 3).get('x')!;
    expect(Array.from(column.codes, (code) => (code < 0 ? undefined : column.cells[code]))).toEqual([{ status: 'MISSING' }, undefined, value(1.5)]);
  });

  it('stores a run without cells as nothing and refuses bytes that do not fit the layout', () => {
    const none = encodeRunCells([]);
    expect(none).toEqual({ keys: [], cells: [], span: 0, codes: Buffer.alloc(0) });
    expect(decodeRunCells(none, ['x'], new Int32Array(3), 3).get('x')!.codes).toEqual(Int32Array.from([-1, -1, -1]));
    const encoded = encodeRunCells([{ key: 'x', cell: value('a'), ordinals: packed([0, 1]) }]);
    expect(() => decodeRunCells({ ...encoded, codes: encoded.codes.subarray(1) }, ['x'], Int32Array.from([0, 1]), 2)).toThrow(/bytes of codes/);
    expect(() => decodeRunCells({ ...encoded, codes: Buffer.from([0, 7]) }, ['x'], Int32Array.from([0, 1]), 2)).toThrow(/code 7/);
    expect(() => encodeRunCells([{ key: 'x', cell: value('a'), ordinals: packed([-2]) }])).toThrow(/negative/);
  });
});
