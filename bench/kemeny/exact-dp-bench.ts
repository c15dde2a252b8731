/**
 * The exact Kemeny–Young DP at n candidates (default 20 × 25 random voters, one Condorcet
 * component, decomposition off so the DP sees all n) against its C peer, bench/kemeny/subset-dp.c,
 * built here with the system cc: the same matrix, the same order and score, timed call by call in
 * rounds that alternate the two, so that both see the same load. Prints wall and CPU time per
 * call (median, min, max), their ratios (of the medians, and of the minima: the calls least
 * disturbed by other processes), the CPU time of this process over the run, and the load
 * average before and after.
 *
 *   node -r ./bench/kemeny/swc-register.js bench/kemeny/exact-dp-bench.ts \
 *     [--n 20] [--voters 25] [--calls 15] [--rounds 4]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kemenyFromMatrix, pairwiseMatrix } from '../../src/analytics/kemeny';

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const n = arg('--n', 20);
const V = arg('--voters', 25);
const calls = arg('--calls', 15);
const rounds = arg('--rounds', 4);
const loadavg = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const loadBefore = loadavg();

// The random voters of kemeny-bench.ts section 1 (scores on a 0.01 grid, seed 1000 + n).
let state = 1000 + n;
const rnd = (): number => (state = (state * 48271) % 2147483647) / 2147483647;
const scores = Array.from({ length: V }, () => Array.from({ length: n }, () => Math.floor(rnd() * 100) / 100));
const matrix = pairwiseMatrix(scores);
const options = { exactLimit: n, decompose: false };

const binary = join(mkdtempSync(join(tmpdir(), 'subset-dp-')), 'subset-dp');
execFileSync('cc', ['-O2', '-o', binary, join(__dirname, 'subset-dp.c')]);

const median = (xs: number[]): number => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const c = { wall: [] as number[], cpu: [] as number[] };
const js = { wall: [] as number[], cpu: [] as number[] };
let cOrder = '';
let cScore = NaN;
const jsCpu0 = process.cpuUsage();
for (let round = 0; round < rounds; round++) {
  const out = execFileSync(binary, { input: `${n} ${calls}\n${Array.from(matrix.w).join(' ')}\n` }).toString();
  for (const line of out.trim().split('\n')) {
    const [key, ...rest] = line.split(' ');
    if (key === 'call') {
      c.wall.push(Number(rest[0]));
      c.cpu.push(Number(rest[1]));
    } else if (key === 'order') cOrder = rest.join(' ');
    else if (key === 'score') cScore = Number(rest[0]);
  }
  for (let k = 0; k < calls; k++) {
    const cpu0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    const result = kemenyFromMatrix(matrix, options);
    js.wall.push(Number(process.hrtime.bigint() - t0) / 1e6);
    const cpu = process.cpuUsage(cpu0);
    js.cpu.push((cpu.user + cpu.system) / 1000);
    if (result.order.join(' ') !== cOrder || result.score !== cScore) throw new Error('the C peer and src/analytics disagree');
  }
}
const jsCpu = process.cpuUsage(jsCpu0);

function report(): void {
  const row = (name: string, x: { wall: number[]; cpu: number[] }): string =>
    `| ${name} | ${median(x.wall).toFixed(2)} (${Math.min(...x.wall).toFixed(2)}–${Math.max(...x.wall).toFixed(2)}) | ${median(x.cpu).toFixed(2)} (${Math.min(...x.cpu).toFixed(2)}–${Math.max(...x.cpu).toFixed(2)}) |`;
  console.log(`Exact Kemeny–Young DP, ${n} candidates × ${V} voters, ${rounds} rounds of ${calls} calls each side, alternating; score ${cScore}, same order.`);
  console.log('');
  console.log('| solver | wall ms per call, median (min–max) | CPU ms per call, median (min–max) |');
  console.log('|---|---|---|');
  console.log(row('C peer (cc -O2)', c));
  console.log(row('src/analytics kemenyFromMatrix', js));
  console.log('');
  console.log(
    `ratio JS / C: wall ${(median(js.wall) / median(c.wall)).toFixed(2)}, CPU ${(median(js.cpu) / median(c.cpu)).toFixed(2)} (medians); ` +
      `CPU ${(Math.min(...js.cpu) / Math.min(...c.cpu)).toFixed(2)} (minima); ` +
      `node process CPU over the run ${((jsCpu.user + jsCpu.system) / 1000).toFixed(0)} ms; ` +
      `load average before ${loadBefore}, after ${loadavg()}`,
  );
}

report();
