/*
 * deriche.c -- DERICHE: Deriche recursive edge-detection filter (PolyBench/C 4 "deriche",
 *              float; not in PolyBench/GPU, used for the GPU-vs-FPGA comparison)
 *
 *   imgIn, imgOut, Y1, Y2: W x H (first index i < W, second index j < H)
 *   Horizontal pass: causal (Y1) and anti-causal (Y2) IIR filters along j for every row i,
 *   imgOut = c1 (Y1 + Y2); vertical pass: the same along i for every column j of imgOut,
 *   imgOut = c2 (Y1 + Y2).  The filter coefficients are computed on the host (expf, powf).
 *
 * Kernel split (the natural CUDA port: one kernel per pass, recursive filters run one thread
 * per row or per column, the sums one thread per pixel):
 * Kernel `deriche_hfwd`:  Y1, causal along j.       Grid: 1-D (i); j sequential per thread.
 * Kernel `deriche_hbwd`:  Y2, anti-causal along j.  Grid: 1-D (i); j (descending) sequential.
 * Kernel `deriche_hsum`:  imgOut = c1 (Y1 + Y2).    Grid: 2-D (i, j); no per-thread loop.
 * Kernel `deriche_vfwd`:  Y1, causal along i.       Grid: 1-D (j); i sequential per thread.
 * Kernel `deriche_vbwd`:  Y2, anti-causal along i.  Grid: 1-D (j); i (descending) sequential.
 * Kernel `deriche_vsum`:  imgOut = c2 (Y1 + Y2).    Grid: 2-D (i, j); no per-thread loop.
 * The horizontal filters access [i][j] with i the thread index (uncoalesced), the vertical
 * ones with j the thread index (coalesced).
 * Work size: W = H = 1024.   Trace size: 128.
 */
#include <math.h>
#include <stdio.h>

#ifndef W
#define W 1024
#endif
#ifndef H
#define H 1024
#endif

#pragma cgp trace W=128 H=128

static float imgIn[W][H];
static float imgOut[W][H];
static float Y1[W][H];
static float Y2[W][H];

static float a1, a2, a3, a4, a5, a6, a7, a8;
static float b1, b2, c1, c2;

int main(void)
{
  const float alpha = 0.25f;
  float k = (1.0f - expf(-alpha)) * (1.0f - expf(-alpha)) / (1.0f + 2.0f * alpha * expf(-alpha) - expf(2.0f * alpha));
  a1 = k;
  a5 = k;
  a2 = k * expf(-alpha) * (alpha - 1.0f);
  a6 = a2;
  a3 = k * expf(-alpha) * (alpha + 1.0f);
  a7 = a3;
  a4 = -k * expf(-2.0f * alpha);
  a8 = a4;
  b1 = powf(2.0f, -alpha);
  b2 = -expf(-2.0f * alpha);
  c1 = 1.0f;
  c2 = 1.0f;

  for (int i = 0; i < W; i++)
    for (int j = 0; j < H; j++)
      imgIn[i][j] = (float)((313 * i + 991 * j) % 65536) / 65535.0f;

#pragma cgp kernel deriche_hfwd grid=1
  for (int i = 0; i < W; i++) {
    float ym1 = 0.0f;
    float ym2 = 0.0f;
    float xm1 = 0.0f;
    for (int j = 0; j < H; j++) {
      Y1[i][j] = a1 * imgIn[i][j] + a2 * xm1 + b1 * ym1 + b2 * ym2;
      xm1 = imgIn[i][j];
      ym2 = ym1;
      ym1 = Y1[i][j];
    }
  }

#pragma cgp kernel deriche_hbwd grid=1
  for (int i = 0; i < W; i++) {
    float yp1 = 0.0f;
    float yp2 = 0.0f;
    float xp1 = 0.0f;
    float xp2 = 0.0f;
    for (int j = H - 1; j >= 0; j--) {
      Y2[i][j] = a3 * xp1 + a4 * xp2 + b1 * yp1 + b2 * yp2;
      xp2 = xp1;
      xp1 = imgIn[i][j];
      yp2 = yp1;
      yp1 = Y2[i][j];
    }
  }

#pragma cgp kernel deriche_hsum grid=2
  for (int i = 0; i < W; i++) {
    for (int j = 0; j < H; j++) {
      imgOut[i][j] = c1 * (Y1[i][j] + Y2[i][j]);
    }
  }

#pragma cgp kernel deriche_vfwd grid=1
  for (int j = 0; j < H; j++) {
    float tm1 = 0.0f;
    float ym1 = 0.0f;
    float ym2 = 0.0f;
    for (int i = 0; i < W; i++) {
      Y1[i][j] = a5 * imgOut[i][j] + a6 * tm1 + b1 * ym1 + b2 * ym2;
      tm1 = imgOut[i][j];
      ym2 = ym1;
      ym1 = Y1[i][j];
    }
  }

#pragma cgp kernel deriche_vbwd grid=1
  for (int j = 0; j < H; j++) {
    float tp1 = 0.0f;
    float tp2 = 0.0f;
    float yp1 = 0.0f;
    float yp2 = 0.0f;
    for (int i = W - 1; i >= 0; i--) {
      Y2[i][j] = a7 * tp1 + a8 * tp2 + b1 * yp1 + b2 * yp2;
      tp2 = tp1;
      tp1 = imgOut[i][j];
      yp2 = yp1;
      yp1 = Y2[i][j];
    }
  }

#pragma cgp kernel deriche_vsum grid=2
  for (int i = 0; i < W; i++) {
    for (int j = 0; j < H; j++) {
      imgOut[i][j] = c2 * (Y1[i][j] + Y2[i][j]);
    }
  }

  double sum = 0.0;
  for (int i = 0; i < W; i++)
    for (int j = 0; j < H; j++)
      sum += Y1[i][j];
  printf("checksum Y1 %.6e\n", sum);
  sum = 0.0;
  for (int i = 0; i < W; i++)
    for (int j = 0; j < H; j++)
      sum += Y2[i][j];
  printf("checksum Y2 %.6e\n", sum);
  sum = 0.0;
  for (int i = 0; i < W; i++)
    for (int j = 0; j < H; j++)
      sum += imgOut[i][j];
  printf("checksum imgOut %.6e\n", sum);
  return 0;
}
