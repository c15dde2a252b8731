/**
 * The build `npm start` and `npm run worker` run first. It prints nothing when nothing changed,
 * but a first build takes a minute or more on a small machine: it says what it does and how long
 * it took, as JSON lines at info like the server's log (none below LOG_LEVEL=info).
 */
import { spawnSync } from 'node:child_process';

const LEVELS = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };
const threshold = LEVELS[(process.env.LOG_LEVEL ?? '').trim().toLowerCase()] ?? LEVELS.info;

function info(fields, msg) {
  if (threshold > LEVELS.info) return;
  process.stdout.write(`${JSON.stringify({ level: LEVELS.info, time: Date.now(), pid: process.pid, ...fields, msg })}\n`);
}

info({}, 'building: compiling the TypeScript sources into dist/ (only what changed; a first build takes a minute or more)…');
const started = Date.now();
// The npm that runs this script, also when `npm` is not on PATH.
const [command, args] = process.env.npm_execpath
  ? [process.execPath, [process.env.npm_execpath, 'run', 'build', '--silent']]
  : ['npm', ['run', 'build', '--silent']];
const result = spawnSync(command, args, { stdio: 'inherit' });
if (result.status !== 0) {
  process.stderr.write('ReportQL cannot start: the build (npm run build) failed; its errors are above.\n');
  process.exit(result.status ?? 1);
}
const ms = Date.now() - started;
info({ ms }, `built in ${(ms / 1000).toFixed(1)} s`);
