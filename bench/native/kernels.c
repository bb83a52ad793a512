/*
 * The correlation and axis-panel kernels in C, the same algorithms as the WASM core and its
 * TypeScript twins (assembly/kernels/{correlation,panel}.ts, src/kernels/reference/*.ts): two-lane
 * sums, heap-sorted average ranks, month sums folded into groups. bench/core.ts builds it with
 * gcc -O3 -march=native when gcc is present and times it on the same inputs, read from files.
 *
 *   kernels correlation <data.f64> nSeries nAxes nPoints reps
 *   kernels panel <panel.f32> <mask.u8> nPatients nMonths reps
 *
 * Prints one JSON line: the median milliseconds and a few results to check against the WASM core.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *xs, int n) {
  qsort(xs, n, sizeof(double), cmp_double);
  return xs[n / 2];
}

static void *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) { perror(path); exit(1); }
  fseek(f, 0, SEEK_END);
  *size = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  void *buf = malloc(*size);
  if (fread(buf, 1, *size, f) != *size) { perror(path); exit(1); }
  fclose(f);
  return buf;
}

/* ---- correlation ---- */

static double pearson_dense(const double *x, const double *y, int m) {
  if (m < 3) return NAN;
  double sx0 = 0, sx1 = 0, sy0 = 0, sy1 = 0;
  int i = 0;
  for (; i + 2 <= m; i += 2) { sx0 += x[i]; sx1 += x[i + 1]; sy0 += y[i]; sy1 += y[i + 1]; }
  double sx = sx0 + sx1, sy = sy0 + sy1;
  if (i < m) { sx += x[i]; sy += y[i]; }
  double mx = sx / m, my = sy / m;
  double xx0 = 0, xx1 = 0, yy0 = 0, yy1 = 0, xy0 = 0, xy1 = 0;
  for (i = 0; i + 2 <= m; i += 2) {
    double dx0 = x[i] - mx, dx1 = x[i + 1] - mx, dy0 = y[i] - my, dy1 = y[i + 1] - my;
    xx0 += dx0 * dx0; xx1 += dx1 * dx1; yy0 += dy0 * dy0; yy1 += dy1 * dy1; xy0 += dx0 * dy0; xy1 += dx1 * dy1;
  }
  double sxx = xx0 + xx1, syy = yy0 + yy1, sxy = xy0 + xy1;
  if (i < m) { double dx = x[i] - mx, dy = y[i] - my; sxx += dx * dx; syy += dy * dy; sxy += dx * dy; }
  if (sxx <= 0 || syy <= 0) return NAN;
  double r = sxy / sqrt(sxx * syy);
  return r > 1 ? 1 : r < -1 ? -1 : r;
}

static void sift_down(int *idx, const double *v, int start, int end) {
  int root = start;
  for (;;) {
    int child = 2 * root + 1;
    if (child >= end) return;
    if (child + 1 < end && v[idx[child]] < v[idx[child + 1]]) child++;
    if (v[idx[root]] >= v[idx[child]]) return;
    int t = idx[root]; idx[root] = idx[child]; idx[child] = t;
    root = child;
  }
}

static void rank_average(const double *v, int m, double *r, int *idx) {
  for (int i = 0; i < m; i++) idx[i] = i;
  for (int start = (m >> 1) - 1; start >= 0; start--) sift_down(idx, v, start, m);
  for (int end = m - 1; end > 0; end--) { int t = idx[0]; idx[0] = idx[end]; idx[end] = t; sift_down(idx, v, 0, end); }
  int i = 0;
  while (i < m) {
    int j = i;
    double vi = v[idx[i]];
    while (j + 1 < m && v[idx[j + 1]] == vi) j++;
    double rank = ((double)(i + j) + 2.0) * 0.5;
    for (int k = i; k <= j; k++) r[idx[k]] = rank;
    i = j + 1;
  }
}

static void correlation_matrix(const double *data, int nSeries, int nAxes, int nPoints, double *outP, double *outS, double *outC) {
  double *vx = malloc(nPoints * sizeof(double)), *vy = malloc(nPoints * sizeof(double));
  double *rx = malloc(nPoints * sizeof(double)), *ry = malloc(nPoints * sizeof(double));
  int *idx = malloc(nPoints * sizeof(int));
  int nPairs = nAxes * (nAxes - 1) / 2;
  for (int s = 0; s < nSeries; s++) {
    const double *base = data + (size_t)s * nAxes * nPoints;
    int p = 0;
    for (int a = 0; a < nAxes; a++) {
      for (int b = a + 1; b < nAxes; b++) {
        int m = 0;
        for (int t = 0; t < nPoints; t++) {
          double u = base[a * nPoints + t], v = base[b * nPoints + t];
          if (!isnan(u) && !isnan(v)) { vx[m] = u; vy[m] = v; m++; }
        }
        size_t o = (size_t)s * nPairs + p;
        outC[o] = m;
        outP[o] = pearson_dense(vx, vy, m);
        if (m >= 3) { rank_average(vx, m, rx, idx); rank_average(vy, m, ry, idx); outS[o] = pearson_dense(rx, ry, m); }
        else outS[o] = NAN;
        p++;
      }
    }
  }
  free(vx); free(vy); free(rx); free(ry); free(idx);
}

/* ---- axis panel ---- */

#define TOL 1e-6

static void panel_mean_mask(const float *panel, int nPatients, int nMonths, int axis, int from, int to, double lo, double hi, const uint8_t *in, uint8_t *out) {
  for (int p = 0; p < nPatients; p++) {
    uint8_t keep = 0;
    if (in[p]) {
      const float *row = panel + ((size_t)axis * nPatients + p) * nMonths;
      double n = 0, s = 0;
      for (int m = from; m < to; m++) { double x = row[m]; if (isnan(x)) continue; n += 1; s += x; }
      if (n > 0) { double mean = s / n; keep = mean >= lo - TOL && mean <= hi + TOL; }
    }
    out[p] = keep;
  }
}

static void panel_trend(const float *panel, int nPatients, int nMonths, const int *axes, int nAxes, int from, int to,
                        const int *monthGroup, int nGroups, const uint8_t *mask, double *outCount, double *outSum, double *outSlope) {
  double *monthCount = malloc(nMonths * sizeof(double)), *monthSum = malloc(nMonths * sizeof(double));
  memset(outCount, 0, nAxes * nGroups * sizeof(double));
  memset(outSum, 0, nAxes * nGroups * sizeof(double));
  for (int k = 0; k < nAxes; k++) {
    for (int m = 0; m < nMonths; m++) { monthCount[m] = 0; monthSum[m] = 0; }
    double sn = 0, ss = 0, sq = 0;
    for (int p = 0; p < nPatients; p++) {
      if (!mask[p]) continue;
      const float *row = panel + ((size_t)axes[k] * nPatients + p) * nMonths;
      double n = 0, st = 0, sx = 0, stt = 0, stx = 0;
      for (int m = from; m < to; m++) {
        double x = row[m];
        if (isnan(x)) continue;
        monthCount[m] += 1; monthSum[m] += x;
        n += 1; st += m; sx += x; stt += (double)m * m; stx += m * x;
      }
      double denom = n * stt - st * st;
      if (n >= 3 && denom > 0) { double slope = (n * stx - st * sx) / denom; sn += 1; ss += slope; sq += slope * slope; }
    }
    for (int m = from; m < to; m++) {
      int g = monthGroup[m];
      if (g >= 0 && g < nGroups) { outCount[k * nGroups + g] += monthCount[m]; outSum[k * nGroups + g] += monthSum[m]; }
    }
    outSlope[k * 3] = sn; outSlope[k * 3 + 1] = ss; outSlope[k * 3 + 2] = sq;
  }
  free(monthCount); free(monthSum);
}

int main(int argc, char **argv) {
  if (argc >= 7 && strcmp(argv[1], "correlation") == 0) {
    size_t size;
    double *data = read_file(argv[2], &size);
    int nSeries = atoi(argv[3]), nAxes = atoi(argv[4]), nPoints = atoi(argv[5]), reps = atoi(argv[6]);
    size_t nOut = (size_t)nSeries * nAxes * (nAxes - 1) / 2;
    double *p = malloc(nOut * sizeof(double)), *s = malloc(nOut * sizeof(double)), *c = malloc(nOut * sizeof(double));
    double *times = malloc(reps * sizeof(double));
    correlation_matrix(data, nSeries, nAxes, nPoints, p, s, c);
    for (int r = 0; r < reps; r++) { double t0 = now_ms(); correlation_matrix(data, nSeries, nAxes, nPoints, p, s, c); times[r] = now_ms() - t0; }
    printf("{\"ms\":%.6f,\"pearson\":[%.17g,%.17g,%.17g],\"spearman\":[%.17g,%.17g,%.17g]}\n", median(times, reps), p[0], p[1], p[nOut - 1], s[0], s[1], s[nOut - 1]);
    return 0;
  }
  if (argc >= 7 && strcmp(argv[1], "panel") == 0) {
    size_t size, msize;
    float *panel = read_file(argv[2], &size);
    uint8_t *cohort = read_file(argv[3], &msize);
    int nPatients = atoi(argv[4]), nMonths = atoi(argv[5]), reps = atoi(argv[6]);
    int axes[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    int *quarter = malloc(nMonths * sizeof(int));
    for (int m = 0; m < nMonths; m++) quarter[m] = m / 3;
    int nGroups = 12;
    uint8_t *mask = malloc(nPatients);
    double count[8 * 12], sum[8 * 12], slope[8 * 3];
    double *times = malloc(reps * sizeof(double));
    for (int r = -1; r < reps; r++) {
      double t0 = now_ms();
      panel_mean_mask(panel, nPatients, nMonths, 0, 0, nMonths, 5, 10, cohort, mask);
      panel_trend(panel, nPatients, nMonths, axes, 8, 0, nMonths, quarter, nGroups, mask, count, sum, slope);
      if (r >= 0) times[r] = now_ms() - t0;
    }
    printf("{\"ms\":%.6f,\"count\":[%.17g,%.17g],\"sum\":[%.17g,%.17g],\"slope\":[%.17g,%.17g,%.17g]}\n", median(times, reps), count[0], count[95], sum[0], sum[95], slope[0], slope[1], slope[2]);
    return 0;
  }
  fprintf(stderr, "usage: kernels correlation <data.f64> nSeries nAxes nPoints reps | kernels panel <panel.f32> <mask.u8> nPatients nMonths reps\n");
  return 2;
}
