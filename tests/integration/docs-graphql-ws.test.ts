import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startTestApp, type TestApp } from '../support/test-app';

const ROOT = path.resolve(__dirname, '../..');

/** The Node.js client of the API cookbook's "GraphQL over WebSocket", as printed there. */
function cookbookSnippet(): string {
  const cookbook = readFileSync(path.join(ROOT, 'docs/api-cookbook.md'), 'utf8');
  const section = cookbook.slice(cookbook.indexOf('\n## GraphQL over WebSocket\n'));
  const match = /```js\n([\s\S]*?)```/.exec(section);
  if (!match || !match[1]!.includes('createClient(')) throw new Error('the graphql-ws snippet is not in docs/api-cookbook.md');
  return match[1]!;
}

/** Runs the snippet as a user would (node file.cjs); killed if it has not ended after 20 s. */
function runSnippet(file: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [file], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const guard = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('exit', (code) => {
      clearTimeout(guard);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('the cookbook graphql-ws client', () => {
  let t: TestApp;
  let file: string;
  beforeAll(async () => {
    t = await startTestApp();
    const dir = path.join(ROOT, 'tests/.tmp/docs-snippets');
    mkdirSync(dir, { recursive: true });
    file = path.join(dir, `graphql-ws-${process.pid}.cjs`);
    writeFileSync(file, cookbookSnippet());
    await t.gql('mutation { createProject(input: { name: "Snippet project" }) { project { id } } }');
  });
  afterAll(() => t.close());

  it('prints the answer with a valid key', async () => {
    const result = await runSnippet(file, { REPORTQL_WS_URL: t.url.replace(/^http/, 'ws'), REPORTQL_KEY: t.adminKey });
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    const printed = JSON.parse(result.stdout) as { data: { projects: { nodes: { name: string }[] } } };
    expect(printed.data.projects.nodes.map((p) => p.name)).toContain('Snippet project');
  });

  it('ends with a caught error and status 1 for a wrong key, without retrying or an unhandled rejection', async () => {
    const result = await runSnippet(file, { REPORTQL_WS_URL: t.url.replace(/^http/, 'ws'), REPORTQL_KEY: 'rql_not_a_key_of_this_server_000000' });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim()).toBe('ReportQL: connection closed: 4403 Forbidden');
  });
});
