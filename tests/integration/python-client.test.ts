/**
 * The Python client of docs/python-client.md, run as printed with Debian's python3 (standard
 * library only) against a test server: the key, a query, variables, paging through projects.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ok } from '../support/graphql-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

const PYTHON = '/usr/bin/python3';
const SCRIPT = path.resolve(__dirname, '../../docs/examples/list_projects.py');
const DOC = path.resolve(__dirname, '../../docs/python-client.md');

function runPython(env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(PYTHON, [SCRIPT], { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

describe('the Python client example', () => {
  let t: TestApp;
  const names = ['python one', 'python two', 'python three', 'python four', 'python five'];
  beforeAll(async () => {
    if (!existsSync(PYTHON)) throw new Error(`${PYTHON} is missing: install Debian's python3 (apt-get install python3) to run the Python client example`);
    t = await startTestApp();
    for (const name of names) ok(await t.gql('mutation($i: CreateProjectInput!) { createProject(input: $i) { project { id } } }', { i: { name } }));
  });
  afterAll(() => t?.close());

  it('is printed in the docs exactly as the file the test runs', () => {
    const doc = readFileSync(DOC, 'utf8');
    const block = /```python\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(block).toBe(readFileSync(SCRIPT, 'utf8'));
  });

  it('pages through every project with the key and variables', async () => {
    const result = await runPython({ REPORTQL_URL: t.url, REPORTQL_API_KEY: t.adminKey, REPORTQL_PAGE_SIZE: '2' });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toBe('signed in: server admin True, role None');
    const listed = lines.slice(1, -1).map((line) => line.split('\t')[1]);
    const expected = ok(await t.gql('{ projects(first: 200) { totalCount nodes { name } } }')).projects as { totalCount: number; nodes: { name: string }[] };
    expect(expected.totalCount).toBeGreaterThan(4);
    expect(listed).toEqual(expected.nodes.map((p) => p.name));
    expect(listed).toEqual(expect.arrayContaining(names));
    expect(lines[lines.length - 1]).toBe(`${expected.totalCount} projects`);
  });

  it('reports a refused key with its code and a non-zero status', async () => {
    const result = await runPython({ REPORTQL_URL: t.url, REPORTQL_API_KEY: 'rql_not-a-key-at-all-000000000000' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('ReportQL refused: UNAUTHENTICATED');
    expect(result.stdout).toBe('');
  });
});
