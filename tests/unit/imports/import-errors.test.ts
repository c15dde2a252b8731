import {
  assertNoImportErrors,
  formatRowError,
  ImportError,
  MAX_REPORTED_ERRORS,
  parseRecords,
  parseReports,
  sortRowErrors,
  type RowError,
} from '../../../src/modules/imports';

describe('ImportError', () => {
  it('carries code BAD_USER_INPUT and a message naming rows and reasons', () => {
    const err = new ImportError([
      { row: 2, reason: "missing text field 'text'" },
      { row: 5, line: 7, reason: "empty id in field 'id'" },
      { row: 5, reason: 'another problem' },
    ]);
    expect(err).toBeInstanceOf(Error);
    expect(err.code).toBe('BAD_USER_INPUT');
    expect(err.message).toBe(
      "2 rows rejected: row 2: missing text field 'text'; row 5 (line 7): empty id in field 'id'; row 5: another problem",
    );
    expect(err.totalErrors).toBe(3);
  });

  it('keeps the first 50 errors and the total count', () => {
    const errors: RowError[] = Array.from({ length: 120 }, (_, i) => ({ row: i + 1, reason: `bad ${i + 1}` }));
    const err = new ImportError(errors);
    expect(MAX_REPORTED_ERRORS).toBe(50);
    expect(err.errors).toHaveLength(50);
    expect(err.errors[49]).toEqual({ row: 50, reason: 'bad 50' });
    expect(err.totalErrors).toBe(120);
    expect(err.message.startsWith('120 rows rejected: row 1: bad 1; row 2: bad 2;')).toBe(true);
    expect(err.message.endsWith('row 10: bad 10; … (120 errors in total)')).toBe(true);
  });

  it('limits a real import with 75 bad rows to the first 50 errors', () => {
    const lines = ['id,text'];
    for (let i = 1; i <= 100; i += 1) lines.push(i % 4 === 0 ? `${i},ok` : `${i},`);
    const { rows } = parseRecords(lines.join('\n'), 'CSV');
    const { reports, errors } = parseReports(rows, { idField: 'id', textField: 'text' });
    expect(reports).toHaveLength(25);
    let thrown: unknown;
    try {
      assertNoImportErrors(errors);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ImportError);
    const err = thrown as ImportError;
    expect(err.totalErrors).toBe(75);
    expect(err.errors).toHaveLength(50);
    expect(err.errors[0]).toEqual({ row: 1, line: 2, field: 'text', reason: "empty text in field 'text'" });
    expect(err.message).toMatch(/^75 rows rejected: row 1 \(line 2\): empty text/);
  });

  it('says when the file as a whole is rejected', () => {
    expect(new ImportError([{ row: 0, reason: 'the file is empty' }]).message).toBe('file rejected: the file is empty');
    expect(formatRowError({ row: 0, line: 3, reason: 'x' })).toBe('line 3: x');
  });

  it('is thrown by assertNoImportErrors only when there are errors', () => {
    expect(() => assertNoImportErrors([])).not.toThrow();
    const { rows } = parseRecords('id,text\n1,\n2,ok\n', 'CSV');
    const { errors } = parseReports(rows, { idField: 'id', textField: 'text' });
    expect(() => assertNoImportErrors(errors)).toThrow("1 row rejected: row 1 (line 2): empty text in field 'text'");
  });

  it('sorts errors by row, file-level first, stable within a row', () => {
    const sorted = sortRowErrors([
      { row: 3, reason: 'a' },
      { row: 0, reason: 'file' },
      { row: 1, reason: 'b' },
      { row: 3, reason: 'c' },
    ]);
    expect(sorted.map((e) => e.reason)).toEqual(['file', 'b', 'a', 'c']);
  });
});
