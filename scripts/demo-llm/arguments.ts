/** The demo model server's settings, from its flags and DEMO_LLM_PORT. */
export interface DemoLlmOptions {
  port: number;
  host: string;
  speed: number;
  apiKey: string | null;
}

const FLAGS = ['--port', '--host', '--speed', '--api-key'] as const;

/** How the port is set when the server runs through npm, which keeps flags before `--` for itself. */
const WORKING_FORMS = 'npm run demo:llm -- --port 8002 (npm needs the -- before the flags), or DEMO_LLM_PORT=8002 npm run demo:llm';

export class DemoLlmArgumentError extends Error {}

/**
 * Flags (`--port N`, `--port=N`, …) over DEMO_LLM_PORT over the defaults. `npm run demo:llm
 * --port 8002` hands the script only `8002` (npm takes `--port` as its own setting and exports
 * npm_config_port), so a flag npm took is refused with the form that works instead of being
 * silently dropped.
 */
export function parseDemoLlmArguments(argv: readonly string[], env: NodeJS.ProcessEnv = {}): DemoLlmOptions {
  const out: DemoLlmOptions = { port: 8001, host: '127.0.0.1', speed: 1, apiKey: null };
  const fromEnv = env.DEMO_LLM_PORT?.trim();
  if (fromEnv) {
    out.port = /^\d{1,5}$/.test(fromEnv) ? Number(fromEnv) : Number.NaN;
    if (!(out.port <= 65535)) throw new DemoLlmArgumentError('DEMO_LLM_PORT must be a port number (0 picks a free port)');
  }
  const given = new Set<string>();
  for (let i = 0; i < argv.length; i += 1) {
    const [flag, inline] = argv[i]!.split('=', 2) as [string, string | undefined];
    if (!(FLAGS as readonly string[]).includes(flag)) {
      const eaten = FLAGS.find((f) => env[`npm_config_${f.slice(2).replace(/-/g, '_')}`] !== undefined && !given.has(f));
      if (eaten && !flag.startsWith('-')) throw new DemoLlmArgumentError(`npm kept ${eaten} for itself and passed on only its value: write ${WORKING_FORMS}`);
      throw new DemoLlmArgumentError(`unknown argument ${flag.startsWith('--') && flag.length <= 40 ? flag : `#${i + 1}`}: the flags are ${FLAGS.join(', ')}`);
    }
    const value = inline ?? argv[++i];
    if (value === undefined) throw new DemoLlmArgumentError(`${flag} needs a value, e.g. ${flag === '--port' ? WORKING_FORMS : `${flag}=…`}`);
    given.add(flag);
    if (flag === '--port') out.port = /^\d{1,5}$/.test(value) ? Number(value) : Number.NaN;
    else if (flag === '--host') out.host = value;
    else if (flag === '--speed') out.speed = Number(value);
    else out.apiKey = value;
  }
  const eaten = FLAGS.find((f) => env[`npm_config_${f.slice(2).replace(/-/g, '_')}`] !== undefined && !given.has(f));
  if (eaten) throw new DemoLlmArgumentError(`npm kept ${eaten} for itself: write ${WORKING_FORMS}`);
  if (!Number.isInteger(out.port) || out.port < 0 || out.port > 65535) throw new DemoLlmArgumentError('--port must be a port number (0 picks a free port)');
  if (!(out.speed > 0)) throw new DemoLlmArgumentError('--speed must be a positive number');
  return out;
}
