/**
 * Read path under load: requests per second of three queries on one server, measured from a
 * separate process (this one) with keep-alive connections: `{ __typename }` (the floor: what a
 * request costs with nothing behind it), a cached leaderboard, and a page of 50 predictions with
 * their values (a read of patient data, so an audit row per request). The server runs in its own
 * process (read-path-server.ts) with NODE_ENV=production unless told otherwise. Queries take
 * turns in rounds so that all three see the same machine; the ratios are per round.
 *
 *   npm run bench:read-path -- [--seconds 5] [--rounds 3] [--connections 32] [--runs 30] [--reports 300] [--rate-limits] [--development]
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { argument } from '../support/bench-server';

interface Seeded {
  port: number;
  key: string;
  useCase: string;
  dataset: string;
  run: string;
  nodeEnv: string;
  rateLimits: boolean;
}

const LEADERBOARD = `query($u: ID!, $d: ID!) { node(id: $u) { ... on UseCase { leaderboard(datasetId: $d, options: { resamples: 1000, seed: 7 }) {
  exact score lowerBound entries { rank rankCiLow rankCiHigh run { name } macroAverage { value ciLow ciHigh } } } } } }`;
const PREDICTIONS = `query($r: ID!) { node(id: $r) { ... on Run { predictions(first: 50) {
  totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id status latencyMs values report { externalId } } } } } } }`;

function post(agent: http.Agent, port: number, key: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: '127.0.0.1', port, path: '/graphql', method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: `Bearer ${key}` } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/** `connections` clients each sending the request again as soon as its answer is in, for `seconds`. */
async function load(port: number, key: string, body: string, connections: number, seconds: number): Promise<{ rps: number; p50: number; p99: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const latencies: number[] = [];
  const until = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < until) {
        const t0 = performance.now();
        const response = await post(agent, port, key, body);
        if (response.status !== 200 || response.text.includes('"errors"')) throw new Error(`request failed: ${response.status} ${response.text.slice(0, 300)}`);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return { rps: latencies.length / elapsed, p50: latencies[Math.floor(latencies.length / 2)]!, p99: latencies[Math.floor(latencies.length * 0.99)]! };
}

async function main(): Promise<void> {
  const seconds = argument('seconds', 5);
  const rounds = argument('rounds', 3);
  const connections = argument('connections', 32);
  const serverArgs = ['--runs', String(argument('runs', 30)), '--reports', String(argument('reports', 300))];
  if (process.argv.includes('--rate-limits')) serverArgs.push('--rate-limits');
  const env = { ...process.env, NODE_ENV: process.argv.includes('--development') ? 'development' : 'production' };
  const child = spawn(process.execPath, [path.join(__dirname, 'read-path-server.js'), ...serverArgs], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const seeded = await new Promise<Seeded>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the server exited with ${code}`)));
    createInterface({ input: child.stdout! }).once('line', (line) => resolve(JSON.parse(line) as Seeded));
  });
  try {
    const bodies = {
      typename: JSON.stringify({ query: '{ __typename }' }),
      leaderboard: JSON.stringify({ query: LEADERBOARD, variables: { u: seeded.useCase, d: seeded.dataset } }),
      predictions: JSON.stringify({ query: PREDICTIONS, variables: { r: seeded.run } }),
    };
    // The cold leaderboard is computed once, before any measurement.
    const first = await post(new http.Agent(), seeded.port, seeded.key, bodies.leaderboard);
    if (first.status !== 200 || first.text.includes('"errors"')) throw new Error(`leaderboard failed: ${first.text.slice(0, 300)}`);
    process.stdout.write(
      `server: NODE_ENV=${seeded.nodeEnv}, rate limits ${seeded.rateLimits ? 'on' : 'off'}; ${connections} connections, ${seconds} s per query and round, leaderboard answer ${(first.text.length / 1024).toFixed(1)} KB\n`,
    );
    const ratios: { leaderboard: number[]; predictions: number[] } = { leaderboard: [], predictions: [] };
    for (let round = 1; round <= rounds; round++) {
      const result: Record<string, { rps: number; p50: number; p99: number }> = {};
      for (const name of ['typename', 'leaderboard', 'predictions'] as const) {
        await load(seeded.port, seeded.key, bodies[name], connections, 0.5); // warm-up
        result[name] = await load(seeded.port, seeded.key, bodies[name], connections, seconds);
      }
      const t = result['typename']!.rps;
      ratios.leaderboard.push(result['leaderboard']!.rps / t);
      ratios.predictions.push(result['predictions']!.rps / t);
      process.stdout.write(
        `round ${round}: ` +
          Object.entries(result)
            .map(([name, r]) => `${name} ${r.rps.toFixed(0)} req/s (p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms)`)
            .join('; ') +
          `; ratios: leaderboard ${(result['leaderboard']!.rps / t).toFixed(2)}, predictions ${(result['predictions']!.rps / t).toFixed(2)}\n`,
      );
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    process.stdout.write(`median ratio to { __typename }: leaderboard ${median(ratios.leaderboard).toFixed(2)}, predictions ${median(ratios.predictions).toFixed(2)}\n`);
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

void main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
