/*
 * nbody_f64.c -- all-pairs gravitational acceleration in double precision, one thread per
 * body: per pair three differences, a softened squared distance, a double square root and a
 * double division (the sm_90 SASS: MUFU.RSQ64H/RCP64H + DFMA Newton steps,
 * cgpredict/compute.py SASS_EXPANSION), three multiply-adds.
 *
 *   Work size: N = 4096 bodies.   Trace size: N = 512.
 *   FP64 work per pair (sm_90 SASS): 3 DADD + 3 DFMA (r2) + sqrt 8 + div 8 + 3 DMUL/DFMA +
 *   3 DFMA (accumulate) = about 28 FP64 instructions: on a GPU with 4 FP64 lanes per SM
 *   (GTX 980) 8 clocks each per warp, the FP64 pipe bounds it.
 */
#include <math.h>
#include <stdio.h>

#ifndef N
#define N 4096
#endif

#pragma cgp trace N=512

static double px[N], py[N], pz[N], m[N];
static double ax[N], ay[N], az[N];

int main(void)
{
  for (int i = 0; i < N; i++) {
    px[i] = (double)(i % 17) * 0.5;
    py[i] = (double)(i % 23) * 0.25;
    pz[i] = (double)(i % 29) * 0.125;
    m[i] = 1.0 + (double)(i % 5);
  }

#pragma cgp kernel nbody_f64 grid=1
  for (int i = 0; i < N; i++) {
    double fx = 0.0, fy = 0.0, fz = 0.0;
    for (int j = 0; j < N; j++) {
      double dx = px[j] - px[i];
      double dy = py[j] - py[i];
      double dz = pz[j] - pz[i];
      double r2 = dx * dx + dy * dy + dz * dz + 1e-9;
      double s = m[j] / (r2 * sqrt(r2));
      fx += dx * s;
      fy += dy * s;
      fz += dz * s;
    }
    ax[i] = fx;
    ay[i] = fy;
    az[i] = fz;
  }

  printf("nbody_f64 %.6e %.6e %.6e\n", ax[N - 1], ay[N - 1], az[N - 1]);
  return 0;
}
