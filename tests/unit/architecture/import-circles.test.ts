import { importCircles, importGraph, type ImportGraph } from '../../support/import-graph';

describe('import circles', () => {
  it('finds none in src/, type-only imports included', () => {
    // Type-only imports are erased at run time, but a circle through one still ties two modules
    // into one unit that can only be understood, tested and changed together.
    expect(importCircles(importGraph('src'), () => true)).toEqual([]);
  });

  it('finds a circle, through a type-only import too, and names its files', () => {
    const graph: ImportGraph = new Map([
      ['a.ts', [{ to: 'b.ts', typeOnly: false }]],
      ['b.ts', [{ to: 'c.ts', typeOnly: true }]],
      ['c.ts', [{ to: 'a.ts', typeOnly: false }, { to: 'd.ts', typeOnly: false }]],
      ['d.ts', []],
      ['e.ts', [{ to: 'e.ts', typeOnly: false }]],
    ]);
    expect(importCircles(graph, () => true)).toEqual([['a.ts', 'b.ts', 'c.ts'], ['e.ts']]);
    expect(importCircles(graph, (edge) => !edge.typeOnly)).toEqual([['e.ts']]);
  });

  it('reads the imports of a file with their kind', () => {
    const edges = importGraph('src').get('src/modules/run/run-progress.service.ts') ?? [];
    expect(edges).toContainEqual({ to: 'src/modules/run/run.service.ts', typeOnly: true });
    expect(edges).toContainEqual({ to: 'src/modules/run/run.entity.ts', typeOnly: false });
  });
});
