import { createRecordReader, parseRecords, readRecords, textSlices, type ParsedRecord, type RecordFormat } from '../../../src/modules/imports';
import type { RowError } from '../../../src/modules/imports';

const BOM = '\uFEFF';

/** What a reader hands out when the file is written in pieces of `size` characters. */
function readInPieces(content: string, format: RecordFormat, size: number) {
  let rows: ParsedRecord[] = [];
  let errors: RowError[] = [];
  const reader = createRecordReader(format, {
    record: (rec) => rows.push(rec),
    error: (error) => errors.push(error),
    reject: (error) => {
      rows = [];
      errors = [error];
    },
  });
  for (const piece of textSlices(content, size)) reader.write(piece);
  reader.end();
  if (!reader.showLines) {
    rows.forEach((r) => delete r.line);
    errors.forEach((e) => delete e.line);
  }
  return { rows, errors, columns: reader.columns, delimiter: reader.delimiter };
}

const FILES: [RecordFormat, string][] = [
  ['CSV', `${BOM}id;tekst;site\r\n1;"Česká republika, přítomnost metastáz";Brno\r\n2;ongedifferentieerd, één;Utrecht\r\n`],
  ['CSV', 'id,text\r\n1,"line one\r\nline two, with comma\r\n""quoted"""\r\n\r\n2,plain\r\n3,"x\ny"\r\n4,last\r\n'],
  ['CSV', 'id,text\n\n1,a\n,\n  \n2,b\n3\n4,c,d\n5,"unterminated\n6,x\n'],
  ['CSV', 'id,text,id,\n1,a,2,x\n'],
  ['CSV', 'id,text\n1,emoji 😀 and 𝄞 clef\n2,"😀😀😀"\n'],
  ['CSV', 'id,text\n1,a\ud800b\n'],
  ['CSV', ''],
  ['JSON', `${BOM}[{"id": 1, "text": "a \\"quoted\\" \\\\ back", "m": {"n": [1, {"x": "]}"}]}}, {"id": 2, "text": "😀 Česká"}]`],
  ['JSON', '[{"id": 1}, 2, null, ["x"], {"id": 3}]'],
  ['JSON', '[\n{"id": 1},\n{"id": 2,,},\n{"id": 3}\n]'],
  ['JSON', '[{"id": 1},\n{"id": 2}'],
  ['JSON', '[{"id": 1}, {"id": [2}'],
  ['JSON', '[{"id": 1}, {"id": 2},]'],
  ['JSON', '[{"id": 1}] x'],
  ['JSON', '[{"id": "unterminated}]'],
  ['JSON', '[{"id": "ends in a backslash \\'],
  ['JSON', '[{"id": 1e400}, {"id": 2}]'],
  ['JSON', '{"id": 1}'],
  ['JSON', 'id,text\n1,a'],
  ['JSON', '   '],
  ['JSONL', `${BOM}{"id": 1, "text": "Česká"}\r\n\r\n{"id": 2, "text": "één 😀"}\r\n`],
  ['JSONL', '{"id": 1}\n{"id": \n\n[1]\n{"id": 4}'],
];

describe('record reader', () => {
  it.each(FILES.map(([format, content], i) => [i, format, content] as const))('file %i (%s): any split into pieces reads as the whole', (_i, format, content) => {
    const whole = parseRecords(content, format);
    for (const size of [1, 2, 3, 5, 7, 16, 64]) {
      const pieces = readInPieces(content, format, size);
      expect({ rows: pieces.rows, errors: pieces.errors }).toEqual({ rows: whole.rows, errors: whole.errors });
      if (format === 'CSV') expect([pieces.columns ?? [], pieces.delimiter]).toEqual([whole.columns, whole.delimiter]);
    }
  });

  it('never splits a surrogate pair', () => {
    const text = '😀'.repeat(10);
    for (const size of [1, 2, 3]) {
      const pieces = [...textSlices(text, size)];
      expect(pieces.join('')).toBe(text);
      expect(pieces.every((p) => p.length % 2 === 0)).toBe(true);
    }
  });

  it('readRecords hands out batches in file order, each awaited, and tells whether a problem was seen', async () => {
    const content = Array.from({ length: 25 }, (_, i) => (i === 12 ? '[1]' : JSON.stringify({ id: i }))).join('\n');
    const batches: { ids: unknown[]; clean: boolean }[] = [];
    let inBatch = false;
    const result = await readRecords(content, 'JSONL', {}, 5, async (records, clean) => {
      expect(inBatch).toBe(false);
      inBatch = true;
      await new Promise((resolve) => setImmediate(resolve));
      batches.push({ ids: records.map((r) => r.record['id']), clean });
      inBatch = false;
    });
    expect(batches.map((b) => b.ids.length)).toEqual([5, 5, 5, 5, 4]);
    expect(batches.flatMap((b) => b.ids)).toEqual(Array.from({ length: 25 }, (_, i) => i).filter((i) => i !== 12));
    // the whole file is one piece here: the problem on row 13 is already known for every batch
    expect(batches.every((b) => !b.clean)).toBe(true);
    expect(result).toMatchObject({ rejected: false, showLines: true, errors: [{ row: 13, line: 13, reason: 'expected an object, got an array' }] });
  });

  it('readRecords decodes an uploaded byte stream split inside characters, and refuses bytes that are not UTF-8', async () => {
    const text = `${BOM}id,text\n1,Česká 😀 één\n2,ok\n`;
    const bytes = new TextEncoder().encode(text);
    async function* oneByteAtATime(data: Uint8Array) {
      for (const b of data) yield new Uint8Array([b]);
    }
    const got: ParsedRecord[] = [];
    const read = await readRecords(oneByteAtATime(bytes), 'CSV', {}, 1, (records) => {
      got.push(...records);
    });
    expect(read.errors).toEqual([]);
    expect(got.map((r) => r.record)).toEqual([
      { id: '1', text: 'Česká 😀 één' },
      { id: '2', text: 'ok' },
    ]);

    const broken = await readRecords(oneByteAtATime(new Uint8Array([...bytes, 0xff, 0x0a])), 'CSV', {}, 1, () => {});
    expect(broken).toMatchObject({ rejected: true, errors: [{ row: 0, reason: 'the file is not valid UTF-8' }] });
    // busboy marks a file it cut at the size limit; what arrived is not imported
    const truncated = Object.assign(oneByteAtATime(bytes), { truncated: true });
    const tooLarge = await readRecords(truncated, 'CSV', {}, 1, () => {});
    expect(tooLarge).toMatchObject({ rejected: true, errors: [{ row: 0, reason: 'the file is larger than the server accepts' }] });
    const cut = await readRecords(oneByteAtATime(bytes.slice(0, bytes.indexOf(0xf0) + 2)), 'CSV', {}, 1, () => {});
    expect(cut).toMatchObject({ rejected: true, errors: [{ row: 0, reason: 'the file is not valid UTF-8 (it ends inside a character)' }] });
  });
});
