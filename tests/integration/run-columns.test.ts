import { loadAnnotatorColumns, loadAnnotatorRecords, loadFrame, loadRunRecords, loadRunSnapshot, type RunColumns } from '../../src/modules/scoring/scoring-data';
import {
  STANDARD_REFERENCE,
  STANDARD_VARIABLES,
  createLoadedDataset,
  createProject,
  importAnnotations,
  importPredictions,
  jsonl,
  rowId,
} from '../support/graphql-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * The leaderboard reads prediction and reference cells as columns (each distinct cell once, with
 * its reports' ordinals); the other statistics read one record per prediction or report. Both
 * must see the same cells.
 */
describe('prediction cells read as columns', () => {
  let t: TestApp;
  let datasetId: string;
  let annotatorId: string;
  const runIds: string[] = [];
  const keys = STANDARD_VARIABLES.map((v) => v.key);

  beforeAll(async () => {
    t = await startTestApp();
    const project = await createProject(t, 'run columns');
    ({ datasetId } = await createLoadedDataset(t, project.id));
    annotatorId = rowId((await importAnnotations(t, datasetId, 'Consensus', 'CSV', STANDARD_REFERENCE, { isReference: true })).annotator.id);
    const runs: Record<string, unknown>[][] = [
      // Distinct texts and lists, equal categories, a report without prediction, a key left out.
      [
        { id: 'R1', extracted_data: { grade: 'G2', site: 'bovenrug links', organs: ['long', 'lever'], breslow_mm: '1,4' } },
        { id: 'R2', extracted_data: { grade: 'G2', site: 'onderbeen', organs: ['lever', 'long'], mitoses: '6/mm2' } },
        { id: 'R3', extracted_data: { grade: 'graad 3', site: 'onderbeen', organs: [], breslow_mm: 'three' } },
        { id: 'R5', extracted_data: { grade: 'G2', birads: '4B', metastasis: 'ja' } },
      ],
      [
        { id: 'R1', extracted_data: { grade: 'G1', breslow_mm: 1 } },
        { id: 'R2', extracted_data: { grade: 'G1', breslow_mm: 1.0 } },
        { id: 'R3', extracted_data: {} },
        { id: 'R4', extracted_data: { grade: 'G7', breslow_mm: 2.5 } },
        { id: 'R5', extracted_data: { grade: null, site: '' } },
      ],
    ];
    for (const [i, rows] of runs.entries()) {
      const payload = await importPredictions(t, datasetId, { format: 'JSONL', layout: 'JSON_COLUMN', modelName: `columns-${i}`, content: jsonl(rows) });
      runIds.push(rowId(payload.run.id));
    }
    // Numerically equal numbers written differently, a key no variable has, and a failed prediction.
    await t.dataSource.query(
      `UPDATE predictions p SET cells = cells || '{"breslow_mm": {"status": "VALUE", "value": 1.00}, "retired": {"status": "VALUE", "value": "x"}}'::jsonb
       FROM reports r WHERE r.id = p.report_id AND p.run_id = $1 AND r.external_id = 'R2'`,
      [runIds[1]],
    );
    await t.dataSource.query(
      `UPDATE predictions p SET status = 'FAILED' FROM reports r WHERE r.id = p.report_id AND p.run_id = $1 AND r.external_id = 'R4'`,
      [runIds[1]],
    );
  });
  afterAll(() => t.close());

  it('gives every run and variable the cells of its records, each report in its place', async () => {
    const frame = await loadFrame(t.dataSource, rowId(datasetId));
    const records = await loadRunRecords(t.dataSource, frame, runIds);
    let lastRead = new Map<string, RunColumns>();
    for (const perGroup of [1, 2]) {
      const read = new Map<string, RunColumns>();
      lastRead = read;
      const snapshot = await loadRunSnapshot(
        t.dataSource,
        frame,
        runIds,
        keys,
        () => true,
        async (columns) => {
          for (const [id, c] of columns) read.set(id, c);
        },
        perGroup,
      );
      expect(snapshot.rowsRead).toBe(4 + 4);
      for (const id of runIds) {
        for (const key of keys) {
          const expected = records.get(id)!.map((record) => record?.[key]);
          expect({ id, key, column: read.get(id)!.get(key) }).toEqual({ id, key, column: expected });
        }
      }
    }
    // What was compared: texts, numbers written differently, cells of absent keys, reports without a succeeded prediction.
    const absent = { status: 'INVALID', category: 'MISSING', detail: 'key absent' };
    expect(lastRead.get(runIds[0]!)!.get('site')).toEqual([
      { status: 'VALUE', value: 'bovenrug links' },
      { status: 'VALUE', value: 'onderbeen' },
      { status: 'VALUE', value: 'onderbeen' },
      undefined,
      absent,
    ]);
    expect(lastRead.get(runIds[1]!)!.get('breslow_mm')).toEqual([{ status: 'VALUE', value: 1 }, { status: 'VALUE', value: 1 }, absent, undefined, absent]);
    expect(lastRead.get(runIds[1]!)!.get('grade')).toEqual([{ status: 'VALUE', value: 'G1' }, { status: 'VALUE', value: 'G1' }, absent, undefined, { status: 'MISSING' }]);
  });

  it('reads only the runs asked for', async () => {
    const frame = await loadFrame(t.dataSource, rowId(datasetId));
    const seen: string[] = [];
    const snapshot = await loadRunSnapshot(
      t.dataSource,
      frame,
      runIds,
      keys,
      (id) => id === runIds[1],
      async (columns) => {
        seen.push(...columns.keys());
      },
      4,
    );
    expect(seen).toEqual([runIds[1]]);
    expect(snapshot.rowsRead).toBe(4);
    expect([...snapshot.fingerprints.values()].map((f) => f.rows)).toEqual([4, 4]);
  });

  it('gives the reference the cells of its records, each report in its place', async () => {
    const frame = await loadFrame(t.dataSource, rowId(datasetId));
    const records = await loadAnnotatorRecords(t.dataSource, frame, annotatorId);
    const columns = await loadAnnotatorColumns(t.dataSource, frame, annotatorId);
    expect([...columns.keys()]).toEqual(keys);
    for (const key of keys) expect({ key, column: columns.get(key) }).toEqual({ key, column: records.map((record) => record?.[key]) });
    // Values, MISSING cells (empty in the file) and variables the file leaves out are among them.
    expect(columns.get('breslow_mm')).toEqual([{ status: 'VALUE', value: 1.4 }, { status: 'MISSING' }, { status: 'VALUE', value: 3.1 }, { status: 'MISSING' }, { status: 'MISSING' }]);
    expect(columns.get('site')).toEqual([undefined, undefined, undefined, undefined, undefined]);
  });
});
