/*
 * bilinear.c -- 2x bilinear upsampling of an H x W float image into 2H x 2W, one thread per
 * output pixel: output pixel (y, x) samples the input at ((y + 0.5) / 2 - 0.5,
 * (x + 0.5) / 2 - 0.5) (pixel centres aligned), the four neighbours clamped at the borders;
 * floorf, float -> int and int -> float conversions in every thread.
 *
 *   in: H x W floats (67 MB); out: 2H x 2W floats (268 MB).   Work size: H = W = 4096.
 *   Trace size: H = W = 256.
 *   Compulsory DRAM traffic: in read once (each input pixel is used by 16 output pixels of
 *   neighbouring threads and rows), out written once: 5 x H x W x 4 bytes (336 MB).
 */
#include <math.h>
#include <stdio.h>

#ifndef H
#define H 4096
#endif
#ifndef W
#define W 4096
#endif

#pragma cgp trace H=256 W=256

static float in[H][W];
static float out[2 * H][2 * W];

int main(void)
{
  for (int i = 0; i < H; i++)
    for (int j = 0; j < W; j++)
      in[i][j] = (float)((i * 3 + j * 7) % 64) / 64.0f;

#pragma cgp kernel bilinear grid=2
  for (int y = 0; y < 2 * H; y++)
    for (int x = 0; x < 2 * W; x++) {
      float sy = (y + 0.5f) * 0.5f - 0.5f;
      float sx = (x + 0.5f) * 0.5f - 0.5f;
      float fy = floorf(sy);
      float fx = floorf(sx);
      float wy = sy - fy;
      float wx = sx - fx;
      int y0 = (int)fy;
      int x0 = (int)fx;
      int y1 = y0 + 1;
      int x1 = x0 + 1;
      if (y0 < 0)
        y0 = 0;
      if (x0 < 0)
        x0 = 0;
      if (y1 > H - 1)
        y1 = H - 1;
      if (x1 > W - 1)
        x1 = W - 1;
      float top = (1.0f - wx) * in[y0][x0] + wx * in[y0][x1];
      float bot = (1.0f - wx) * in[y1][x0] + wx * in[y1][x1];
      out[y][x] = (1.0f - wy) * top + wy * bot;
    }

  double sum = 0.0;
  for (int y = 0; y < 2 * H; y++)
    for (int x = 0; x < 2 * W; x++)
      sum += out[y][x];
  printf("bilinear %.6e\n", sum);
  return 0;
}
