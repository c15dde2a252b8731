import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { cpuSeconds, procStat, treeCpu } from '../../../bench/runs/process-cpu';

/** A node program that spends `ms` of CPU, then prints `line` and idles (or ends). */
function burn(ms: number, line: string, then: 'idle' | 'end' = 'idle'): string {
  const idle = then === 'idle' ? 'setInterval(() => undefined, 1000);' : '';
  return `const t = process.cpuUsage(); for (;;) { const u = process.cpuUsage(t); if (u.user + u.system >= ${ms * 1000}) break; } process.stdout.write(${JSON.stringify(line)} + '\\n'); ${idle}`;
}

/** The first line a process prints. */
function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve) => createInterface({ input: child.stdout! }).once('line', resolve));
}

describe('the CPU of a process tree', () => {
  const started: ChildProcess[] = [];
  afterAll(() => {
    for (const child of started) child.kill('SIGKILL');
  });

  it("counts the root, its ended children and its live ones, and nothing outside the tree", async () => {
    // A stand-in postmaster: one child spends CPU and ends (a backend that disconnected), then one
    // spends CPU and stays (a backend still connected); another process on the machine spends CPU too.
    const root = spawn(
      process.execPath,
      [
        '-e',
        `const { spawn } = require('node:child_process');
         const ended = spawn(process.execPath, ['-e', ${JSON.stringify(burn(300, 'done', 'end'))}], { stdio: 'ignore' });
         ended.on('exit', () => {
           const live = spawn(process.execPath, ['-e', ${JSON.stringify(burn(300, 'burnt'))}], { stdio: ['ignore', 'pipe', 'ignore'] });
           live.stdout.once('data', () => process.stdout.write('ready ' + live.pid + '\\n'));
         });
         setInterval(() => undefined, 1000);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const outside = spawn(process.execPath, ['-e', burn(300, 'burnt')], { stdio: ['ignore', 'pipe', 'inherit'] });
    started.push(root, outside);
    const [ready] = await Promise.all([firstLine(root), firstLine(outside)]);
    const live = Number(ready.split(' ')[1]);
    started.push({ kill: (signal: NodeJS.Signals) => process.kill(live, signal) } as unknown as ChildProcess);

    const reaped = procStat(root.pid!)!.reaped / 100;
    const total = treeCpu(root.pid!);
    // The ended child's time is still counted (as the root's reaped children), the live one's too.
    expect(reaped).toBeGreaterThanOrEqual(0.3);
    expect(cpuSeconds(live)).toBeGreaterThanOrEqual(0.3);
    expect(total).toBeCloseTo(cpuSeconds(root.pid!) + reaped + cpuSeconds(live), 1);
    // The other process's 0.3 s are not.
    expect(total).toBeLessThan(cpuSeconds(root.pid!) + reaped + cpuSeconds(live) + cpuSeconds(outside.pid!) - 0.2);
  }, 60_000);
});
