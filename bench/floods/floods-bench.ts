/**
 * Floods against a local server (127.0.0.1 only), bounded in count and time, with /healthz asked
 * every 20 ms throughout: its latency (p50/p99/max) is what every other client would have waited.
 *
 * 1. subscriptions: `--subscriptions N` runProgress subscriptions sent at once on one WebSocket
 *    connection (with the key in its parameters); counted: first states received, refusals by
 *    code, the close code.
 * 2. connections: `--clients C` clients each sending the next request as soon as the last one is
 *    answered, on a new connection every time, plus `--idle I` connections opened and left idle,
 *    for `--seconds S`; counted: answers by status.
 *
 * The server runs in a process of its own (flood-server.ts) with the bounds of its environment,
 * e.g. `MAX_CONNECTIONS=0 MAX_REQUESTS_IN_FLIGHT=0 WS_OPERATIONS_PER_CONNECTION=0 WS_OPERATIONS_PER_KEY=0`
 * for none. Its CPU time (user + system, from /proc) and resident memory are taken around each flood.
 *
 *   npm run bench:floods [-- --subscriptions 1000 --clients 50 --idle 1200 --seconds 10]
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import WebSocket from 'ws';
import { argument } from '../support/bench-server';

interface ServerInfo {
  port: number;
  key: string;
  run: string;
  pid: number;
  connectionLimits: unknown;
  webSocketLimits: unknown;
}

const HEALTH_EVERY_MS = 20;
/** A health check not answered within this counts as this long (and as a timeout). */
const HEALTH_TIMEOUT_MS = 30_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** CPU seconds (user + system) and resident MB of a process, from /proc. */
function processUsage(pid: number): { cpuSeconds: number; rssMb: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return { cpuSeconds: ticks / 100, rssMb: Math.round(Number(rss?.[1] ?? 0) / 1024) };
}

function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** One /healthz over a fresh connection (as a load balancer's probe): milliseconds and status. */
function health(port: number): Promise<{ ms: number; status: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/healthz', agent: false, timeout: HEALTH_TIMEOUT_MS }, (res) => {
      res.resume();
      res.on('end', () => resolve({ ms: performance.now() - started, status: res.statusCode ?? 0 }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ ms: performance.now() - started, status: 0 }));
    req.end();
  });
}

/**
 * Asks /healthz every 20 ms until stopped, from a process of its own, so that the flooding
 * client's own work does not delay the probe; the latencies of all answers.
 */
async function healthProbe(port: number): Promise<{ stop: () => Promise<{ ms: number[]; failed: number }> }> {
  const child = spawn(process.execPath, [__filename, '--probe-port', String(port)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  // Asking from its first line on: the flood starts after it.
  await new Promise((resolve) => lines.once('line', resolve));
  const answer = new Promise<string>((resolve) => lines.once('line', resolve));
  return {
    stop: async () => {
      child.stdin!.end('stop\n');
      return JSON.parse(await answer) as { ms: number[]; failed: number };
    },
  };
}

/** The probe process: asks until its stdin ends, then prints the latencies. */
async function probeMain(port: number): Promise<void> {
  const pending: Promise<{ ms: number; status: number }>[] = [];
  const timer = setInterval(() => pending.push(health(port)), HEALTH_EVERY_MS);
  process.stdout.write('asking\n');
  process.stdin.resume();
  await new Promise((resolve) => process.stdin.once('end', resolve));
  clearInterval(timer);
  const answers = await Promise.all(pending);
  process.stdout.write(`${JSON.stringify({ ms: answers.map((a) => a.ms).sort((a, b) => a - b), failed: answers.filter((a) => a.status !== 200).length })}\n`);
}

function summary(probe: { ms: number[]; failed: number }) {
  const round = (x: number) => Math.round(x * 10) / 10;
  return { checks: probe.ms.length, notOk: probe.failed, p50Ms: round(percentile(probe.ms, 50)), p99Ms: round(percentile(probe.ms, 99)), maxMs: round(probe.ms.at(-1) ?? NaN) };
}

let serverLines: ReturnType<typeof createInterface>;
let serverProcess: ReturnType<typeof spawn>;

/** The server's event-loop delay since the last call. */
async function eventLoopDelay(): Promise<unknown> {
  const line = new Promise<string>((resolve) => serverLines.once('line', resolve));
  serverProcess.kill('SIGUSR2');
  return (JSON.parse(await line) as { eventLoopDelay: unknown }).eventLoopDelay;
}

async function subscriptionFlood(server: ServerInfo, count: number, seconds: number) {
  const socket = new WebSocket(`ws://127.0.0.1:${server.port}/graphql`, 'graphql-transport-ws');
  const counts = { states: 0, refusals: {} as Record<string, number>, closeCode: undefined as number | undefined };
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.once('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: `Bearer ${server.key}` } })));
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as { type: string; payload?: any };
      if (message.type === 'connection_ack') resolve();
      else if (message.type === 'next' && !message.payload?.errors) counts.states++;
      else if (message.type === 'error' || (message.type === 'next' && message.payload?.errors)) {
        const errors = (message.type === 'error' ? message.payload : message.payload.errors) as { extensions?: { code?: string; reason?: string } }[];
        const code = `${errors[0]?.extensions?.code ?? 'none'}${errors[0]?.extensions?.reason ? `/${errors[0].extensions.reason}` : ''}`;
        counts.refusals[code] = (counts.refusals[code] ?? 0) + 1;
      }
    });
    socket.on('close', (code) => (counts.closeCode = code));
  });
  const before = processUsage(server.pid);
  await eventLoopDelay();
  const probe = await healthProbe(server.port);
  const query = 'subscription($id: ID!) { runProgress(runId: $id) { status progress { succeeded total } } }';
  for (let i = 0; i < count; i++) {
    if (socket.readyState !== WebSocket.OPEN) break;
    socket.send(JSON.stringify({ id: String(i), type: 'subscribe', payload: { query, variables: { id: server.run } } }));
  }
  await sleep(seconds * 1000);
  const after = processUsage(server.pid);
  const healthz = summary(await probe.stop());
  const serverEventLoop = await eventLoopDelay();
  socket.terminate();
  return { sent: count, ...counts, healthz, serverEventLoop, serverCpuSeconds: Math.round((after.cpuSeconds - before.cpuSeconds) * 100) / 100, serverRssMb: { before: before.rssMb, after: after.rssMb } };
}

async function connectionFlood(server: ServerInfo, clients: number, idle: number, seconds: number) {
  const statuses: Record<string, number> = {};
  const idleSockets: Socket[] = [];
  const before = processUsage(server.pid);
  await eventLoopDelay();
  const probe = await healthProbe(server.port);
  let opened = 0;
  for (let i = 0; i < idle; i++) {
    const socket = connect(server.port, '127.0.0.1');
    socket.on('connect', () => opened++);
    socket.on('error', () => undefined);
    idleSockets.push(socket);
  }
  const body = JSON.stringify({ query: 'query($id: ID!) { node(id: $id) { ... on Run { predictions(first: 100) { nodes { id status values } } } } }', variables: { id: server.run } });
  const until = Date.now() + seconds * 1000;
  const agent = new Agent({ keepAlive: false });
  const client = async () => {
    while (Date.now() < until) {
      const status = await new Promise<number>((resolve) => {
        const req = request(
          { host: '127.0.0.1', port: server.port, path: '/graphql', method: 'POST', agent, timeout: 30_000, headers: { 'content-type': 'application/json', authorization: `Bearer ${server.key}` } },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('timeout', () => req.destroy(new Error('timeout')));
        req.on('error', () => resolve(0));
        req.end(body);
      });
      statuses[status] = (statuses[status] ?? 0) + 1;
      // A shed client waits as it was told (Retry-After: 1 s) only in part: floods do not wait.
      if (status === 503) await sleep(50);
    }
  };
  await Promise.all(Array.from({ length: clients }, client));
  const after = processUsage(server.pid);
  const healthz = summary(await probe.stop());
  const serverEventLoop = await eventLoopDelay();
  for (const socket of idleSockets) socket.destroy();
  return { clients, idle, idleOpened: opened, answers: statuses, healthz, serverEventLoop, serverCpuSeconds: Math.round((after.cpuSeconds - before.cpuSeconds) * 100) / 100, serverRssMb: { before: before.rssMb, after: after.rssMb } };
}

async function main(): Promise<void> {
  const subscriptions = argument('subscriptions', 1000);
  const clients = argument('clients', 50);
  const idle = argument('idle', 1200);
  const seconds = argument('seconds', 10);
  const child = spawn(process.execPath, [path.join(__dirname, 'flood-server.js')], { stdio: ['ignore', 'pipe', 'inherit'] });
  serverProcess = child;
  serverLines = createInterface({ input: child.stdout! });
  const server = JSON.parse(await new Promise<string>((resolve) => serverLines.once('line', resolve))) as ServerInfo;
  try {
    const idleHealth = await healthProbe(server.port);
    await sleep(2000);
    const quiet = summary(await idleHealth.stop());
    const results = {
      loadAverageBefore: loadAverage(),
      bounds: { connections: server.connectionLimits, webSocket: server.webSocketLimits },
      quiet: { healthz: quiet },
      subscriptions: await subscriptionFlood(server, subscriptions, seconds),
      loadAverageBetween: loadAverage(),
      connections: await connectionFlood(server, clients, idle, seconds),
      loadAverageAfter: loadAverage(),
    };
    process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
}

const probePort = argument('probe-port', 0);
(probePort ? probeMain(probePort) : main()).catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
