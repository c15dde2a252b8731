/**
 * `npm run demo:llm` as the README writes it: the port set after `--` or by DEMO_LLM_PORT, and
 * the form npm breaks (`npm run demo:llm --port N`) refused with the one that works.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { DemoLlmArgumentError, parseDemoLlmArguments } from '../../scripts/demo-llm/arguments';

const ROOT = path.resolve(__dirname, '../..');

/** Runs `npm run demo:llm …` until its first line of JSON (then stops it) or its exit. */
function runDemoLlm(args: string[], env: Record<string, string> = {}): Promise<{ listening?: { port: number }; code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', 'demo:llm', ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let listening: { port: number } | undefined;
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 60_000);
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      const line = stdout.split('\n')[0];
      if (!listening && stdout.includes('\n') && line) {
        listening = JSON.parse(line) as { port: number };
        process.kill(-child.pid!, 'SIGTERM');
      }
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ ...(listening ? { listening } : {}), code, stderr });
    });
  });
}

describe('the demo model server\'s arguments', () => {
  it('takes --port N and --port=N, over DEMO_LLM_PORT, over 8001', () => {
    expect(parseDemoLlmArguments([]).port).toBe(8001);
    expect(parseDemoLlmArguments([], { DEMO_LLM_PORT: '8010' }).port).toBe(8010);
    expect(parseDemoLlmArguments(['--port', '8011'], { DEMO_LLM_PORT: '8010' }).port).toBe(8011);
    expect(parseDemoLlmArguments(['--port=8012', '--speed', '10']).port).toBe(8012);
  });

  it('refuses a bad DEMO_LLM_PORT and a flag npm took for itself, naming the form that works', () => {
    expect(() => parseDemoLlmArguments([], { DEMO_LLM_PORT: 'eighty' })).toThrow(/DEMO_LLM_PORT must be a port number/);
    // What npm hands over for `npm run demo:llm --port 8002` and for `--port=8002`.
    for (const [argv, env] of [[['8002'], { npm_config_port: 'true' }], [[], { npm_config_port: '8002' }]] as const) {
      let error: unknown;
      try {
        parseDemoLlmArguments(argv, env);
      } catch (thrown) {
        error = thrown;
      }
      expect(error).toBeInstanceOf(DemoLlmArgumentError);
      expect((error as Error).message).toContain('npm run demo:llm -- --port 8002');
      expect((error as Error).message).toContain('DEMO_LLM_PORT=8002');
    }
  });

  it('listens on the port given after -- and on DEMO_LLM_PORT through npm', async () => {
    const flagged = await runDemoLlm(['--', '--port', '0', '--speed', '50']);
    expect(flagged.stderr).not.toContain('needs a value');
    expect(flagged.listening?.port).toEqual(expect.any(Number));
    expect(flagged.listening?.port).not.toBe(8001);
    const fromEnv = await runDemoLlm([], { DEMO_LLM_PORT: '0' });
    expect(fromEnv.listening?.port).toEqual(expect.any(Number));
    expect(fromEnv.listening?.port).not.toBe(8001);
  }, 120_000);

  it('stops with the working form when npm took --port (status 2, nothing listening)', async () => {
    const result = await runDemoLlm(['--port', '8002']);
    expect(result.listening).toBeUndefined();
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('npm run demo:llm -- --port 8002');
  }, 60_000);
});
