/**
 * `npm run demo:llm`: the demo model server, an OpenAI-compatible simulator for the demo use
 * cases (see simulator.ts). No model runs here; its answers are synthetic.
 *
 * Flags: --port N (default 8001; 0 picks a free port), --host H (default 127.0.0.1),
 * --speed X (latency divided by X; default 1, realistic), --api-key KEY (require this bearer key).
 * Prints one line of JSON once listening ({"baseUrl", "port", "models"}), then a note on stderr,
 * and serves until SIGINT or SIGTERM.
 */
import { startSimulator, type Simulator } from './simulator';

function parse(argv: string[]): { port: number; host: string; speed: number; apiKey: string | null } {
  const out = { port: 8001, host: '127.0.0.1', speed: 1, apiKey: null as string | null };
  for (let i = 0; i < argv.length; i += 1) {
    const [flag, inline] = argv[i]!.split('=', 2) as [string, string | undefined];
    const value = inline ?? argv[++i];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    if (flag === '--port') out.port = Number(value);
    else if (flag === '--host') out.host = value;
    else if (flag === '--speed') out.speed = Number(value);
    else if (flag === '--api-key') out.apiKey = value;
    else throw new Error(`unknown argument: ${flag}`);
  }
  if (!Number.isInteger(out.port) || out.port < 0 || out.port > 65535) throw new Error('--port must be a port number');
  if (!(out.speed > 0)) throw new Error('--speed must be a positive number');
  return out;
}

async function main(): Promise<void> {
  let options: ReturnType<typeof parse>;
  try {
    options = parse(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`demo model server: ${(error as Error).message}\n`);
    process.exit(2);
  }
  let simulator: Simulator;
  try {
    simulator = await startSimulator(options);
  } catch (error) {
    process.stderr.write(`demo model server: cannot listen: ${(error as Error).message}\n`);
    process.exit(1);
  }
  process.stdout.write(`${JSON.stringify({ baseUrl: simulator.baseUrl, port: simulator.port, models: simulator.models })}\n`);
  process.stderr.write(
    [
      `ReportQL demo model server (a SIMULATOR: no language model runs here; answers are synthetic)`,
      `  OpenAI-compatible API: ${simulator.baseUrl}   Prometheus metrics: ${simulator.baseUrl.replace(/\/v1$/, '')}/metrics`,
      `  models: ${simulator.models.join(', ')}`,
      `  register it with registerEndpoint(input: { baseUrl: "${simulator.baseUrl}", kind: VLLM, … })`,
      '',
    ].join('\n'),
  );
  const stop = () => void simulator.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

void main();
