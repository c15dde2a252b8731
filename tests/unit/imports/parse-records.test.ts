import { detectDelimiter, parseRecords } from '../../../src/modules/imports';

const BOM = '\uFEFF';

describe('parseRecords CSV', () => {
  it('reads a header and rows, keeping every cell a string and empty cells as ""', () => {
    const { rows, errors, columns, delimiter } = parseRecords('id,text,grade\n1,hello,G2\n2,world,\n', 'CSV');
    expect(errors).toEqual([]);
    expect(delimiter).toBe(',');
    expect(columns).toEqual(['id', 'text', 'grade']);
    expect(rows).toEqual([
      { row: 1, line: 2, record: { id: '1', text: 'hello', grade: 'G2' } },
      { row: 2, line: 3, record: { id: '2', text: 'world', grade: '' } },
    ]);
  });

  it('strips a BOM, detects ; and keeps Czech and Dutch diacritics', () => {
    const csv = `${BOM}id;tekst;site\r\n1;"Česká republika, přítomnost metastáz";Brno\r\n2;ongedifferentieerd, één;Utrecht\r\n`;
    const { rows, errors, delimiter, columns } = parseRecords(csv, 'CSV');
    expect(errors).toEqual([]);
    expect(delimiter).toBe(';');
    expect(columns).toEqual(['id', 'tekst', 'site']);
    expect(rows.map((r) => r.record)).toEqual([
      { id: '1', tekst: 'Česká republika, přítomnost metastáz', site: 'Brno' },
      { id: '2', tekst: 'ongedifferentieerd, één', site: 'Utrecht' },
    ]);
  });

  it('detects a tab delimiter and honours an explicit one', () => {
    expect(parseRecords('a\tb\n1\t2\n', 'CSV').rows[0].record).toEqual({ a: '1', b: '2' });
    const forced = parseRecords('a,b;c\n1,2;3\n', 'CSV', { delimiter: ',' });
    expect(forced.rows[0].record).toEqual({ a: '1', 'b;c': '2;3' });
  });

  it('reads quoted multi-line fields and counts lines from the header (CRLF counted once)', () => {
    const csv = 'id,text\r\n1,"line one\r\nline two, with comma\r\n""quoted"""\r\n\r\n2,plain\r\n3,"x\ny"\r\n4,last\r\n';
    const { rows, errors } = parseRecords(csv, 'CSV');
    expect(errors).toEqual([]);
    expect(rows.map((r) => [r.row, r.line, r.record.text])).toEqual([
      [1, 2, 'line one\r\nline two, with comma\r\n"quoted"'],
      [2, 6, 'plain'],
      [3, 7, 'x\ny'],
      [4, 9, 'last'],
    ]);
  });

  it('skips blank lines and all-empty records without numbering them as rows', () => {
    const { rows } = parseRecords('id,text\n\n1,a\n,\n  \n2,b\n', 'CSV');
    expect(rows.map((r) => [r.row, r.line, r.record.id])).toEqual([
      [1, 3, '1'],
      [2, 6, '2'],
    ]);
  });

  it('rejects duplicate and empty header names', () => {
    const { rows, errors } = parseRecords('id,text,id,\n1,a,2,x\n', 'CSV');
    expect(rows).toEqual([]);
    expect(errors).toEqual([
      { row: 0, line: 1, field: 'id', reason: "header names column 'id' twice (columns 1 and 3)" },
      { row: 0, line: 1, reason: 'header column 4 has no name' },
    ]);
  });

  it('reports rows with the wrong number of cells and keeps the others', () => {
    const { rows, errors } = parseRecords('id,text\n1,a\n2,b,extra\n3\n4,d\n', 'CSV');
    expect(rows.map((r) => r.record.id)).toEqual(['1', '4']);
    expect(errors).toEqual([
      { row: 2, line: 3, reason: '3 cells but the header has 2 columns' },
      { row: 3, line: 4, reason: '1 cells but the header has 2 columns' },
    ]);
  });

  it('reports an unterminated quote at the row and line where it opened', () => {
    const { rows, errors } = parseRecords('id,text\n1,ok\n2,"never closed\n3,more\n', 'CSV');
    expect(rows.map((r) => r.record.id)).toEqual(['1']);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ row: 2, line: 3 });
    expect(errors[0].reason).toMatch(/unterminated quoted field/);
  });

  it('keeps text after a closing quote literally instead of guessing', () => {
    const { rows, errors } = parseRecords('id,text\n1,"a"b\n2,c\n', 'CSV');
    expect(errors).toEqual([]);
    expect(rows.map((r) => r.record.text)).toEqual(['"a"b', 'c']);
  });

  it('tolerates a quote inside an unquoted field', () => {
    const { rows, errors } = parseRecords('id,text\n1,5" lesion\n', 'CSV');
    expect(errors).toEqual([]);
    expect(rows[0].record.text).toBe('5" lesion');
  });

  it('rejects an empty file', () => {
    expect(parseRecords('', 'CSV').errors).toEqual([{ row: 0, reason: 'the file is empty: a CSV needs a header line' }]);
    expect(parseRecords(BOM, 'CSV').errors).toHaveLength(1);
  });

  it('reads old Mac CR line ends', () => {
    const { rows, errors } = parseRecords('id,text\r1,"a\rb"\r2,c\r', 'CSV');
    expect(errors).toEqual([]);
    expect(rows.map((r) => [r.row, r.line, r.record.text])).toEqual([
      [1, 2, 'a\rb'],
      [2, 4, 'c'],
    ]);
  });

  it('reports a broken header as a file-level error', () => {
    const { rows, errors } = parseRecords('"id,text\n1,a\n', 'CSV');
    expect(rows).toEqual([]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ row: 0, line: 1 });
  });

  it('trims header names', () => {
    expect(parseRecords(' id , text \n1,a\n', 'CSV').columns).toEqual(['id', 'text']);
  });
});

describe('detectDelimiter', () => {
  it('counts only the header line and ignores delimiters inside quotes', () => {
    expect(detectDelimiter('"a,b,c";d;e\n1,2,3,4,5,6')).toBe(';');
    expect(detectDelimiter('single\n1')).toBe(',');
    expect(detectDelimiter('a;b,c\n')).toBe(',');
  });
});

describe('parseRecords JSON', () => {
  it('reads an array of objects, keeping JSON types', () => {
    const json = `${BOM}[{"id": 1, "text": "één", "n": 2.5, "l": ["a"], "x": null}, {"id": "b", "text": "přítomnost"}]`;
    const { rows, errors } = parseRecords(json, 'JSON');
    expect(errors).toEqual([]);
    expect(rows).toEqual([
      { row: 1, record: { id: 1, text: 'één', n: 2.5, l: ['a'], x: null } },
      { row: 2, record: { id: 'b', text: 'přítomnost' } },
    ]);
  });

  it('rejects non-object elements by row', () => {
    const { rows, errors } = parseRecords('[{"id": 1}, 2, null, ["x"], {"id": 3}]', 'JSON');
    expect(rows.map((r) => r.row)).toEqual([1, 5]);
    expect(errors).toEqual([
      { row: 2, reason: 'expected an object, got a number' },
      { row: 3, reason: 'expected an object, got null' },
      { row: 4, reason: 'expected an object, got an array' },
    ]);
  });

  it('rejects a document that is not an array', () => {
    expect(parseRecords('{"id": 1}', 'JSON').errors).toEqual([
      { row: 0, reason: 'a JSON import must be an array of objects, got an object' },
    ]);
  });

  it('names the rows and lines of broken elements and still reads the good ones', () => {
    const json = '[\n  {"id": 1, "text": "a, [b] {c}"},\n  {"id": 2, "text": },\n  {"id": 3, "text": "c"},\n  {"id": 4 "text": "d"}\n]';
    const { rows, errors } = parseRecords(json, 'JSON');
    expect(rows.map((r) => [r.row, r.line])).toEqual([
      [1, 2],
      [3, 4],
    ]);
    expect(errors.map((e) => [e.row, e.line])).toEqual([
      [2, 3],
      [4, 5],
    ]);
    expect(errors[0].reason).toMatch(/^invalid JSON: /);
    expect(errors[0].reason).not.toContain('"text"'); // the element text is not echoed
  });

  it('reports an unclosed array, a trailing comma and trailing garbage', () => {
    expect(parseRecords('[{"id": 1},\n{"id": 2}', 'JSON').errors).toEqual([
      { row: 0, line: 2, reason: "unexpected end of file: the array is not closed with ']'" },
    ]);
    expect(parseRecords('[{"id": 1},\n{"id": 2}', 'JSON').rows).toHaveLength(2);
    expect(parseRecords('[{"id": 1},\n', 'JSON').errors).toEqual([
      { row: 0, line: 2, reason: "unexpected end of file: the array is not closed with ']'" },
    ]);
    expect(parseRecords('[{"id": 1}, {"id": [2}', 'JSON').errors).toEqual([
      { row: 2, line: 1, reason: 'unexpected end of file inside this element' },
    ]);
    const mismatched = parseRecords('[{"id": 1}, {"id": [2}]', 'JSON').errors;
    expect(mismatched.map((e) => e.row)).toEqual([2, 0]);
    expect(mismatched[0].reason).toMatch(/^invalid JSON/);
    expect(parseRecords('[{"id": 1}, {"id": 2},]', 'JSON').errors).toEqual([
      { row: 2, line: 1, reason: 'trailing comma after the last element' },
    ]);
    expect(parseRecords('[{"id": 1}] x', 'JSON').errors).toEqual([
      { row: 0, line: 1, reason: 'unexpected content after the closing bracket of the array' },
    ]);
    expect(parseRecords('[{"id": "unterminated}]', 'JSON').errors).toEqual([
      { row: 1, line: 1, reason: 'unterminated string at the end of the file' },
    ]);
  });

  it('rejects text that is not JSON at all', () => {
    const { errors } = parseRecords('id,text\n1,a', 'JSON');
    expect(errors).toHaveLength(1);
    expect(errors[0].row).toBe(0);
    expect(errors[0].reason).toMatch(/^a JSON import must be an array of objects/);
  });
});

describe('parseRecords JSONL', () => {
  it('reads one object per line, skipping blank lines, with CRLF and a BOM', () => {
    const jsonl = `${BOM}{"id": 1, "text": "Česká"}\r\n\r\n{"id": 2, "text": "één"}\r\n`;
    const { rows, errors } = parseRecords(jsonl, 'JSONL');
    expect(errors).toEqual([]);
    expect(rows).toEqual([
      { row: 1, line: 1, record: { id: 1, text: 'Česká' } },
      { row: 2, line: 3, record: { id: 2, text: 'één' } },
    ]);
  });

  it('names the row and line of bad JSON and non-objects', () => {
    const { rows, errors } = parseRecords('{"id": 1}\n{"id": \n\n[1]\n{"id": 4}', 'JSONL');
    expect(rows.map((r) => r.record.id)).toEqual([1, 4]);
    expect(errors.map((e) => [e.row, e.line])).toEqual([
      [2, 2],
      [3, 4],
    ]);
    expect(errors[0].reason).toMatch(/^invalid JSON/);
    expect(errors[1].reason).toBe('expected an object, got an array');
  });
});
