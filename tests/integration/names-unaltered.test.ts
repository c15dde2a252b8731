import { CREATE_DATASET, createProject, createUseCase, failure, IMPORT_REPORTS, ok } from '../support/graphql-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

const CREATE_PROJECT = `mutation ($input: CreateProjectInput!) { createProject(input: $input) { project { id name } } }`;

describe('names are stored as given or refused, never changed silently', () => {
  let t: TestApp;
  let useCaseId: string;

  beforeAll(async () => {
    t = await startTestApp();
    const project = await createProject(t, 'names');
    useCaseId = (await createUseCase(t, project.id)).id;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('counts a name in characters: 251 emoji (502 UTF-16 units) are a name, 501 are too long', async () => {
    const name = '🧬'.repeat(251);
    const created = ok(await t.gql(CREATE_PROJECT, { input: { name } })).createProject.project;
    expect(created.name).toBe(name);
    const dataset = ok(await t.gql(CREATE_DATASET, { input: { useCaseId, name: '🧬'.repeat(500) } })).createDataset.dataset;
    expect(dataset.name).toBe('🧬'.repeat(500));
    const refused = failure(await t.gql(CREATE_DATASET, { input: { useCaseId, name: '🧬'.repeat(501) } }), 'BAD_USER_INPUT');
    expect(refused.message).toBe('name is longer than 500 characters');
  });

  it('refuses a byte-order mark in a name instead of stripping it into another name', async () => {
    ok(await t.gql(CREATE_DATASET, { input: { useCaseId, name: 'cohort' } }));
    const refused = failure(await t.gql(CREATE_DATASET, { input: { useCaseId, name: '\ufeffcohort' } }), 'BAD_USER_INPUT');
    expect(refused.extensions).toMatchObject({ field: 'name' });
    expect(refused.message).toMatch(/byte-order mark \(U\+FEFF\)/);
    const project = failure(await t.gql(CREATE_PROJECT, { input: { name: '\ufeffnames' } }), 'BAD_USER_INPUT');
    expect(project.message).toMatch(/byte-order mark/);
    const rows = (await t.dataSource.query(`SELECT name FROM datasets WHERE name LIKE '%cohort'`)) as { name: string }[];
    expect(rows).toEqual([{ name: 'cohort' }]);
  });

  it('refuses a byte-order mark in a variable key, a tag, a prompt example name and an imported id', async () => {
    const project = await createProject(t, 'names 2');
    const refused = failure(
      await t.gql(`mutation ($input: CreateUseCaseInput!) { createUseCase(input: $input) { useCase { id } } }`, {
        input: { projectId: project.id, name: 'bom key', variables: [{ key: '\ufeffgrade', type: 'FREE_TEXT' }] },
      }),
      'BAD_USER_INPUT',
    );
    expect(JSON.stringify(refused.extensions)).toMatch(/variables\[0\]\.key/);
    const tagged = failure(
      await t.gql(`mutation ($input: CreateUseCaseInput!) { createUseCase(input: $input) { useCase { id } } }`, {
        input: { projectId: project.id, name: 'bom tag', tags: ['rads', '\ufeffrads'], variables: [{ key: 'grade', type: 'FREE_TEXT' }] },
      }),
      'BAD_USER_INPUT',
    );
    expect(tagged.extensions).toMatchObject({ field: 'tags' });
    const example = failure(
      await t.gql(`mutation ($input: CreatePromptInput!) { createPrompt(input: $input) { prompt { id } } }`, {
        input: { useCaseId, name: 'bom example', task: 'Extract {{json_template}}', examples: [{ name: '\ufeffexample-1', input: 'r', output: {} }] },
      }),
      'BAD_USER_INPUT',
    );
    expect(example.message).toMatch(/byte-order mark/);
    const datasetId = ok(await t.gql(CREATE_DATASET, { input: { useCaseId, name: 'ids' } })).createDataset.dataset.id;
    const content = `${JSON.stringify({ id: 'R1', text: 'een' })}\n${JSON.stringify({ id: '\ufeffR1', text: 'twee' })}\n`;
    const error = failure(await t.gql(IMPORT_REPORTS, { input: { datasetId, format: 'JSONL', content } }), 'BAD_USER_INPUT');
    expect(error.extensions?.rowErrors).toEqual([expect.objectContaining({ row: 2, reason: expect.stringMatching(/byte-order mark/) })]);
  });
});
