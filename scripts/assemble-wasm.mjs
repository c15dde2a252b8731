#!/usr/bin/env node
/**
 * Assembles every WebAssembly text file under src/ (src/analytics/wasm/*.wat) to its binary
 * with the `wabt` package (a dev dependency: the built .wasm is what ships, so nothing needs
 * wabt at run time).
 *
 *   node scripts/assemble-wasm.mjs            # src/…/x.wat → src/…/x.wasm (for the sources:
 *                                             # jest, the benchmarks' TypeScript runners)
 *   node scripts/assemble-wasm.mjs . dist     # and → dist/src/…/x.wasm (npm run build)
 *
 * The .wasm files under src/ are build output (git-ignored). A file whose bytes would not
 * change is left alone. Exits non-zero, with wabt's message, when a file does not assemble or
 * validate.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import wabtModule from 'wabt';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function watFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return watFiles(full);
    return entry.isFile() && entry.name.endsWith('.wat') ? [full] : [];
  });
}

/** The binary of one text module: validated, without a name section, LEB128s canonical. */
export async function assemble(file) {
  const wabt = await wabtModule();
  const module = wabt.parseWat(path.basename(file), fs.readFileSync(file, 'utf8'), { simd: true });
  try {
    module.resolveNames();
    module.validate();
    return Buffer.from(module.toBinary({ log: false, canonicalize_lebs: true, write_debug_names: false }).buffer);
  } finally {
    module.destroy();
  }
}

async function main(outRoots) {
  const roots = (outRoots.length > 0 ? outRoots : ['.']).map((r) => path.resolve(repo, r));
  for (const file of watFiles(path.join(repo, 'src'))) {
    const bytes = await assemble(file);
    const relative = path.relative(repo, file).replace(/\.wat$/, '.wasm');
    for (const root of roots) {
      const target = path.join(root, relative);
      if (fs.existsSync(target) && fs.readFileSync(target).equals(bytes)) continue;
      fs.mkdirSync(path.dirname(target), { recursive: true });
      // Renamed into place, so a process loading the module never reads half a file.
      const partial = `${target}.${process.pid}.partial`;
      fs.writeFileSync(partial, bytes);
      fs.renameSync(partial, target);
    }
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((error) => {
    process.stderr.write(`assemble-wasm: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
