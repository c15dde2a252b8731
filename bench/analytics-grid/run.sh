#!/bin/sh
# Paper-scale bootstrap grid: TypeScript (bootstrapGrid) then NumPy on the same data and resamples.
set -eu
cd "$(dirname "$0")/../.."
node bench/analytics-grid/ts-run.js bench/analytics-grid/grid-bench.ts --repeats "${REPEATS:-3}"
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 \
  /usr/bin/python3 bench/analytics-grid/grid_numpy.py --repeats "${REPEATS:-3}"
