/*
 * Peer of the exact Kemeny–Young DP in C: the textbook subset DP over one n × n pairwise matrix
 * (docs/scoring.md §6), for bench/kemeny/exact-dp-bench.ts, which builds it with the system cc.
 *
 *   h(T) = min over c in T of [ h(T \ {c}) + sum over j in T \ {c} of w[j][c] ]
 *
 * is the least disagreement of ordering the set T (c placed first, after it T \ {c}); the sums
 * over T are read from two tables of column sums, one over the subsets of the low half of the
 * candidates and one over the high half. The order is rebuilt front to back taking the lowest
 * index among the candidates that attain h(T), the tie-break of src/analytics/kemeny without
 * macro averages or names.
 *
 * Input on stdin: n, calls, then the n × n matrix row-major (w[i][j] = weight of the voters
 * preferring i to j). Output: one line per call, "call <wall ms> <cpu ms>", then
 * "order <c1> ... <cn>" and "score <s>".
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* table[S * n + c] = sum over b in S of w[(offset + b) * n + c], for every subset S of `bits`. */
static void column_sums(const double *w, int n, int offset, int bits, double *table) {
  for (int c = 0; c < n; c++) table[c] = 0;
  for (long s = 1; s < (1L << bits); s++) {
    int b = __builtin_ctzl(s);
    const double *prev = table + (s & (s - 1)) * n;
    const double *row = w + (long)(offset + b) * n;
    double *out = table + s * n;
    for (int c = 0; c < n; c++) out[c] = prev[c] + row[c];
  }
}

static double solve(const double *w, int n, double *h, double *low, double *high, int *order) {
  int low_bits = n / 2;
  int high_bits = n - low_bits;
  long low_mask = (1L << low_bits) - 1;
  long size = 1L << n;
  column_sums(w, n, 0, low_bits, low);
  column_sums(w, n, low_bits, high_bits, high);
  h[0] = 0;
  for (long t = 1; t < size; t++) {
    const double *lo = low + (t & low_mask) * n;
    const double *hi = high + (t >> low_bits) * n;
    double best = 1.0 / 0.0;
    for (long rest = t; rest; rest &= rest - 1) {
      int c = __builtin_ctzl(rest);
      double value = h[t ^ (1L << c)] + lo[c] + hi[c];
      if (value < best) best = value;
    }
    h[t] = best;
  }
  long t = size - 1;
  for (int at = 0; t; at++) {
    const double *lo = low + (t & low_mask) * n;
    const double *hi = high + (t >> low_bits) * n;
    int chosen = -1;
    for (long rest = t; rest; rest &= rest - 1) {
      int c = __builtin_ctzl(rest);
      if (h[t ^ (1L << c)] + lo[c] + hi[c] <= h[t]) {
        chosen = c;
        break;
      }
    }
    order[at] = chosen;
    t ^= 1L << chosen;
  }
  return h[size - 1];
}

int main(void) {
  int n, calls;
  if (scanf("%d %d", &n, &calls) != 2 || n < 1 || n > 26 || calls < 1) return 2;
  double *w = malloc(sizeof(double) * n * n);
  for (int k = 0; k < n * n; k++) if (scanf("%lf", &w[k]) != 1) return 2;
  int low_bits = n / 2;
  int high_bits = n - low_bits;
  double *h = malloc(sizeof(double) * (1L << n));
  double *low = malloc(sizeof(double) * (1L << low_bits) * n);
  double *high = malloc(sizeof(double) * (1L << high_bits) * n);
  int *order = malloc(sizeof(int) * n);
  if (!w || !h || !low || !high || !order) return 3;
  double score = 0;
  for (int call = 0; call < calls; call++) {
    double wall = now(CLOCK_MONOTONIC);
    double cpu = now(CLOCK_PROCESS_CPUTIME_ID);
    score = solve(w, n, h, low, high, order);
    printf("call %.3f %.3f\n", now(CLOCK_MONOTONIC) - wall, now(CLOCK_PROCESS_CPUTIME_ID) - cpu);
  }
  printf("order");
  for (int k = 0; k < n; k++) printf(" %d", order[k]);
  printf("\nscore %.17g\n", score);
  return 0;
}
