/**
 * Standalone fake OpenAI-compatible server for manual tries:
 *   npx tsc -p tsconfig.json && node dist/tests/support/fake-llm/main.js --port 8001 --model qwen3-8b
 * Flags: --port N (default 8001), --model ID (repeatable), --api-key KEY, --latency MS,
 * --reasoning-field reasoning_content|reasoning|both. Answers with the default handler
 * (a JSON object built from response_format's schema, else '{}').
 */
import { startFakeLlm, type ReasoningField } from './fake-llm-server';

function parseArgs(argv: string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i];
    if (!flag?.startsWith('--')) continue;
    const value = argv[i + 1] ?? '';
    out.set(flag.slice(2), [...(out.get(flag.slice(2)) ?? []), value]);
    i += 1;
  }
  return out;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const fake = await startFakeLlm({
    port: Number(args.get('port')?.[0] ?? 8001),
    models: args.get('model') ?? ['fake-model'],
    apiKey: args.get('api-key')?.[0] ?? null,
    latencyMs: Number(args.get('latency')?.[0] ?? 0),
    reasoningField: (args.get('reasoning-field')?.[0] as ReasoningField | undefined) ?? 'reasoning_content',
  });
  process.stdout.write(`fake LLM listening at ${fake.baseUrl}\n`);
  const stop = (): void => {
    void fake.close().then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

void main();
