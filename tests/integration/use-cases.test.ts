import {
  CREATE_PROMPT,
  CREATE_USE_CASE,
  createDataset,
  createLoadedDataset,
  createProjectWithKeys,
  createUseCase,
  csv,
  DELETE_USE_CASE,
  expectAccessErrors,
  failure,
  importAnnotations,
  importPredictions,
  jsonl,
  ok,
  predictionFields,
  rowId,
  STANDARD_VARIABLES,
  UPDATE_USE_CASE,
  type ProjectKeys,
} from '../support/graphql-fixtures';
import { startTestApp, type GraphQLResponse, type TestApp } from '../support/test-app';

const DEFAULT_MISSING_TOKENS = ['not specified', 'missing', 'none', 'n/a', 'unknown', 'not applicable'];

interface Problem {
  field: string;
  reason: string;
}

function problemsOf(result: GraphQLResponse<any>): Problem[] {
  return failure(result, 'BAD_USER_INPUT').extensions?.problems as Problem[];
}

describe('use cases', () => {
  let t: TestApp;
  let a: ProjectKeys;
  let b: ProjectKeys;

  beforeAll(async () => {
    t = await startTestApp();
    a = await createProjectWithKeys(t, 'Use case project A');
    b = await createProjectWithKeys(t, 'Use case project B');
  });
  afterAll(() => t.close());

  async function useCaseCount(projectId: string): Promise<number> {
    const [{ n }] = (await t.dataSource.query('SELECT count(*)::int AS n FROM use_cases WHERE project_id = $1', [rowId(projectId)])) as [{ n: number }];
    return n;
  }

  describe('createUseCase', () => {
    it('creates a use case with variables of every type, in order', async () => {
      const input = {
        projectId: a.id,
        name: '  Melanoma pathology (Dutch)  ',
        description: 'Synthetic melanoma reports',
        language: 'nl',
        reportType: 'pathology',
        tags: [' pathology ', 'melanoma', 'pathology', ''],
        variables: [
          ...STANDARD_VARIABLES,
          { key: 'subtype', type: 'CATEGORICAL', options: [' Nodular ', 'Superficial spreading'], graphStep: 2, dependsOn: { key: 'grade', values: ['G2'] } },
        ].map((v) => (v.key === 'grade' ? { ...v, graphStep: 1, weight: 2, default: 'Not specified' } : v)),
      };
      const useCase = ok(await t.gql(CREATE_USE_CASE, { input }, a.editor)).createUseCase.useCase;
      expect(useCase).toMatchObject({
        name: 'Melanoma pathology (Dutch)',
        description: 'Synthetic melanoma reports',
        language: 'nl',
        reportType: 'pathology',
        tags: ['pathology', 'melanoma'],
        missingTokens: DEFAULT_MISSING_TOKENS,
      });
      expect(useCase.variables.map((v: { key: string }) => v.key)).toEqual([
        'grade',
        'metastasis',
        'breslow_mm',
        'site',
        'organs',
        'mitoses',
        'birads',
        'subtype',
      ]);
      expect(useCase.variables.map((v: { order: number }) => v.order)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      const byKey = Object.fromEntries(useCase.variables.map((v: { key: string }) => [v.key, v]));
      expect(byKey.grade).toMatchObject({
        type: 'CATEGORICAL',
        description: 'Tumour grade',
        options: ['G1', 'G2', 'G3', 'Not specified'],
        aliases: { 'graad 1': 'G1', 'graad 2': 'G2', 'graad 3': 'G3' },
        weight: 2,
        graphStep: 1,
        default: 'Not specified',
        dependsOn: null,
      });
      expect(byKey.breslow_mm).toMatchObject({ type: 'NUMERIC', tolerance: 0.05, options: null, weight: 1 });
      expect(byKey.birads.collapseMap).toEqual({ '4A': '4', '4B': '4', '4C': '4' });
      expect(byKey.subtype).toMatchObject({ options: ['Nodular', 'Superficial spreading'], dependsOn: { key: 'grade', values: ['G2'] } });

      const listed = ok(
        await t.gql('query ($id: ID!) { project(id: $id) { useCases(search: "Dutch reports") { totalCount nodes { id } } } }', { id: a.id }, a.viewer),
      );
      expect(listed.project.useCases).toEqual({ totalCount: 0, nodes: [] });
      const found = ok(await t.gql('query ($id: ID!) { project(id: $id) { useCases(search: "SYNTHETIC melanoma") { nodes { id } } } }', { id: a.id }, a.viewer));
      expect(found.project.useCases.nodes).toEqual([{ id: useCase.id }]);
      // LIKE wildcards in the search are taken literally.
      const wildcard = ok(await t.gql('query ($id: ID!) { project(id: $id) { useCases(search: "Melanoma%Dutch") { totalCount } } }', { id: a.id }));
      expect(wildcard.project.useCases.totalCount).toBe(0);
    });

    it('keeps custom missing tokens', async () => {
      const useCase = await createUseCase(t, a.id, { missingTokens: ['niet vermeld', 'onbekend'] });
      const data = ok(await t.gql('query ($id: ID!) { node(id: $id) { ... on UseCase { missingTokens } } }', { id: useCase.id }));
      expect(data.node.missingTokens).toEqual(['niet vermeld', 'onbekend']);
    });

    it('rejects invalid variables with BAD_USER_INPUT naming each problem, writing nothing', async () => {
      const before = await useCaseCount(a.id);
      const create = (variables: unknown[]) => t.gql(CREATE_USE_CASE, { input: { projectId: a.id, name: 'invalid', variables } });

      expect(problemsOf(await create([{ key: 'grade', type: 'CATEGORICAL' }]))).toEqual([
        { field: 'variables[0].options', reason: expect.stringContaining('needs options') },
      ]);
      expect(problemsOf(await create([{ key: 'ulcer', type: 'BINARY', options: [] }]))[0]?.field).toBe('variables[0].options');
      expect(
        problemsOf(
          await create([
            { key: 'size', type: 'NUMERIC' },
            { key: ' size ', type: 'FREE_TEXT' },
          ]),
        ),
      ).toEqual([{ field: 'variables[1].key', reason: expect.stringContaining('duplicates variables[0]') }]);
      expect(problemsOf(await create([{ key: 'grade', type: 'CATEGORICAL', options: ['G1', 'G2'], aliases: { g4: 'G4' } }]))).toEqual([
        { field: 'variables[0].aliases.g4', reason: '"G4" is not an option' },
      ]);
      expect(
        problemsOf(
          await create([
            { key: 'subtype', type: 'FREE_TEXT', graphStep: 1, dependsOn: { key: 'diagnosis', values: ['Melanoma'] } },
            { key: 'diagnosis', type: 'CATEGORICAL', options: ['Melanoma', 'Naevus'], graphStep: 2 },
          ]),
        ),
      ).toEqual([{ field: 'variables[0].dependsOn', reason: expect.stringContaining('earlier graph step') }]);
      expect(problemsOf(await create([{ key: 'x', type: 'FREE_TEXT', graphStep: 2, dependsOn: { key: 'nope', values: ['a'] } }]))[0]?.reason).toContain(
        'unknown variable',
      );
      expect(problemsOf(await create([]))[0]?.field).toBe('variables');
      expect(problemsOf(await create([{ key: 'n', type: 'NUMERIC', options: ['1'] }]))[0]?.field).toBe('variables[0].options');
      expect(problemsOf(await create([{ key: 't', type: 'FREE_TEXT', tolerance: 1 }]))[0]?.field).toBe('variables[0].tolerance');
      expect(problemsOf(await create([{ key: 'n', type: 'NUMERIC', tolerance: -1 }]))[0]?.field).toBe('variables[0].tolerance');
      expect(problemsOf(await create([{ key: 'n', type: 'NUMERIC', weight: 0 }]))[0]?.field).toBe('variables[0].weight');
      expect(problemsOf(await create([{ key: 't', type: 'FREE_TEXT', collapseMap: { a: 'b' } }]))[0]?.field).toBe('variables[0].collapseMap');
      expect(problemsOf(await create([{ key: 'c', type: 'CATEGORICAL', options: ['a', ' A '] }]))[0]?.reason).toContain('listed twice');
      expect(problemsOf(await create([{ key: 'b', type: 'BINARY', options: ['Yes', 'No', 'Unknown', 'Maybe'] }]))[0]?.field).toBe('variables[0].options');

      // Several problems come back together.
      const many = problemsOf(
        await create([
          { key: 'a', type: 'CATEGORICAL' },
          { key: 'a', type: 'NUMERIC', tolerance: -2 },
        ]),
      );
      expect(many.map((p) => p.field).sort()).toEqual(['variables[0].options', 'variables[1].key', 'variables[1].tolerance']);

      failure(await t.gql(CREATE_USE_CASE, { input: { projectId: a.id, name: ' ', variables: [{ key: 'x', type: 'FREE_TEXT' }] } }), 'BAD_USER_INPUT');
      failure(await t.gql(CREATE_USE_CASE, { input: { projectId: a.id, name: 'x', variables: [{ key: 'x', type: 'DATE' }] } }), 'BAD_USER_INPUT');
      expect(await useCaseCount(a.id)).toBe(before);
    });

    it('answers CONFLICT for a name already used in the project, not across projects', async () => {
      await createUseCase(t, a.id, { name: 'Brain MRI' });
      const before = await useCaseCount(a.id);
      failure(await t.gql(CREATE_USE_CASE, { input: { projectId: a.id, name: 'Brain MRI', variables: STANDARD_VARIABLES } }), 'CONFLICT');
      expect(await useCaseCount(a.id)).toBe(before);
      await createUseCase(t, b.id, { name: 'Brain MRI' });
    });

    it('enforces access: VIEWER is FORBIDDEN, other projects NOT_FOUND', async () => {
      const before = await useCaseCount(a.id);
      await expectAccessErrors(
        t,
        CREATE_USE_CASE,
        { projectId: a.id, name: 'guarded', variables: STANDARD_VARIABLES },
        { keys: a, forbiddenKeys: [a.viewer], idField: 'projectId', foreignId: b.id, unknownType: 'Project' },
      );
      expect(await useCaseCount(a.id)).toBe(before);
    });
  });

  describe('updateUseCase', () => {
    it('changes only the fields given', async () => {
      const useCase = await createUseCase(t, a.id, { name: 'Update me', description: 'old', language: 'nl', tags: ['x'] });
      const updated = ok(await t.gql(UPDATE_USE_CASE, { input: { id: useCase.id, description: 'new', tags: ['y', 'z'] } }, a.editor)).updateUseCase.useCase;
      expect(updated).toMatchObject({ name: 'Update me', description: 'new', language: 'nl', tags: ['y', 'z'] });
      expect(updated.variables.map((v: { id: string }) => v.id)).toEqual(useCase.variables.map((v) => v.id));
      const renamed = ok(await t.gql(UPDATE_USE_CASE, { input: { id: useCase.id, name: 'Updated', language: null } })).updateUseCase.useCase;
      expect(renamed).toMatchObject({ name: 'Updated', description: 'new', language: null });
    });

    it('replaces variables by key: kept ones keep their id and annotations', async () => {
      const { useCase, datasetId } = await createLoadedDataset(t, a.id);
      await importAnnotations(
        t,
        datasetId,
        'rater',
        'CSV',
        csv([
          ['id', 'grade', 'site', 'breslow_mm'],
          ['R1', 'G2', 'bovenrug links', '1,4'],
          ['R3', 'graad 3', 'onderbeen', '3.1'],
        ]),
      );
      const idOf = Object.fromEntries(useCase.variables.map((v) => [v.key, v.id]));
      const variables = [
        { key: 'site', type: 'FREE_TEXT' },
        { key: 'grade', type: 'CATEGORICAL', options: ['G1', 'G2', 'G3'], aliases: { 'graad 3': 'G3' } },
        { key: 'laterality', type: 'CATEGORICAL', options: ['left', 'right'] },
      ];
      const updated = ok(await t.gql(UPDATE_USE_CASE, { input: { id: useCase.id, variables } })).updateUseCase.useCase;
      expect(updated.variables.map((v: { key: string; order: number }) => [v.key, v.order])).toEqual([
        ['site', 0],
        ['grade', 1],
        ['laterality', 2],
      ]);
      expect(updated.variables[0].id).toBe(idOf.site);
      expect(updated.variables[1].id).toBe(idOf.grade);
      expect(updated.variables[1].options).toEqual(['G1', 'G2', 'G3']);
      expect(Object.values(idOf)).not.toContain(updated.variables[2].id);
      const removed = await t.dataSource.query('SELECT count(*)::int AS n FROM variables WHERE id = $1', [rowId(idOf.breslow_mm)]);
      expect(removed).toEqual([{ n: 0 }]);

      const annotations = ok(
        await t.gql(
          `query ($id: ID!) { node(id: $id) { ... on Dataset { reports(first: 10) { nodes { externalId
             annotations { variable { key } value status } } } } } }`,
          { id: datasetId },
        ),
      ).node.reports.nodes;
      const r1 = annotations.find((r: { externalId: string }) => r.externalId === 'R1');
      const r3 = annotations.find((r: { externalId: string }) => r.externalId === 'R3');
      const sorted = (list: { variable: { key: string } }[]) => [...list].sort((x, y) => x.variable.key.localeCompare(y.variable.key));
      expect(sorted(r1.annotations)).toEqual([
        { variable: { key: 'grade' }, value: 'G2', status: 'VALUE' },
        { variable: { key: 'site' }, value: 'bovenrug links', status: 'VALUE' },
      ]);
      expect(sorted(r3.annotations)).toEqual([
        { variable: { key: 'grade' }, value: 'G3', status: 'VALUE' },
        { variable: { key: 'site' }, value: 'onderbeen', status: 'VALUE' },
      ]);
    });

    it('renormalises annotations: a removed option makes stored values INVALID', async () => {
      const { useCase, datasetId } = await createLoadedDataset(t, a.id);
      await importAnnotations(
        t,
        datasetId,
        'rater',
        'JSONL',
        jsonl([
          { id: 'R1', grade: 'G3' },
          { id: 'R2', grade: 'G1' },
        ]),
      );
      const variables = STANDARD_VARIABLES.map((v) => (v.key === 'grade' ? { ...v, options: ['G1', 'G2', 'Not specified'], aliases: {} } : v));
      ok(await t.gql(UPDATE_USE_CASE, { input: { id: useCase.id, variables } }));
      const rows = (await t.dataSource.query(
        `SELECT r.external_id, a.status, a.value, a.invalid_category FROM annotations a JOIN reports r ON r.id = a.report_id
         WHERE a.dataset_id = $1 ORDER BY r.external_id`,
        [rowId(datasetId)],
      )) as { external_id: string; status: string; value: unknown; invalid_category: string | null }[];
      expect(rows).toEqual([
        { external_id: 'R1', status: 'INVALID', value: null, invalid_category: 'OTHER' },
        { external_id: 'R2', status: 'VALUE', value: 'G1', invalid_category: null },
      ]);
    });

    it('renormalises predictions: an added alias turns an INVALID field valid', async () => {
      const { useCase, datasetId } = await createLoadedDataset(t, a.id);
      const payload = await importPredictions(t, datasetId, {
        format: 'JSONL',
        layout: 'JSON_COLUMN',
        modelName: 'renormalise-model',
        content: jsonl([
          { id: 'R1', extracted_data: { grade: 'graad twee', metastasis: 'nee', site: 'onbekend' } },
          { id: 'R2', extracted_data: { grade: 'G1', metastasis: 'ja', site: 'long' } },
        ]),
      });
      const runId = payload.run.id;
      let fields = await predictionFields(t, runId);
      expect(fields.R1!.grade).toMatchObject({ valid: false, invalidCategory: 'OTHER', value: null });
      expect(fields.R1!.site).toMatchObject({ valid: true, missing: false, value: 'onbekend' });

      const variables = STANDARD_VARIABLES.map((v) => (v.key === 'grade' ? { ...v, aliases: { ...v.aliases, 'graad twee': 'G2' } } : v));
      ok(await t.gql(UPDATE_USE_CASE, { input: { id: useCase.id, variables } }));
      fields = await predictionFields(t, runId);
      expect(fields.R1!.grade).toEqual({ key: 'grade', value: 'G2', valid: true, missing: false, invalidCategory: null, skipped: false });
      expect(fields.R1!.metastasis).toMatchObject({ valid: true, value: 'No' });
      expect(fields.R2!.grade).toMatchObject({ valid: true, value: 'G1' });
      // Keys the model left out stay INVALID (MISSING).
      expect(fields.R2!.breslow_mm).toMatchObject({ valid: false, invalidCategory: 'MISSING' });

      // Changing only the missing tokens renormalises too.
      ok(await t.gql(UPDATE_USE_CASE, { input: { id: useCase.id, missingTokens: ['onbekend'] } }));
      fields = await predictionFields(t, runId);
      expect(fields.R1!.site).toMatchObject({ valid: true, missing: true, value: null });
      expect(fields.R1!.grade).toMatchObject({ valid: true, value: 'G2' });
      const values = ok(await t.gql('query ($id: ID!) { node(id: $id) { ... on Run { predictions { nodes { report { externalId } values } } } } }', { id: runId }))
        .node.predictions.nodes.find((p: { report: { externalId: string } }) => p.report.externalId === 'R1').values;
      expect(values).toMatchObject({ grade: 'G2', metastasis: 'No', site: null });
    });

    it('rejects invalid variables and leaves the use case as it was', async () => {
      const useCase = await createUseCase(t, a.id);
      const problems = problemsOf(
        await t.gql(UPDATE_USE_CASE, { input: { id: useCase.id, name: 'should not apply', variables: [{ key: 'g', type: 'CATEGORICAL', options: [] }] } }),
      );
      expect(problems[0]?.field).toBe('variables[0].options');
      const data = ok(await t.gql('query ($id: ID!) { node(id: $id) { ... on UseCase { name variables { id } } } }', { id: useCase.id }));
      expect(data.node.variables.map((v: { id: string }) => v.id)).toEqual(useCase.variables.map((v) => v.id));
      expect(data.node.name).not.toBe('should not apply');
      failure(await t.gql(UPDATE_USE_CASE, { input: { id: useCase.id, name: '  ' } }), 'BAD_USER_INPUT');
    });

    it('answers CONFLICT when renamed to a name in use', async () => {
      await createUseCase(t, a.id, { name: 'Taken name' });
      const other = await createUseCase(t, a.id, { name: 'Free name' });
      failure(await t.gql(UPDATE_USE_CASE, { input: { id: other.id, name: 'Taken name' } }), 'CONFLICT');
      const data = ok(await t.gql('query ($id: ID!) { node(id: $id) { ... on UseCase { name } } }', { id: other.id }));
      expect(data.node.name).toBe('Free name');
    });

    it('enforces access', async () => {
      const useCase = await createUseCase(t, a.id, { name: 'Guarded update' });
      const foreign = await createUseCase(t, b.id);
      await expectAccessErrors(
        t,
        UPDATE_USE_CASE,
        { id: useCase.id, name: 'changed' },
        { keys: a, forbiddenKeys: [a.viewer], idField: 'id', foreignId: foreign.id, unknownType: 'UseCase' },
      );
      const data = ok(await t.gql('query ($id: ID!) { node(id: $id) { ... on UseCase { name } } }', { id: useCase.id }));
      expect(data.node.name).toBe('Guarded update');
      const foreignName = ok(await t.gql('query ($id: ID!) { node(id: $id) { ... on UseCase { name } } }', { id: foreign.id }));
      expect(foreignName.node.name).not.toBe('changed');
    });
  });

  describe('deleteUseCase', () => {
    const tables = ['variables', 'datasets', 'prompts', 'runs'] as const;

    async function countsOf(useCaseId: string): Promise<Record<string, number>> {
      const id = rowId(useCaseId);
      const counts: Record<string, number> = {};
      for (const table of tables) {
        const [{ n }] = (await t.dataSource.query(`SELECT count(*)::int AS n FROM ${table} WHERE use_case_id = $1`, [id])) as [{ n: number }];
        counts[table] = n;
      }
      for (const [name, sql] of [
        ['reports', 'SELECT count(*)::int AS n FROM reports r JOIN datasets d ON d.id = r.dataset_id WHERE d.use_case_id = $1'],
        ['annotators', 'SELECT count(*)::int AS n FROM annotators x JOIN datasets d ON d.id = x.dataset_id WHERE d.use_case_id = $1'],
        ['annotations', 'SELECT count(*)::int AS n FROM annotations x JOIN datasets d ON d.id = x.dataset_id WHERE d.use_case_id = $1'],
        ['predictions', 'SELECT count(*)::int AS n FROM predictions p JOIN runs r ON r.id = p.run_id WHERE r.use_case_id = $1'],
      ] as const) {
        const [{ n }] = (await t.dataSource.query(sql, [id])) as [{ n: number }];
        counts[name] = n;
      }
      return counts;
    }

    async function loadedUseCase() {
      const { useCase, datasetId } = await createLoadedDataset(t, a.id);
      await importAnnotations(t, datasetId, 'rater', 'JSONL', jsonl([{ id: 'R1', grade: 'G1' }]), { isReference: true });
      ok(await t.gql(CREATE_PROMPT, { input: { useCaseId: useCase.id, name: 'p' } }));
      const run = await importPredictions(t, datasetId, {
        format: 'JSONL',
        layout: 'JSON_COLUMN',
        modelName: 'delete-test-model',
        content: jsonl([{ id: 'R1', extracted_data: { grade: 'G1' } }]),
      });
      return { useCase, datasetId, runId: run.run.id as string, modelId: run.run.model.id as string };
    }

    it('an ADMIN deletes a use case with everything under it', async () => {
      const { useCase, datasetId, runId, modelId } = await loadedUseCase();
      const before = await countsOf(useCase.id);
      expect(Object.values(before).every((n) => n > 0)).toBe(true);

      const result = ok(await t.gql(DELETE_USE_CASE, { input: { id: useCase.id } }, a.admin));
      expect(result.deleteUseCase.deletedId).toBe(useCase.id);
      expect(Object.values(await countsOf(useCase.id))).toEqual(Object.values(before).map(() => 0));
      const query = 'query ($id: ID!) { node(id: $id) { id } }';
      for (const id of [useCase.id, datasetId, runId, useCase.variables[0]!.id]) {
        expect(ok(await t.gql(query, { id })).node).toBeNull();
      }
      // The model belongs to the project and stays.
      expect(ok(await t.gql(query, { id: modelId })).node).toEqual({ id: modelId });
      failure(await t.gql(DELETE_USE_CASE, { input: { id: useCase.id } }, a.admin), 'NOT_FOUND');
    });

    it('is for ADMINs only, within their project', async () => {
      const { useCase } = await loadedUseCase();
      const before = await countsOf(useCase.id);
      const foreign = await createUseCase(t, b.id);
      await expectAccessErrors(
        t,
        DELETE_USE_CASE,
        { id: useCase.id },
        { keys: a, forbiddenKeys: [a.editor, a.viewer], idField: 'id', foreignId: foreign.id, unknownType: 'UseCase' },
      );
      expect(await countsOf(useCase.id)).toEqual(before);
      expect(ok(await t.gql('query ($id: ID!) { node(id: $id) { id } }', { id: foreign.id })).node).toEqual({ id: foreign.id });
    });

    it('leaves other use cases of the project alone', async () => {
      const keep = await createUseCase(t, a.id);
      const datasetId = await createDataset(t, keep.id);
      const { useCase } = await loadedUseCase();
      ok(await t.gql(DELETE_USE_CASE, { input: { id: useCase.id } }));
      const data = ok(await t.gql('query ($id: ID!) { node(id: $id) { ... on Dataset { id useCase { id } } } }', { id: datasetId }));
      expect(data.node).toEqual({ id: datasetId, useCase: { id: keep.id } });
    });
  });
});
