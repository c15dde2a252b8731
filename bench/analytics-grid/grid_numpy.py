"""Straightforward vectorised NumPy version of the bootstrap grid in grid-bench.ts.

Reads the synthetic data and the multiplicity matrix written by grid-bench.ts
(bench/.data/analytics-grid/), computes every per-variable and macro percentile interval with
dense matrix products (one W[:, class] @ X[class, :] per variable and class), checks the
result against the TypeScript summary and prints both timings and their ratio.

Usage: env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 \
         /usr/bin/python3 bench/analytics-grid/grid_numpy.py [--repeats 3] [--workload binary|real4|real16]
"""
import json
import os
import sys
import time

import numpy as np

DATA_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".data", "analytics-grid")


def grid(groups, items, W, confidence):
    """groups: V x N (-1 = no reference); items: R x V x N (item scores); W: B x N multiplicities."""
    V, N = groups.shape
    R = items.shape[0]
    B = W.shape[0]
    Wf = W.astype(np.float64)
    reps = np.empty((R, V, B))
    points = np.empty((R, V))
    for v in range(V):
        g = groups[v]
        total = np.zeros((B, R))
        present = np.zeros(B)
        ptotal = np.zeros(R)
        pcount = 0
        for c in np.unique(g[g >= 0]):
            mask = g == c
            X = items[:, v, mask].astype(np.float64)  # R x n_c
            Wc = Wf[:, mask]  # B x n_c
            den = Wc.sum(axis=1)  # B
            num = Wc @ X.T  # B x R
            ok = den > 0
            total[ok] += num[ok] / den[ok, None]
            present += ok
            ptotal += X.mean(axis=1)
            pcount += 1
        with np.errstate(invalid="ignore", divide="ignore"):
            reps[:, v, :] = (total / present[:, None]).T
        points[:, v] = ptotal / pcount
    macro_reps = np.nanmean(reps, axis=1)  # R x B (equal weights)
    macro_points = points.mean(axis=1)
    lo = (1 - confidence) / 2
    qs = [lo, 1 - lo]
    ci = np.quantile(reps, qs, axis=2, method="linear")  # 2 x R x V
    macro_ci = np.quantile(macro_reps, qs, axis=1, method="linear")  # 2 x R
    return points, ci, macro_points, macro_ci


def blas_library():
    """The BLAS this process loaded (Linux: from /proc/self/maps), e.g. libopenblasp-r0.3.21.so.
    Debian's python3-numpy alone brings the reference BLAS, several times slower than OpenBLAS
    (libopenblas0-pthread), which is the peer these timings are meant to compare with."""
    try:
        with open("/proc/self/maps") as maps:
            names = {line.split()[-1] for line in maps if "blas" in line.lower() and "/" in line}
    except OSError:
        return "unknown"
    return ", ".join(sorted(os.path.realpath(name) for name in names)) or "unknown"


def main():
    repeats = int(sys.argv[sys.argv.index("--repeats") + 1]) if "--repeats" in sys.argv else 3
    workload = sys.argv[sys.argv.index("--workload") + 1] if "--workload" in sys.argv else "binary"
    DATA = os.path.join(DATA_ROOT, workload)
    with open(os.path.join(DATA, "ts-timing.json")) as f:
        meta = json.load(f)
    N, R, V, B = meta["n"], meta["runs"], meta["variables"], meta["resamples"]
    groups = np.fromfile(os.path.join(DATA, "groups.i32"), dtype=np.int32).reshape(V, N)
    items = np.fromfile(os.path.join(DATA, "items.f64"), dtype=np.float64).reshape(R, V, N)
    W = np.fromfile(os.path.join(DATA, "multiplicities.i32"), dtype=np.int32).reshape(B, N)

    grid(groups, items, W, meta["confidence"])  # warm-up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        points, ci, macro_points, macro_ci = grid(groups, items, W, meta["confidence"])
        times.append(time.perf_counter() - t0)

    ts = np.fromfile(os.path.join(DATA, "ts-summary.f64"), dtype=np.float64)
    ts_var = ts[: R * V * 3].reshape(R, V, 3)
    ts_macro = ts[R * V * 3 :].reshape(R, 3)
    diff = max(
        np.max(np.abs(ts_var[:, :, 0] - points)),
        np.max(np.abs(ts_var[:, :, 1] - ci[0])),
        np.max(np.abs(ts_var[:, :, 2] - ci[1])),
        np.max(np.abs(ts_macro[:, 0] - macro_points)),
        np.max(np.abs(ts_macro[:, 1] - macro_ci[0])),
        np.max(np.abs(ts_macro[:, 2] - macro_ci[1])),
    )
    med = float(np.median(times))
    print(
        f"NumPy {np.__version__} grid, workload {workload} (same data, same multiplicity matrix; excludes resampling), "
        f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}\n"
        f"  BLAS: {blas_library()}\n"
        f"  median {med:.3f} s over {repeats} runs [{', '.join(f'{t:.3f}' for t in times)}]\n"
        f"  max |TypeScript - NumPy| over all points and interval bounds: {diff:.3e}\n"
        f"  ratio TypeScript default / NumPy: {meta['medianDefault'] / med:.2f}; "
        f"scalar kernel / NumPy: {meta['medianScalar'] / med:.2f}"
        + (
            f"; TypeScript on {meta['threads']} statistics threads / NumPy: {meta['medianThreaded'] / med:.2f}"
            if meta.get("medianThreaded")
            else ""
        )
    )
    if diff > 1e-12:
        sys.exit("TypeScript and NumPy disagree")


if __name__ == "__main__":
    main()
