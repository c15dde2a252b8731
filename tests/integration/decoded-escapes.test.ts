/**
 * JSON escapes that become a NUL or half a surrogate pair only when the server itself decodes a
 * value (a list written as a JSON-array string, a bundle's rows): coded errors or INVALID values,
 * never PostgreSQL's 22P05/22P02 as an internal error.
 */
import { BUNDLE_FORMAT, BUNDLE_TABLES, BUNDLE_VERSION } from '../../src/modules/bundle/bundle.tables';
import { createLoadedDataset, createProject, failure, importAnnotations, ok, rowId, STANDARD_VARIABLES, UPDATE_USE_CASE } from '../support/graphql-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

const IMPORT_BUNDLE = `mutation($input: ImportProjectBundleInput!) { importProjectBundle(input: $input) { project { id } } }`;

describe('escapes decoded by the server', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a free-text annotation holding a JSON-array string with \\u0000 or \\ud800 becomes an OUT_OF_FORMAT list when the variable turns into a LIST', async () => {
    const project = await createProject(t, 'escapes');
    const { useCase, datasetId } = await createLoadedDataset(t, project.id);
    // As free text the escapes are six characters of text: stored as they are.
    await importAnnotations(t, datasetId, 'reference', 'CSV', 'id,site\nR1,"[""a\\u0000b""]"\nR2,"[""\\ud800""]"\nR3,"[""long""]"\n');
    const variables = STANDARD_VARIABLES.map((v) => (v.key === 'site' ? { ...v, type: 'LIST' } : v));
    ok(await t.gql(UPDATE_USE_CASE, { input: { id: useCase.id, variables } }));
    const rows = (await t.dataSource.query(
      `SELECT r.external_id, a.status, a.value, a.invalid_category FROM annotations a JOIN reports r ON r.id = a.report_id
       JOIN variables v ON v.id = a.variable_id WHERE a.dataset_id = $1 AND v.key = 'site' ORDER BY r.external_id`,
      [rowId(datasetId)],
    )) as { external_id: string; status: string; value: unknown; invalid_category: string | null }[];
    expect(rows).toEqual([
      { external_id: 'R1', status: 'INVALID', value: null, invalid_category: 'OUT_OF_FORMAT' },
      { external_id: 'R2', status: 'INVALID', value: null, invalid_category: 'OUT_OF_FORMAT' },
      { external_id: 'R3', status: 'VALUE', value: ['long'], invalid_category: null },
    ]);
  });

  it('a bundle row with a \\u0000 or \\ud800 escape is refused naming where it is', async () => {
    const bundle = (name: string) =>
      `{"format":${JSON.stringify(BUNDLE_FORMAT)},"version":${BUNDLE_VERSION},"project":{"id":"p"},${BUNDLE_TABLES.map((table) =>
        table.key === 'useCases' ? `"useCases":[{"id":"u1","name":"${name}"}]` : `${JSON.stringify(table.key)}:[]`,
      ).join(',')}}`;
    for (const name of ['a\\u0000b', 'half \\ud800']) {
      const error = failure(await t.gql(IMPORT_BUNDLE, { input: { name: `bundle ${name.length}`, content: bundle(name) } }), 'BAD_USER_INPUT');
      expect(error.extensions).toMatchObject({ field: 'content', path: 'useCases[0].name' });
    }
  });
});
