/**
 * `npm run demo:llm`: the demo model server, an OpenAI-compatible simulator for the demo use
 * cases (see simulator.ts). No model runs here; its answers are synthetic.
 *
 * Flags: --port N (default DEMO_LLM_PORT, else 8001; 0 picks a free port), --host H (default 127.0.0.1),
 * --speed X (latency divided by X; default 1, realistic), --api-key KEY (require this bearer key).
 * Prints one line of JSON once listening ({"baseUrl", "port", "models"}), then a note on stderr,
 * and serves until SIGINT or SIGTERM. Through npm the flags follow `--`:
 * `npm run demo:llm -- --port 8002`.
 */
import { parseDemoLlmArguments, type DemoLlmOptions } from './arguments';
import { startSimulator, type Simulator } from './simulator';

async function main(): Promise<void> {
  let options: DemoLlmOptions;
  try {
    options = parseDemoLlmArguments(process.argv.slice(2), process.env);
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
