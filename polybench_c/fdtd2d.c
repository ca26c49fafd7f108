/*
 * fdtd2d.c -- FDTD-2D: 2-D finite-difference time-domain kernel (PolyBench/GPU "fdtd2d", float)
 *
 *   ex, ey, hz: NX x NY, _fict_: TMAX; TMAX time steps
 *
 * PolyBench/GPU kernel split: the host loops over t = 0 .. TMAX-1 and launches three 2-D
 * kernels per time step (fdtd_step1..3_kernel), one thread per grid point.  The time loop is
 * outside the regions; each region is executed TMAX times.
 * Kernel `fdtd_k1`:  Grid: 2-D (i, j) over 0 <= i < NX, 0 <= j < NY.  Update ey; row i == 0
 *                    takes the source term fict[t].
 * Kernel `fdtd_k2`:  update ex.  Grid: 2-D (i, j) over 0 <= i < NX, 1 <= j < NY
 *                    (the CUDA port guards j > 0).
 * Kernel `fdtd_k3`:  update hz.  Grid: 2-D (i, j) over 0 <= i < NX-1, 0 <= j < NY-1.
 * No per-thread loops.
 * Work size: NX = NY = 4096, TMAX = 500.   Trace size: NX = NY = 64, TMAX = 4.
 */
#include <stdio.h>

#ifndef NX
#define NX 4096
#endif
#ifndef NY
#define NY 4096
#endif
#ifndef TMAX
#define TMAX 500
#endif

#pragma cgp trace NX=64 NY=64 TMAX=4

static float fict[TMAX];
static float ex[NX][NY];
static float ey[NX][NY];
static float hz[NX][NY];

int main(void)
{
  for (int t = 0; t < TMAX; t++)
    fict[t] = (float)(t % 64) / 64.0f;
  for (int i = 0; i < NX; i++)
    for (int j = 0; j < NY; j++) {
      ex[i][j] = (float)((i * (j + 1)) % NX) / NX;
      ey[i][j] = (float)((i * (j + 2) + 1) % NY) / NY;
      hz[i][j] = (float)((i * (j + 3) + 2) % NX) / NX;
    }

  for (int t = 0; t < TMAX; t++) {
#pragma cgp kernel fdtd_k1 grid=2
    for (int i = 0; i < NX; i++) {
      for (int j = 0; j < NY; j++) {
        if (i == 0)
          ey[i][j] = fict[t];
        else
          ey[i][j] = ey[i][j] - 0.5f * (hz[i][j] - hz[i - 1][j]);
      }
    }

#pragma cgp kernel fdtd_k2 grid=2
    for (int i = 0; i < NX; i++) {
      for (int j = 1; j < NY; j++) {
        ex[i][j] = ex[i][j] - 0.5f * (hz[i][j] - hz[i][j - 1]);
      }
    }

#pragma cgp kernel fdtd_k3 grid=2
    for (int i = 0; i < NX - 1; i++) {
      for (int j = 0; j < NY - 1; j++) {
        hz[i][j] = hz[i][j] - 0.7f * (ex[i][j + 1] - ex[i][j] + ey[i + 1][j] - ey[i][j]);
      }
    }
  }

  double sum = 0.0;
  for (int i = 0; i < NX; i++)
    for (int j = 0; j < NY; j++)
      sum += ex[i][j];
  printf("checksum ex %.6e\n", sum);
  sum = 0.0;
  for (int i = 0; i < NX; i++)
    for (int j = 0; j < NY; j++)
      sum += ey[i][j];
  printf("checksum ey %.6e\n", sum);
  sum = 0.0;
  for (int i = 0; i < NX; i++)
    for (int j = 0; j < NY; j++)
      sum += hz[i][j];
  printf("checksum hz %.6e\n", sum);
  return 0;
}
