import { parseAnnotations, parseRecords } from '../../../src/modules/imports';

const vars = ['Grade', 'Breslow thickness', 'Organs'];

describe('parseAnnotations', () => {
  it('distinguishes an absent column (not annotated) from an empty cell (MISSING)', () => {
    const { rows } = parseRecords('id;Grade;Breslow thickness;remark\n1;G2;;x\n2;ongedifferentieerd, één;1,5;\n', 'CSV');
    const { annotations, unknownColumns, errors } = parseAnnotations(rows, { idField: 'id', variableKeys: vars });
    expect(errors).toEqual([]);
    expect(unknownColumns).toEqual(['remark']);
    expect(annotations).toEqual([
      { externalId: '1', values: { Grade: 'G2', 'Breslow thickness': '' }, row: 1 },
      { externalId: '2', values: { Grade: 'ongedifferentieerd, één', 'Breslow thickness': '1,5' }, row: 2 },
    ]);
    expect('Organs' in annotations[0].values).toBe(false);
  });

  it('keeps JSON types and leaves absent keys out per record', () => {
    const { rows } = parseRecords(
      '{"id": 1, "Grade": "G1", "Breslow thickness": 2.5, "Organs": ["lever", "long"]}\n{"id": 2, "Grade": null}\n{"id": 3}',
      'JSONL',
    );
    const { annotations, errors } = parseAnnotations(rows, { idField: 'id', variableKeys: vars });
    expect(errors).toEqual([]);
    expect(annotations.map((a) => a.values)).toEqual([
      { Grade: 'G1', 'Breslow thickness': 2.5, Organs: ['lever', 'long'] },
      { Grade: null },
      {},
    ]);
  });

  it('reads variables from mapped columns', () => {
    const { rows } = parseRecords('pid,graad,dikte,Grade\n1,G3,0.8,ignored\n', 'CSV');
    const { annotations, unknownColumns, errors } = parseAnnotations(rows, {
      idField: 'pid',
      variableKeys: vars,
      columnMap: { Grade: 'graad', 'Breslow thickness': 'dikte' },
    });
    expect(errors).toEqual([]);
    expect(annotations[0].values).toEqual({ Grade: 'G3', 'Breslow thickness': '0.8' });
    expect(unknownColumns).toEqual(['Grade']);
  });

  it('rejects a file with none of the variable columns', () => {
    const { rows } = parseRecords('id,foo\n1,x\n', 'CSV');
    const { annotations, errors } = parseAnnotations(rows, { idField: 'id', variableKeys: vars });
    expect(annotations).toEqual([]);
    expect(errors).toEqual([
      {
        row: 0,
        reason: "none of the variable columns ('Grade', 'Breslow thickness', 'Organs') is in the file; the file has 'id', 'foo'",
      },
    ]);
  });

  it('rejects duplicate and missing ids', () => {
    const { rows } = parseRecords('id,Grade\n1,G1\n,G2\n1,G3\n2,G1\n', 'CSV');
    const { annotations, errors } = parseAnnotations(rows, { idField: 'id', variableKeys: vars });
    expect(annotations.map((a) => a.externalId)).toEqual(['1', '2']);
    expect(errors).toEqual([
      { row: 2, line: 3, field: 'id', reason: "empty id in field 'id'" },
      { row: 3, line: 4, field: 'id', reason: "duplicate external id '1' (also in row 1)" },
    ]);
  });

  it('rejects a column map naming an unknown variable or the id column', () => {
    const { rows } = parseRecords('id,Grade\n1,G1\n', 'CSV');
    const result = parseAnnotations(rows, { idField: 'id', variableKeys: vars, columnMap: { Stage: 's', Grade: 'id' } });
    expect(result.errors).toEqual([
      { row: 0, field: 'Stage', reason: "column map names 'Stage', which is not a variable" },
      { row: 0, field: 'id', reason: "variable 'Grade' is read from the id column 'id'" },
    ]);
  });

  it('reports a missing id column once', () => {
    const { rows } = parseRecords('ID,Grade\n1,G1\n2,G2\n', 'CSV');
    expect(parseAnnotations(rows, { idField: 'id', variableKeys: vars }).errors).toEqual([
      { row: 0, field: 'id', reason: "id field 'id' not found; the file has 'ID', 'Grade'" },
    ]);
  });
});
