import { decodeCells } from '../../src/analytics/grid-input';
import { loadAnnotatorColumns, loadAnnotatorRecords, loadFrame, loadRunRecords, loadRunSnapshot, storeRunColumns, type RunColumns } from '../../src/modules/scoring/scoring-data';
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

  /** Each state of the stored columns, and which runs a read then finds not stored (and groups from their predictions). */
  const STATES: { name: string; prepare: () => Promise<void>; unstored: () => string[] }[] = [
    // The import stored each run's columns; the second run changed since.
    { name: 'as imported', prepare: async () => undefined, unstored: () => [runIds[1]!] },
    { name: 'all stored', prepare: () => t.dataSource.transaction((m) => storeRunColumns(m, runIds)), unstored: () => [] },
    { name: 'none stored', prepare: async () => void (await t.dataSource.query('DELETE FROM run_cell_columns')), unstored: () => runIds },
  ];

  it('gives every run and variable the cells of its records, each report in its place, stored or grouped', async () => {
    const frame = await loadFrame(t.dataSource, rowId(datasetId));
    const records = await loadRunRecords(t.dataSource, frame, runIds);
    let lastRead = new Map<string, RunColumns>();
    for (const state of STATES) {
      await state.prepare();
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
        expect({ state: state.name, unstored: snapshot.unstored }).toEqual({ state: state.name, unstored: state.unstored() });
        expect(snapshot.rowsRead).toBe(4 + 4);
        for (const id of runIds) {
          for (const key of keys) {
            const expected = records.get(id)!.map((record) => record?.[key]);
            expect({ state: state.name, id, key, column: decodeCells(read.get(id)!.get(key)!) }).toEqual({ state: state.name, id, key, column: expected });
          }
        }
      }
    }
    // What was compared: texts, numbers written differently, cells of absent keys, reports without a succeeded prediction.
    const absent = { status: 'INVALID', category: 'MISSING', detail: 'key absent' };
    expect(decodeCells(lastRead.get(runIds[0]!)!.get('site')!)).toEqual([
      { status: 'VALUE', value: 'bovenrug links' },
      { status: 'VALUE', value: 'onderbeen' },
      { status: 'VALUE', value: 'onderbeen' },
      undefined,
      absent,
    ]);
    expect(decodeCells(lastRead.get(runIds[1]!)!.get('breslow_mm')!)).toEqual([{ status: 'VALUE', value: 1 }, { status: 'VALUE', value: 1 }, absent, undefined, absent]);
    expect(decodeCells(lastRead.get(runIds[1]!)!.get('grade')!)).toEqual([{ status: 'VALUE', value: 'G1' }, { status: 'VALUE', value: 'G1' }, absent, undefined, { status: 'MISSING' }]);
    // Each distinct cell of a column is there once: equal cells share a code.
    const site = lastRead.get(runIds[0]!)!.get('site')!;
    expect(site.cells).toHaveLength(3);
    expect(site.codes[1]).toBe(site.codes[2]);
    expect(site.codes[3]).toBe(-1);
  });

  it('stores the columns a run had when they were grouped and never reads them once the run changed', async () => {
    const frame = await loadFrame(t.dataSource, rowId(datasetId));
    await t.dataSource.transaction((m) => storeRunColumns(m, runIds));
    const readRun = async () => {
      let site: RunColumns | undefined;
      const snapshot = await loadRunSnapshot(t.dataSource, frame, [runIds[0]!], keys, () => true, async (columns) => void (site = columns.get(runIds[0]!)), 1);
      return { unstored: snapshot.unstored, site: decodeCells(site!.get('site')!)[0] };
    };
    expect(await readRun()).toEqual({ unstored: [], site: { status: 'VALUE', value: 'bovenrug links' } });
    const change = (value: string) =>
      t.dataSource.query(
        `UPDATE predictions p SET cells = jsonb_set(cells, '{site}', $2::jsonb) FROM reports r WHERE r.id = p.report_id AND p.run_id = $1 AND r.external_id = 'R1'`,
        [runIds[0], JSON.stringify({ status: 'VALUE', value })],
      );
    try {
      await change('hals');
      expect(await readRun()).toEqual({ unstored: [runIds[0]], site: { status: 'VALUE', value: 'hals' } });
      await t.dataSource.transaction((m) => storeRunColumns(m, [runIds[0]!]));
      expect(await readRun()).toEqual({ unstored: [], site: { status: 'VALUE', value: 'hals' } });
    } finally {
      await change('bovenrug links');
    }
    // Writing the site back gave the run a new version again: the stored columns are stale until stored anew.
    const [row] = (await t.dataSource.query(
      'SELECT s.version = v.version AS current, s.rows FROM run_cell_columns s JOIN run_cell_versions v ON v.run_id = s.run_id WHERE s.run_id = $1',
      [runIds[0]],
    )) as { current: boolean; rows: number }[];
    expect(row).toEqual({ current: false, rows: 4 });
  });

  it('gives a run a new cell version with every statement that writes its predictions, and none once the run is gone', async () => {
    const payload = await importPredictions(t, datasetId, {
      format: 'JSONL',
      layout: 'JSON_COLUMN',
      modelName: 'versions',
      content: jsonl([{ id: 'R1', extracted_data: { grade: 'G1' } }, { id: 'R2', extracted_data: { grade: 'G2' } }]),
    });
    const runId = rowId(payload.run.id);
    const other = runIds[0]!;
    const versionOf = async (id: string) =>
      ((await t.dataSource.query('SELECT version FROM run_cell_versions WHERE run_id = $1', [id])) as { version: string }[])[0]?.version;
    // The import stored the run's columns at the version its own writes gave it.
    const [imported] = (await t.dataSource.query(
      'SELECT s.version = v.version AS current, s.rows FROM run_cell_columns s JOIN run_cell_versions v ON v.run_id = s.run_id WHERE s.run_id = $1',
      [runId],
    )) as { current: boolean; rows: number }[];
    expect(imported).toEqual({ current: true, rows: 2 });
    const seen = [await versionOf(runId)];
    const otherBefore = await versionOf(other);
    const writes = [
      `UPDATE predictions SET cells = cells WHERE run_id = $1`,
      `UPDATE predictions SET status = 'FAILED' WHERE run_id = $1 AND report_ordinal = (SELECT min(report_ordinal) FROM predictions WHERE run_id = $1)`,
      `DELETE FROM predictions WHERE run_id = $1 AND status = 'FAILED'`,
    ];
    for (const sql of writes) {
      await t.dataSource.query(sql, [runId]);
      seen.push(await versionOf(runId));
    }
    expect(seen.every((v) => v !== undefined)).toBe(true);
    expect(new Set(seen).size).toBe(seen.length);
    // A prediction moved to another run: both runs' versions move on.
    const elsewhere = rowId(
      (await importPredictions(t, datasetId, { format: 'JSONL', layout: 'JSON_COLUMN', modelName: 'versions-2', content: jsonl([{ id: 'R3', extracted_data: { grade: 'G3' } }]) })).run.id,
    );
    const elsewhereBefore = await versionOf(elsewhere);
    await t.dataSource.query(`UPDATE predictions SET run_id = $2 WHERE run_id = $1`, [runId, elsewhere]);
    seen.push(await versionOf(runId));
    expect(new Set(seen).size).toBe(seen.length);
    expect(await versionOf(elsewhere)).not.toBe(elsewhereBefore);
    await t.dataSource.query(`UPDATE predictions SET run_id = $1 WHERE run_id = $2 AND report_ordinal <> (SELECT min(report_ordinal) FROM predictions WHERE run_id = $2)`, [
      runId,
      elsewhere,
    ]);
    seen.push(await versionOf(runId));
    // Others' versions stay; a statement that touches no prediction gives none.
    await t.dataSource.query(`UPDATE predictions SET cells = cells WHERE run_id = $1 AND false`, [runId]);
    expect(await versionOf(runId)).toBe(seen[seen.length - 1]);
    expect(await versionOf(other)).toBe(otherBefore);
    // Deleting the run deletes its predictions (a cascade) and leaves no version or columns behind.
    await t.dataSource.query('DELETE FROM runs WHERE id = $1', [runId]);
    const left = (await t.dataSource.query(
      'SELECT (SELECT count(*) FROM run_cell_versions WHERE run_id = $1)::int AS versions, (SELECT count(*) FROM run_cell_columns WHERE run_id = $1)::int AS columns',
      [runId],
    )) as { versions: number; columns: number }[];
    expect(left).toEqual([{ versions: 0, columns: 0 }]);
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
