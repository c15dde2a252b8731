import { importGraph } from '../../support/import-graph';

/**
 * Services decide and the layers below them know no API: they throw domain exceptions
 * (src/domain/errors.ts) and page with src/db/pagination.ts, and the GraphQL layer maps them.
 * Type-only imports count too: a service typed by a GraphQL class still depends on the API.
 */
const knowsNoGraphQL = (file: string) =>
  /^src\/modules\/.+\.service\.ts$/.test(file) || /^src\/(jobs|extraction|llm|analytics)\//.test(file);

describe('layers', () => {
  it('keeps services, jobs, extraction, llm and analytics free of src/graphql imports', () => {
    const graph = importGraph('src');
    const checked = [...graph.keys()].filter(knowsNoGraphQL);
    // The rule checks the files it is about (the globs did not go stale).
    expect(checked.filter((file) => file.endsWith('.service.ts')).length).toBeGreaterThan(10);
    expect(checked.some((file) => file.startsWith('src/jobs/'))).toBe(true);
    const offending = checked.flatMap((file) =>
      (graph.get(file) ?? []).filter((edge) => edge.to.startsWith('src/graphql/')).map((edge) => `${file} imports ${edge.to}`),
    );
    expect(offending).toEqual([]);
  });
});
