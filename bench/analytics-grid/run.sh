#!/bin/sh
# Paper-scale bootstrap grid: TypeScript (bootstrapGrid) then NumPy on the same data and resamples,
# for 0/1 item scores only, then with 4 and with all 16 variables real-valued. TypeScript is timed
# on one thread and on two statistics threads; NumPy on one BLAS thread and on two.
set -eu
cd "$(dirname "$0")/../.."
# The WebAssembly kernel that the TypeScript sources load (src/analytics/wasm/*.wat → .wasm).
node scripts/assemble-wasm.mjs
for real in 0 4 16; do
  workload=binary
  [ "$real" -eq 0 ] || workload="real$real"
  node bench/analytics-grid/ts-run.js bench/analytics-grid/grid-bench.ts --repeats "${REPEATS:-3}" --real "$real"
  for blas_threads in 1 2; do
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=$blas_threads \
      /usr/bin/python3 bench/analytics-grid/grid_numpy.py --repeats "${REPEATS:-3}" --workload "$workload"
  done
done
