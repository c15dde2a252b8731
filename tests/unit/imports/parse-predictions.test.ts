import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import expected from './fixtures/framework-expected.json';
import { parsePredictions, parseRecords, PredictionReader, readExtractedObject, type ParsePredictionsOptions } from '../../../src/modules/imports';

const fixture = (name: string): string => readFileSync(join(__dirname, 'fixtures', name), 'utf8');

describe('parsePredictions MEDICAL_RECORD_LLM_CSV (files written by pandas as the framework does)', () => {
  it('reads a zero-shot output: Python dict literals, raw output and reasoning', () => {
    const { rows, errors: csvErrors } = parseRecords(fixture('framework-zeroshot.csv'), 'CSV');
    expect(csvErrors).toEqual([]);
    const { predictions, errors, warnings } = parsePredictions(rows, { layout: 'MEDICAL_RECORD_LLM_CSV' });
    expect(errors).toEqual([]);
    expect(warnings).toEqual([]);
    expect(predictions.map((p) => p.externalId)).toEqual(expected.ids);
    expect(predictions.map((p) => p.object)).toEqual(expected.objects);
    expect(predictions.map((p) => p.raw)).toEqual(expected.zeroshot_raw);
    expect(predictions.map((p) => p.reasoning)).toEqual(expected.zeroshot_reasoning);
    // no object at all is MISSING (no parse error); a malformed one is OUT_OF_FORMAT
    expect(predictions[2].parseError).toBeNull();
    expect(predictions[3].parseError).toMatch(/^neither JSON nor a Python literal: /);
    expect(predictions[0].parseError).toBeNull();
    expect(predictions.every((p) => p.samples === undefined)).toBe(true);
  });

  it('joins prompt-graph reasoning steps with blank lines; raw output is absent', () => {
    const { rows } = parseRecords(fixture('framework-promptgraph.csv'), 'CSV');
    const { predictions, errors } = parsePredictions(rows, { layout: 'MEDICAL_RECORD_LLM_CSV', idField: 'patientID' });
    expect(errors).toEqual([]);
    expect(predictions.map((p) => p.reasoning)).toEqual(expected.promptgraph_reasoning);
    expect(predictions.map((p) => p.raw)).toEqual([null, null, null, null]);
    expect(predictions.map((p) => p.object)).toEqual(expected.objects);
  });

  it('keeps self-consistency candidates as samples', () => {
    const { rows } = parseRecords(fixture('framework-selfconsistency.csv'), 'CSV');
    const { predictions, errors } = parsePredictions(rows, { layout: 'MEDICAL_RECORD_LLM_CSV' });
    expect(errors).toEqual([]);
    expect(predictions.map((p) => p.samples ?? null)).toEqual(expected.selfconsistency_samples);
  });

  it('warns about unreadable candidates without rejecting the row', () => {
    const csv = 'id,extracted_data,candidates\n1,"{\'a\': 1}","[{\'temperature\': 0.5,"\n2,"{\'a\': 2}",{}\n';
    const { predictions, errors, warnings } = parsePredictions(parseRecords(csv, 'CSV').rows, { layout: 'MEDICAL_RECORD_LLM_CSV' });
    expect(errors).toEqual([]);
    expect(predictions.map((p) => p.object)).toEqual([{ a: 1 }, { a: 2 }]);
    expect(warnings.map((w) => [w.row, w.field])).toEqual([
      [1, 'candidates'],
      [2, 'candidates'],
    ]);
    expect(warnings[1].reason).toBe('candidates ignored: expected a list, got a dict');
  });

  it('finds the id column from the default list or reports that none is there', () => {
    const withPatientId = parseRecords('patient_id,extracted_data\n9,"{}"\n', 'CSV').rows;
    expect(parsePredictions(withPatientId, { layout: 'MEDICAL_RECORD_LLM_CSV' }).predictions[0].externalId).toBe('9');
    const none = parseRecords('nr,extracted_data\n9,"{}"\n', 'CSV').rows;
    const { errors } = parsePredictions(none, { layout: 'MEDICAL_RECORD_LLM_CSV' });
    expect(errors).toHaveLength(1);
    expect(errors[0].row).toBe(0);
    expect(errors[0].reason).toMatch(/^no id column: name one, or use one of 'patientID', 'Patient-ID', 'patient_id', 'id', 'report_id'/);
    const noData = parseRecords('id,text\n9,x\n', 'CSV').rows;
    expect(parsePredictions(noData, { layout: 'MEDICAL_RECORD_LLM_CSV' }).errors[0].reason).toMatch(/^framework column 'extracted_data' not found/);
  });

  it('rejects missing and duplicate ids but not unparsable objects', () => {
    const csv = 'patientID,extracted_data\nA,"{\'x\': 1}"\n,"{}"\nA,"{\'x\': 2}"\nB,not a dict\nC,"[1, 2]"\nD,None\n';
    const { predictions, errors } = parsePredictions(parseRecords(csv, 'CSV').rows, { layout: 'MEDICAL_RECORD_LLM_CSV' });
    expect(errors).toEqual([
      { row: 2, line: 3, field: 'patientID', reason: "empty id in field 'patientID'" },
      { row: 3, line: 4, field: 'patientID', reason: "duplicate external id 'A' (also in row 1)" },
    ]);
    expect(predictions.map((p) => [p.externalId, p.object, p.parseError === null])).toEqual([
      ['A', { x: 1 }, true],
      ['B', null, false],
      ['C', null, false],
      ['D', null, true],
    ]);
    expect(predictions[2].parseError).toBe('expected an object, got a list');
  });
});

describe('parsePredictions JSON_COLUMN', () => {
  it('takes objects from JSON as-is and parses JSON or Python strings from CSV', () => {
    const jsonl = '{"rid": 1, "out": {"Grade": "G2", "n": 3}, "raw": "```json {...}```", "why": ["a", "b"]}\n{"rid": 2, "out": null}';
    const fromJson = parsePredictions(parseRecords(jsonl, 'JSONL').rows, {
      layout: 'JSON_COLUMN',
      idField: 'rid',
      objectField: 'out',
      rawField: 'raw',
      reasoningField: 'why',
    });
    expect(fromJson.errors).toEqual([]);
    expect(fromJson.predictions).toEqual([
      { externalId: '1', row: 1, object: { Grade: 'G2', n: 3 }, parseError: null, raw: '```json {...}```', reasoning: 'a\n\nb' },
      { externalId: '2', row: 2, object: null, parseError: null, raw: null, reasoning: null },
    ]);

    const csv = 'id;json\n1;{"Graad": "ongedifferentieerd, één"}\n2;"{\'Graad\': \'G1\', \'ok\': True}"\n3;{"Graad": \n4;\n';
    const fromCsv = parsePredictions(parseRecords(csv, 'CSV').rows, { layout: 'JSON_COLUMN', idField: 'id', objectField: 'json' });
    expect(fromCsv.errors).toEqual([]);
    expect(fromCsv.predictions.map((p) => p.object)).toEqual([{ Graad: 'ongedifferentieerd, één' }, { Graad: 'G1', ok: true }, null, null]);
    expect(fromCsv.predictions.map((p) => p.parseError === null)).toEqual([true, true, false, true]);
  });

  it('reports a missing object column once', () => {
    const { errors } = parsePredictions(parseRecords('id,x\n1,2\n', 'CSV').rows, { layout: 'JSON_COLUMN', idField: 'id', objectField: 'json' });
    expect(errors).toEqual([{ row: 0, field: 'json', reason: "object field 'json' not found; the file has 'id', 'x'" }]);
  });
});

describe('parsePredictions WIDE', () => {
  it('assembles the object from variable columns, absent stays absent and empty stays ""', () => {
    const csv = 'id,Grade,dikte,Organs,note\n1,G2,,lever,x\n2,één,"1,5",,y\n';
    const { predictions, errors } = parsePredictions(parseRecords(csv, 'CSV').rows, {
      layout: 'WIDE',
      idField: 'id',
      variableKeys: ['Grade', 'Breslow thickness', 'Organs', 'Site'],
      columnMap: { 'Breslow thickness': 'dikte' },
      reasoningField: 'note',
    });
    expect(errors).toEqual([]);
    expect(predictions.map((p) => [p.object, p.reasoning])).toEqual([
      [{ Grade: 'G2', 'Breslow thickness': '', Organs: 'lever' }, 'x'],
      [{ Grade: 'één', 'Breslow thickness': '1,5', Organs: '' }, 'y'],
    ]);
    expect('Site' in predictions[0].object!).toBe(false);
  });

  it('rejects a file with none of the variable columns', () => {
    const { errors } = parsePredictions(parseRecords('id,x\n1,2\n', 'CSV').rows, { layout: 'WIDE', idField: 'id', variableKeys: ['Grade'] });
    expect(errors).toEqual([{ row: 0, reason: "none of the variable columns ('Grade') is in the file; the file has 'id', 'x'" }]);
  });
});

describe('readExtractedObject', () => {
  it.each([
    [undefined, null, false],
    ['', null, false],
    ['  None ', null, false],
    ['null', null, false],
    ['{"a": 1}', { a: 1 }, false],
    ["{'a': nan}", { a: null }, false],
    ['42', null, true],
    ["['a']", null, true],
    [7, null, true],
    [{ b: 2 }, { b: 2 }, false],
  ])('%j → %j (error: %s)', (cell, object, hasError) => {
    const r = readExtractedObject(cell);
    expect(r.object).toEqual(object);
    expect(r.parseError !== null).toBe(hasError);
  });
});

describe('parsePredictions RAW_OUTPUT', () => {
  const options = { layout: 'RAW_OUTPUT', idField: 'id', rawField: 'raw_output', finishReasonField: 'finish_reason' } as const;

  it('keeps the raw output and the finish reason; the object is left to the output parser', () => {
    const { rows } = parseRecords('{"id":"A","raw_output":"<think>x</think>{\\"a\\":1}","finish_reason":"length"}\n{"id":"B","raw_output":null}', 'JSONL');
    const { predictions, errors } = parsePredictions(rows, options);
    expect(errors).toEqual([]);
    expect(predictions).toEqual([
      { externalId: 'A', row: 1, object: null, parseError: null, raw: '<think>x</think>{"a":1}', reasoning: null, finishReason: 'length' },
      { externalId: 'B', row: 2, object: null, parseError: null, raw: null, reasoning: null },
    ]);
  });

  it('rejects repeated ids, non-text outputs and a file without the output field', () => {
    const { rows } = parseRecords('{"id":"A","raw_output":"x"}\n{"id":"A","raw_output":"y"}\n{"id":"B","raw_output":{"a":1}}', 'JSONL');
    const { errors } = parsePredictions(rows, options);
    expect(errors.map((e) => [e.row, e.field])).toEqual([
      [2, 'id'],
      [3, 'raw_output'],
    ]);
    const missing = parsePredictions(parseRecords('{"id":"A","text":"x"}', 'JSONL').rows, options);
    expect(missing.errors).toEqual([expect.objectContaining({ row: 0, field: 'raw_output' })]);
  });
});

describe('PredictionReader (a file read as it arrives)', () => {
  const feed = (reader: PredictionReader, rows: ReturnType<typeof parseRecords>['rows']) => rows.map((r) => reader.add(r)).filter((p) => p !== null);

  it('gives what parsePredictions gives for the whole file, record by record, in every layout', () => {
    const cases: [string, 'CSV' | 'JSONL', ParsePredictionsOptions][] = [
      ['patientID,extracted_data,raw_output\nA,"{\'x\': 1}",r\n,"{}",\nA,"{}",\nB,not a dict,\nC,None,\n', 'CSV', { layout: 'MEDICAL_RECORD_LLM_CSV' }],
      ['{"id":"A","o":{"x":1}}\n{"id":"B","o":"[1]"}\n{"id":"A","o":{}}\n{"o":{}}', 'JSONL', { layout: 'JSON_COLUMN', idField: 'id', objectField: 'o' }],
      ['{"id":"A","raw":"{}"}\n{"id":"B","raw":5}\n{"id":"C"}', 'JSONL', { layout: 'RAW_OUTPUT', idField: 'id', rawField: 'raw' }],
      ['id,grade,x\nA,G1,1\nB,,2\n', 'CSV', { layout: 'WIDE', idField: 'id', variableKeys: ['grade', 'site'] }],
      ['{"id":"A"}', 'JSONL', { layout: 'JSON_COLUMN', idField: 'id', objectField: 'missing' }],
    ];
    let withErrors = 0;
    for (const [text, format, options] of cases) {
      const rows = parseRecords(text, format).rows;
      const whole = parsePredictions(rows, options);
      const reader = new PredictionReader(options);
      const streamed = feed(reader, rows);
      const { errors, warnings, fileLevel } = reader.finish();
      expect({ predictions: fileLevel ? [] : streamed, errors, warnings }).toEqual(whole);
      if (whole.errors.length > 0) withErrors += 1;
    }
    // Row errors and a file-level error among the cases, not only clean files.
    expect(withErrors).toBeGreaterThanOrEqual(4);
  });

  it('framework layout without idField: a later record with a higher-ranked id column is a file-level error', () => {
    const rows = parseRecords('{"id":"A","extracted_data":{}}\n{"patientID":"B","id":"B","extracted_data":{}}', 'JSONL').rows;
    const reader = new PredictionReader({ layout: 'MEDICAL_RECORD_LLM_CSV' });
    expect(feed(reader, rows).map((p) => p.externalId)).toEqual(['A', 'B']);
    expect(reader.finish()).toEqual({
      errors: [{ row: 0, reason: "the first record's id column is 'id' but later records have 'patientID': name the id column (idField)" }],
      warnings: [],
      fileLevel: true,
    });
    // The whole file at once sees every column and takes patientID (row 1 then has no id).
    expect(parsePredictions(rows, { layout: 'MEDICAL_RECORD_LLM_CSV' }).errors).toEqual([
      { row: 1, line: 1, field: 'patientID', reason: "missing id field 'patientID'" },
    ]);
  });
});
