/* raudit's native kernels (raudit/generators/nn/native.py compiles and loads this file).
 *
 * Two kinds of hot element-wise work of the eager CPU step, each giving torch's own bits:
 *
 * 1. The random streams' splitmix64 hash and its uniforms (raudit/generators/nn/rng.py).
 *    Integer arithmetic, then integers below 2^53 converted to floating point and scaled by
 *    powers of two: exact, so any compiler and any flags give the same bits. One pass instead
 *    of numpy's nine (hash_np.py).
 *
 * 2. smartnoise's generator block without gradients: LayerNorm (no affine) of a row, then the
 *    per-model affine (torch.addcmul), LeakyReLU and the residual sum, in place. The layer
 *    norm reproduces ATen's CPU kernel operation by operation: a Welford pass over lanes of
 *    `vw` columns (ATen's Vectorized<double> width) with the 1/(j+1) factors, the lanes
 *    merged in order, rstd = 1/sqrt(var + eps), y = (x - mean) * rstd. Where ATen's compiler
 *    fused a multiply and an add into one rounding, fma() is written here; everything else is
 *    compiled with -ffp-contract=off so no other pair fuses. Only rows of at most 16 lanes
 *    (one of ATen's chunks) are handled; native.py checks every row width against
 *    torch.layer_norm on a probe before it uses this, and falls back to torch otherwise.
 */
#include <math.h>
#include <stdint.h>

#define GOLDEN 0x9E3779B97F4A7C15ULL
#define MUL1 0xBF58476D1CE4E5B9ULL
#define MUL2 0x94D049BB133111EBULL

static inline uint64_t mix(uint64_t key, uint64_t pos) {
  uint64_t x = key + pos * GOLDEN + GOLDEN;
  x = (x ^ (x >> 30)) * MUL1;
  x = (x ^ (x >> 27)) * MUL2;
  return x ^ (x >> 31);
}

/* (m,) keys x (n,) positions -> out (m, n) or (m, 2n); row-major */
void rd_bits(const uint64_t *keys, int64_t m, const uint64_t *pos, int64_t n, uint64_t *out) {
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) out[i * n + j] = mix(keys[i], pos[j]);
}

void rd_unit53(const uint64_t *keys, int64_t m, const uint64_t *pos, int64_t n, double *out) {
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) out[i * n + j] = (double)(mix(keys[i], pos[j]) >> 11) * 0x1p-53;
}

void rd_open53(const uint64_t *keys, int64_t m, const uint64_t *pos, int64_t n, double *out) {
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++)
      out[i * n + j] = ((double)(mix(keys[i], pos[j]) >> 11) + 0.5) * 0x1p-53;
}

void rd_unit32x2(const uint64_t *keys, int64_t m, const uint64_t *pos, int64_t n, double *out) {
  for (int64_t i = 0; i < m; i++) {
    double *o = out + i * 2 * n;
    for (int64_t j = 0; j < n; j++) {
      uint64_t h = mix(keys[i], pos[j]);
      o[2 * j] = (double)(uint32_t)(h >> 32) * 0x1p-32;
      o[2 * j + 1] = (double)(uint32_t)h * 0x1p-32;
    }
  }
}

void rd_unit24x2(const uint64_t *keys, int64_t m, const uint64_t *pos, int64_t n, float *out) {
  for (int64_t i = 0; i < m; i++) {
    float *o = out + i * 2 * n;
    for (int64_t j = 0; j < n; j++) {
      uint64_t h = mix(keys[i], pos[j]);
      o[2 * j] = (float)(uint32_t)(h >> 40) * 0x1p-24f;
      o[2 * j + 1] = (float)(uint32_t)((h >> 8) & 0xFFFFFF) * 0x1p-24f;
    }
  }
}

#define MAXVW 16
#define ROWS 8 /* rows whose moments are computed together: each row's Welford pass is a chain of
                  dependent operations, so a row alone waits on latency; eight rows interleaved
                  keep the vector units busy. Each row's own operations and their order are
                  unchanged, so are its bits. */

/* mean and biased variance of rows x[r * cols ...], r < nrows <= ROWS, each row of
 * cols <= 16 * vw values, in ATen's order */
static inline __attribute__((always_inline)) void moments(const double *x, int nrows, int64_t cols,
                                                          int vw, double *mean, double *var) {
  const int64_t n = cols / vw;
  double a1[ROWS][MAXVW], a2[ROWS][MAXVW];
  for (int r = 0; r < nrows; r++)
    for (int l = 0; l < vw; l++) a1[r][l] = a2[r][l] = 0.0;
  for (int64_t j = 0; j < n; j++) {
    const double c = 1.0 / (double)(j + 1);
    for (int r = 0; r < nrows; r++) {
      const double *p = x + r * cols + j * vw;
      for (int l = 0; l < vw; l++) {
        const double xv = p[l], d = xv - a1[r][l];
        a1[r][l] = fma(d, c, a1[r][l]);
        a2[r][l] = fma(d, xv - a1[r][l], a2[r][l]);
      }
    }
  }
  for (int r = 0; r < nrows; r++) {
    const double *row = x + r * cols;
    /* the columns past the last whole lane, one by one */
    int64_t k = 0;
    double m1 = 0.0, m2 = 0.0;
    for (int64_t i = n * vw; i < cols; i++) {
      const double d = row[i] - m1;
      ++k;
      m1 += d / (double)k;
      m2 += d * (row[i] - m1);
    }
    /* then each lane's moments (n values each) merged in, lane by lane */
    for (int l = 0; l < vw; l++) {
      const int64_t total = k + n;
      const double c = total == 0 ? 0.0 : (double)n / (double)total;
      const double d = a1[r][l] - m1;
      m1 = fma(c, d, m1);
      m2 = m2 + fma(d * d * c, (double)k, a2[r][l]);
      k = total;
    }
    mean[r] = m1;
    var[r] = m2 / (double)cols;
  }
}

/* h (groups, rows, cols) in place: LayerNorm(h) * gamma[g] + beta[g] (one rounding if
 * fused_affine, else two), LeakyReLU(slope), then + res (same shape) when res is not NULL.
 * gamma and beta: row g at g * param_stride. */
void ln_leaky_block(double *h, const double *res, const double *gamma, const double *beta,
                    int64_t param_stride, int64_t groups, int64_t rows, int64_t cols, double eps,
                    double slope, int vw, int fused_affine) {
  double mean[ROWS], var[ROWS];
  for (int64_t g = 0; g < groups; g++) {
    const double *ga = gamma + g * param_stride, *be = beta + g * param_stride;
    for (int64_t r0 = 0; r0 < rows; r0 += ROWS) {
      const int nr = rows - r0 < ROWS ? (int)(rows - r0) : ROWS;
      double *x0 = h + (g * rows + r0) * cols;
      if (vw == 4)  /* a constant lane count: the lane loops become vector instructions */
        moments(x0, nr, cols, 4, mean, var);
      else
        moments(x0, nr, cols, vw, mean, var);
      for (int r = 0; r < nr; r++) {
        double *x = x0 + r * cols;
        const double *add = res ? res + (g * rows + r0 + r) * cols : 0;
        const double rstd = 1.0 / sqrt(var[r] + eps), bias = -mean[r];
        for (int64_t j = 0; j < cols; j++) {
          const double y = (x[j] + bias) * rstd + 0.0;
          double a = fused_affine ? fma(y, ga[j], be[j]) : be[j] + y * ga[j];
          a = a > 0.0 ? a : a * slope;
          x[j] = add ? a + add[j] : a;
        }
      }
    }
  }
}
