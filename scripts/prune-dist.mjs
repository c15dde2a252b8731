#!/usr/bin/env node
/**
 * Removes compiled files under dist/ whose source is gone, before `tsc -b` writes the rest.
 * tsc never deletes outputs, and a stale dist/src/x.js shadows a module that became the folder
 * dist/src/x/index.js (Node resolves the file first), so an existing checkout would keep
 * running the old code after an update.
 *
 *   node scripts/prune-dist.mjs [dist]
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.resolve(repo, process.argv[2] ?? 'dist');
const OUTPUT = /\.(d\.ts|js)(\.map)?$/;

function prune(dir) {
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    if (error.code === 'ENOENT') return;
    throw error;
  }
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      prune(full);
      continue;
    }
    const match = OUTPUT.exec(entry.name);
    if (!entry.isFile() || !match) continue;
    const stem = path.join(repo, path.relative(dist, dir), entry.name.slice(0, match.index));
    if (!fs.existsSync(`${stem}.ts`) && !fs.existsSync(`${stem}.js`)) fs.rmSync(full);
  }
}

prune(path.join(dist, 'src'));
prune(path.join(dist, 'bench'));
prune(path.join(dist, 'migrations'));
prune(path.join(dist, 'seeds'));
