import {
  CREATE_PROMPT,
  createProjectWithKeys,
  createUseCase,
  expectAccessErrors,
  failure,
  ok,
  rowId,
  type ProjectKeys,
  type UseCaseFixture,
} from '../support/graphql-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

const PROMPTS = /* GraphQL */ `
  query ($id: ID!, $first: Int) {
    node(id: $id) {
      ... on UseCase { prompts(first: $first) { totalCount nodes { id name version } pageInfo { hasNextPage endCursor } } }
    }
  }`;

describe('prompts', () => {
  let t: TestApp;
  let a: ProjectKeys;
  let b: ProjectKeys;
  let useCase: UseCaseFixture;

  beforeAll(async () => {
    t = await startTestApp();
    a = await createProjectWithKeys(t, 'Prompt project A');
    b = await createProjectWithKeys(t, 'Prompt project B');
    useCase = await createUseCase(t, a.id, { name: 'Prompted' });
  });
  afterAll(() => t.close());

  async function promptCount(useCaseId: string): Promise<number> {
    const [{ n }] = (await t.dataSource.query('SELECT count(*)::int AS n FROM prompts WHERE use_case_id = $1', [rowId(useCaseId)])) as [{ n: number }];
    return n;
  }

  it('creates a prompt with its parts and examples', async () => {
    const input = {
      useCaseId: useCase.id,
      name: ' guided ',
      system: 'Je bent een patholoog. Antwoord alleen met JSON.',
      fieldInstructions: 'grade: G1, G2 of G3',
      task: 'Extraheer de velden uit het verslag.',
      exampleIntro: 'Voorbeelden:',
      final: 'Geef alleen het JSON-object.',
      settings: { guided: true, mergeMessages: false },
      examples: [
        {
          name: 'ex1',
          input: 'Melanoom, graad 2, Breslow 1,4 mm; één satelliet.',
          reasoning: 'Graad 2 staat er letterlijk.',
          output: { grade: 'G2', breslow_mm: 1.4, organs: [] },
        },
        { input: 'Geen tumor.', output: {} },
      ],
    };
    const prompt = ok(await t.gql(CREATE_PROMPT, { input }, a.editor)).createPrompt.prompt;
    expect(prompt).toMatchObject({
      name: 'guided',
      version: 1,
      system: input.system,
      fieldInstructions: input.fieldInstructions,
      task: input.task,
      exampleIntro: input.exampleIntro,
      final: input.final,
      settings: { guided: true, mergeMessages: false },
    });
    expect(prompt.examples).toEqual([
      { name: 'ex1', input: input.examples[0]!.input, reasoning: input.examples[0]!.reasoning, output: { grade: 'G2', breslow_mm: 1.4, organs: [] } },
      { name: null, input: 'Geen tumor.', reasoning: null, output: {} },
    ]);
  });

  it('leaves unset parts null and settings empty', async () => {
    const prompt = ok(await t.gql(CREATE_PROMPT, { input: { useCaseId: useCase.id, name: 'bare' } })).createPrompt.prompt;
    expect(prompt).toMatchObject({ version: 1, system: null, task: null, fieldInstructions: null, exampleIntro: null, final: null, settings: {}, examples: [] });
  });

  it('numbers versions per name', async () => {
    const other = await createUseCase(t, a.id);
    const versions: number[] = [];
    for (let i = 0; i < 3; i++) {
      versions.push(ok(await t.gql(CREATE_PROMPT, { input: { useCaseId: other.id, name: 'zero-shot', task: `v${i}` } })).createPrompt.prompt.version);
    }
    expect(versions).toEqual([1, 2, 3]);
    expect(ok(await t.gql(CREATE_PROMPT, { input: { useCaseId: other.id, name: 'few-shot' } })).createPrompt.prompt.version).toBe(1);
    // The same name in another use case starts its own series.
    const third = await createUseCase(t, a.id);
    expect(ok(await t.gql(CREATE_PROMPT, { input: { useCaseId: third.id, name: 'zero-shot' } })).createPrompt.prompt.version).toBe(1);

    const listed = ok(await t.gql(PROMPTS, { id: other.id })).node.prompts;
    expect(listed.totalCount).toBe(4);
    expect(listed.nodes.map((p: { name: string; version: number }) => `${p.name}@${p.version}`)).toEqual([
      'zero-shot@1',
      'zero-shot@2',
      'zero-shot@3',
      'few-shot@1',
    ]);
    const page1 = ok(await t.gql(PROMPTS, { id: other.id, first: 3 })).node.prompts;
    expect(page1.pageInfo.hasNextPage).toBe(true);
    expect(page1.nodes.map((p: { id: string }) => p.id)).toEqual(listed.nodes.slice(0, 3).map((p: { id: string }) => p.id));
  });

  it('checks examples: output keys must be variables, output an object, input not empty', async () => {
    const before = await promptCount(useCase.id);
    const create = (examples: unknown[]) => t.gql(CREATE_PROMPT, { input: { useCaseId: useCase.id, name: 'checked', examples } });

    const unknownKey = failure(await create([{ input: 'x', output: { grade: 'G1' } }, { input: 'y', output: { grade: 'G1', tumour_size: 3, Grade: 'G2' } }]), 'BAD_USER_INPUT');
    expect(unknownKey.extensions?.field).toBe('examples[1].output');
    expect(unknownKey.message).toContain('tumour_size');
    expect(unknownKey.message).toContain('Grade');
    expect(failure(await create([{ input: 'x', output: ['G1'] }]), 'BAD_USER_INPUT').extensions?.field).toBe('examples[0].output');
    expect(failure(await create([{ input: 'x', output: 'G1' }]), 'BAD_USER_INPUT').extensions?.field).toBe('examples[0].output');
    expect(failure(await create([{ input: 'x', output: null }]), 'BAD_USER_INPUT').extensions?.code).toBe('BAD_USER_INPUT');
    expect(failure(await create([{ input: '   ', output: {} }]), 'BAD_USER_INPUT').extensions?.field).toBe('examples[0].input');
    failure(await t.gql(CREATE_PROMPT, { input: { useCaseId: useCase.id, name: ' ' } }), 'BAD_USER_INPUT');
    expect(await promptCount(useCase.id)).toBe(before);
  });

  it('enforces access', async () => {
    const before = await promptCount(useCase.id);
    const foreign = await createUseCase(t, b.id);
    await expectAccessErrors(
      t,
      CREATE_PROMPT,
      { useCaseId: useCase.id, name: 'guarded' },
      { keys: a, forbiddenKeys: [a.viewer], idField: 'useCaseId', foreignId: foreign.id, unknownType: 'UseCase' },
    );
    expect(await promptCount(useCase.id)).toBe(before);
    expect(await promptCount(foreign.id)).toBe(0);
    // A prompt is visible by node(id) in its own project only.
    const prompt = ok(await t.gql(CREATE_PROMPT, { input: { useCaseId: foreign.id, name: 'of B' } }, b.editor)).createPrompt.prompt;
    const query = 'query ($id: ID!) { node(id: $id) { id ... on Prompt { name version } } }';
    expect(ok(await t.gql(query, { id: prompt.id }, a.admin)).node).toBeNull();
    expect(ok(await t.gql(query, { id: prompt.id }, b.viewer)).node).toEqual({ id: prompt.id, name: 'of B', version: 1 });
  });
});
