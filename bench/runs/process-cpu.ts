/**
 * CPU time of processes, from /proc (Linux), for the benchmarks' CPU-per-prediction figures.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { DataSource } from 'typeorm';

const TICKS_PER_SECOND = 100;

/**
 * Parent pid and CPU clock ticks of a process from /proc/<pid>/stat (fields 4 and 14–17, counted
 * after the command name, which is in parentheses and may itself hold spaces and parentheses);
 * null when the process is gone.
 */
export function procStat(pid: number): { ppid: number; own: number; reaped: number } | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    // Gone between the listing of /proc and this read: a process that no longer runs.
    return null;
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { ppid: Number(fields[1]), own: Number(fields[11]) + Number(fields[12]), reaped: Number(fields[13]) + Number(fields[14]) };
}

/** user + system CPU seconds of a process, from /proc; 0 when it is gone. */
export function cpuSeconds(pid: number): number {
  return (procStat(pid)?.own ?? 0) / TICKS_PER_SECOND;
}

/** The postmaster of the server's own cluster: the first line of its data directory's postmaster.pid. */
export async function postmasterPid(dataSource: DataSource): Promise<number> {
  const [{ dir }] = (await dataSource.query(`SELECT current_setting('data_directory') AS dir`)) as { dir: string }[];
  const pid = Number.parseInt(readFileSync(path.join(dir!, 'postmaster.pid'), 'utf8').split('\n')[0] ?? '', 10);
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`no postmaster pid in ${dir}/postmaster.pid`);
  return pid;
}

/**
 * CPU seconds of a process and its children: its own, that of the children it has reaped (their
 * time is in its cutime and cstime) and that of its children alive now. Never decreasing: a
 * child that ends moves its time from the live children to the reaped ones.
 */
export function treeCpu(root: number): number {
  const stat = procStat(root);
  if (!stat) throw new Error(`process ${root} is gone`);
  let ticks = stat.own + stat.reaped;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const child = procStat(Number(entry));
    if (child && child.ppid === root) ticks += child.own + child.reaped;
  }
  return ticks / TICKS_PER_SECOND;
}

/**
 * CPU seconds of the server's own PostgreSQL: its postmaster and the backends it started, live or
 * ended; never another cluster's processes on the same machine.
 */
export function postgresCpu(postmaster: number): number {
  return treeCpu(postmaster);
}
