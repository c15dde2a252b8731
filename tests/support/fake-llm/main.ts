/**
 * Standalone fake OpenAI-compatible server (see fake-llm-server.ts), for benchmarks and tests that
 * need it in another process, or for manual tries:
 *   node -r ./bench/kemeny/swc-register.js tests/support/fake-llm/main.ts --port 0 --answer-from-report
 * (or `npx tsc -p tsconfig.json && node dist/tests/support/fake-llm/main.js …`).
 * Once listening it prints exactly one line to stdout, `{"baseUrl":"http://127.0.0.1:PORT/v1","port":PORT}`,
 * and stays up until SIGTERM or SIGINT, then closes and exits 0. Usage errors exit 2, a port that
 * cannot be bound exits 1, with the reason on stderr.
 * Flags: --port N (default 8001; 0 picks a free port), --host H (default 127.0.0.1),
 * --latency-ms N (alias --latency), --models a,b (or --model ID, repeatable; default fake-model),
 * --api-key KEY, --reasoning-field reasoning_content|reasoning|both, --max-running N,
 * --answer-from-report, --no-record, --no-metrics,
 * --fault-mix 5xx=0.2,429=0.05,stall=0.05,garbage=0.1 (probabilities per chat request; see the
 * fault mix in fake-llm-server.ts) with --retry-after S (default 1), --stall-ms N (default 30000)
 * and --fault-seed N (default 1).
 * Without --answer-from-report it answers with the default handler (a JSON object built from
 * response_format's schema, else '{}').
 */
import { startFakeLlm, type FakeFaultMix, type FakeLlm, type FakeLlmOptions, type ReasoningField } from './fake-llm-server';

const VALUE_FLAGS = new Set([
  'port',
  'host',
  'latency-ms',
  'latency',
  'models',
  'model',
  'api-key',
  'reasoning-field',
  'max-running',
  'fault-mix',
  'retry-after',
  'stall-ms',
  'fault-seed',
]);
const FAULT_KINDS = { '5xx': 'serverError', '429': 'rateLimited', stall: 'stall', garbage: 'garbage' } as const;
const SWITCHES = new Set(['answer-from-report', 'no-record', 'no-metrics']);
const REASONING_FIELDS: ReasoningField[] = ['reasoning_content', 'reasoning', 'both'];

class UsageError extends Error {}

function parseArgs(argv: string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] ?? '';
    const eq = arg.indexOf('=');
    const name = arg.startsWith('--') ? arg.slice(2, eq > 0 ? eq : undefined) : '';
    if (SWITCHES.has(name) && eq < 0) {
      out.set(name, ['']);
      continue;
    }
    if (!VALUE_FLAGS.has(name)) throw new UsageError(`unknown argument: ${arg}`);
    let value = eq > 0 ? arg.slice(eq + 1) : argv[i + 1];
    if (eq < 0) i += 1;
    if (value === undefined) throw new UsageError(`--${name} needs a value`);
    value = value.trim();
    out.set(name, [...(out.get(name) ?? []), value]);
  }
  return out;
}

function optionsFrom(args: Map<string, string[]>): FakeLlmOptions {
  const last = (name: string): string | undefined => args.get(name)?.at(-1);
  const count = (name: string, fallback: number): number => {
    const raw = last(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (raw === '' || !Number.isInteger(value) || value < 0) throw new UsageError(`--${name} must be a whole number`);
    return value;
  };
  const models = [...(args.get('models') ?? []).flatMap((list) => list.split(',')), ...(args.get('model') ?? [])]
    .map((m) => m.trim())
    .filter((m) => m.length > 0);
  const reasoningField = last('reasoning-field') ?? 'reasoning_content';
  if (!REASONING_FIELDS.includes(reasoningField as ReasoningField)) {
    throw new UsageError(`--reasoning-field must be one of ${REASONING_FIELDS.join(', ')}`);
  }
  const maxRunning = count('max-running', 256);
  if (maxRunning < 1) throw new UsageError('--max-running must be at least 1');
  return {
    ...faultsFrom(last('fault-mix'), count),
    port: count('port', 8001),
    host: last('host') ?? '127.0.0.1',
    models: models.length > 0 ? models : ['fake-model'],
    apiKey: last('api-key') ?? null,
    latencyMs: count('latency-ms', count('latency', 0)),
    reasoningField: reasoningField as ReasoningField,
    maxRunning,
    answerFromReport: args.has('answer-from-report'),
    recordRequests: !args.has('no-record'),
    metrics: !args.has('no-metrics'),
  };
}

function faultsFrom(mix: string | undefined, count: (name: string, fallback: number) => number): { faults?: FakeFaultMix } {
  if (mix === undefined) {
    for (const flag of ['retry-after', 'stall-ms', 'fault-seed']) count(flag, 0);
    return {};
  }
  const faults: FakeFaultMix = { retryAfterSeconds: count('retry-after', 1), stallMs: count('stall-ms', 30_000), seed: count('fault-seed', 1) };
  let total = 0;
  for (const part of mix.split(',').filter((p) => p.trim() !== '')) {
    const [name = '', value = ''] = part.split('=').map((x) => x.trim());
    const kind = FAULT_KINDS[name as keyof typeof FAULT_KINDS];
    const p = Number(value);
    if (!kind) throw new UsageError(`--fault-mix: unknown fault ${name} (one of ${Object.keys(FAULT_KINDS).join(', ')})`);
    if (value === '' || !Number.isFinite(p) || p < 0 || p > 1) throw new UsageError(`--fault-mix: ${name} must be a probability between 0 and 1`);
    faults[kind] = p;
    total += p;
  }
  if (total > 1 + 1e-9) throw new UsageError('--fault-mix: the probabilities sum to more than 1');
  return { faults };
}

async function main(): Promise<void> {
  let fake: FakeLlm | undefined;
  let stopping = false;
  // Installed first, so a signal during start-up also ends the process with 0.
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    if (!fake) process.exit(0);
    void fake.close().then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  let options: FakeLlmOptions;
  try {
    options = optionsFrom(parseArgs(process.argv.slice(2)));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`fake LLM: ${err.message}\n`);
    process.exit(2);
  }
  try {
    fake = await startFakeLlm(options);
  } catch (err) {
    process.stderr.write(`fake LLM: cannot listen: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
  if (stopping) {
    await fake.close();
    process.exit(0);
  }
  process.stdout.write(`${JSON.stringify({ baseUrl: fake.baseUrl, port: fake.port })}\n`);
}

void main();
