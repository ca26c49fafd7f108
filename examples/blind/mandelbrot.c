/*
 * mandelbrot.c -- the escape-time iteration count of every pixel of a W x H image of the
 * Mandelbrot set over [-2, 1] x [-1.5, 1.5], at most MAXIT iterations: one thread per pixel
 * (rows -> y, columns -> x), each running a data-dependent `while` loop, so the threads of a
 * warp run different trip counts (from 1 outside the set to MAXIT inside it).
 *
 *   img (out): H x W ints (16 MB).   Work size: W = H = 2048, MAXIT = 256.
 *   Trace size: W = H = 128 (MAXIT = 256).
 *   Compulsory DRAM traffic: img written once: W x H x 4 bytes (17 MB); no input.
 */
#include <stdio.h>

#ifndef W
#define W 2048
#endif
#ifndef H
#define H 2048
#endif
#ifndef MAXIT
#define MAXIT 256
#endif

#pragma cgp trace W=128 H=128

static int img[H][W];

int main(void)
{
#pragma cgp kernel mandelbrot grid=2
  for (int py = 0; py < H; py++)
    for (int px = 0; px < W; px++) {
      float cr = -2.0f + (float)px * (3.0f / W);
      float ci = -1.5f + (float)py * (3.0f / H);
      float zr = 0.0f, zi = 0.0f;
      int it = 0;
      while (it < MAXIT && zr * zr + zi * zi <= 4.0f) {
        float t = zr * zr - zi * zi + cr;
        zi = 2.0f * zr * zi + ci;
        zr = t;
        it++;
      }
      img[py][px] = it;
    }

  long total = 0;
  for (int py = 0; py < H; py++)
    for (int px = 0; px < W; px++)
      total += img[py][px];
  printf("mandelbrot %ld\n", total);
  return 0;
}
