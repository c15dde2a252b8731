import { parseRecords, parseReports } from '../../../src/modules/imports';

describe('parseReports', () => {
  it('reads ids, texts and the other fields as metadata, diacritics intact', () => {
    const { rows } = parseRecords(
      '\uFEFFpatientID;Text;hospital\r\n7;"Česká republika, přítomnost metastáz\r\nG3";Brno\r\nP-8;ongedifferentieerd, één;Leiden\r\n',
      'CSV',
    );
    const { reports, errors } = parseReports(rows, { idField: 'patientID', textField: 'Text' });
    expect(errors).toEqual([]);
    expect(reports).toEqual([
      { externalId: '7', text: 'Česká republika, přítomnost metastáz\r\nG3', metadata: { hospital: 'Brno' }, row: 1 },
      { externalId: 'P-8', text: 'ongedifferentieerd, één', metadata: { hospital: 'Leiden' }, row: 2 },
    ]);
  });

  it('converts numeric ids to strings, trims ids, and keeps text whitespace except a trailing \\r', () => {
    const { rows } = parseRecords('[{"id": 12, "text": "  lead and trail \\n\\r", "m": 1}, {"id": " x ", "text": "t"}]', 'JSON');
    const { reports, errors } = parseReports(rows, { idField: 'id', textField: 'text' });
    expect(errors).toEqual([]);
    expect(reports.map((r) => [r.externalId, r.text, r.metadata])).toEqual([
      ['12', '  lead and trail \n', { m: 1 }],
      ['x', 't', {}],
    ]);
  });

  it('keeps only the named metadata fields', () => {
    const { rows } = parseRecords('id,text,a,b\n1,t,x,y\n', 'CSV');
    expect(parseReports(rows, { idField: 'id', textField: 'text', metadataFields: ['b'] }).reports[0].metadata).toEqual({ b: 'y' });
    expect(parseReports(rows, { idField: 'id', textField: 'text', metadataFields: [] }).reports[0].metadata).toEqual({});
  });

  it('rejects missing ids, empty texts, non-string texts and duplicates, naming rows', () => {
    const { rows } = parseRecords(
      '[{"id": "a", "text": "ok"}, {"id": "", "text": "t"}, {"id": "c", "text": "  "}, {"id": "d", "text": 5},' +
        ' {"text": "no id"}, {"id": "a", "text": "dup"}, {"id": true, "text": "t"}, {"id": "e"}]',
      'JSON',
    );
    const { reports, errors } = parseReports(rows, { idField: 'id', textField: 'text' });
    expect(reports.map((r) => r.externalId)).toEqual(['a']);
    expect(errors).toEqual([
      { row: 2, field: 'id', reason: "empty id in field 'id'" },
      { row: 3, field: 'text', reason: "empty text in field 'text'" },
      { row: 4, field: 'text', reason: "text field 'text' must be a string, got number" },
      { row: 5, field: 'id', reason: "missing id field 'id'" },
      { row: 6, field: 'id', reason: "duplicate external id 'a' (also in row 1)" },
      { row: 7, field: 'id', reason: "id field 'id' must be a string or a number, got a boolean" },
      { row: 8, field: 'text', reason: "missing text field 'text'" },
    ]);
  });

  it('treats 12 and "12" as the same id', () => {
    const { rows } = parseRecords('[{"id": 12, "text": "a"}, {"id": "12", "text": "b"}]', 'JSON');
    expect(parseReports(rows, { idField: 'id', textField: 'text' }).errors).toEqual([
      { row: 2, field: 'id', reason: "duplicate external id '12' (also in row 1)" },
    ]);
  });

  it('carries CSV lines into row errors', () => {
    const { rows } = parseRecords('id,text\n1,"multi\nline"\n1,again\n', 'CSV');
    expect(parseReports(rows, { idField: 'id', textField: 'text' }).errors).toEqual([
      { row: 2, line: 4, field: 'id', reason: "duplicate external id '1' (also in row 1)" },
    ]);
  });

  it('reports a misnamed column once, listing the columns', () => {
    const { rows } = parseRecords('id,Text\n1,a\n2,b\n', 'CSV');
    expect(parseReports(rows, { idField: 'id', textField: 'text', metadataFields: ['site'] }).errors).toEqual([
      { row: 0, field: 'text', reason: "text field 'text' not found; the file has 'id', 'Text'" },
      { row: 0, field: 'site', reason: "metadata field 'site' not found; the file has 'id', 'Text'" },
    ]);
    expect(parseReports(rows, { idField: 'Text', textField: 'Text' }).errors[0].reason).toMatch(/both 'Text'/);
  });

  it('returns nothing for no rows', () => {
    expect(parseReports([], { idField: 'id', textField: 'text' })).toEqual({ reports: [], errors: [] });
  });
});
