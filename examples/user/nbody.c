/*
 * nbody.c -- all-pairs gravitational forces (n-body), twice: particles as an array of
 * structures (p[j].x) and as a structure of arrays (px[j]). Thread i sums the pull of every
 * particle j on particle i: it reads its own position once (hoisted out of the j loop) and
 * every particle's x, y, z, m in the j loop, the same j for every thread of a warp.
 *
 *   p: NP structs of 4 floats; px..pm: NP floats; f: NP x 3 floats.   Work size: NP = 16384.
 *   Trace size: NP = 1024.   Compute-bound: 16384^2 interactions, 0.5 MB of data.
 */
#include <math.h>
#include <stdio.h>

#ifndef NP
#define NP 16384
#endif

#pragma cgp trace NP=1024

struct particle { float x, y, z, m; };

static struct particle p[NP];
static float px[NP], py[NP], pz[NP], pm[NP];
static float fx[NP], fy[NP], fz[NP];

int main(void)
{
  for (int i = 0; i < NP; i++) {
    p[i].x = (float)(i % 37);
    p[i].y = (float)(i % 41);
    p[i].z = (float)(i % 43);
    p[i].m = 1.0f + (float)(i % 3);
    px[i] = p[i].x;
    py[i] = p[i].y;
    pz[i] = p[i].z;
    pm[i] = p[i].m;
  }

#pragma cgp kernel nbody_aos grid=1
  for (int i = 0; i < NP; i++) {
    float px = p[i].x, py = p[i].y, pz = p[i].z;
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int j = 0; j < NP; j++) {
      float dx = p[j].x - px, dy = p[j].y - py, dz = p[j].z - pz;
      float r2 = dx * dx + dy * dy + dz * dz + 1e-3f;
      float inv = p[j].m / (r2 * sqrtf(r2));
      ax += dx * inv;
      ay += dy * inv;
      az += dz * inv;
    }
    fx[i] = ax;
    fy[i] = ay;
    fz[i] = az;
  }

#pragma cgp kernel nbody_soa grid=1
  for (int i = 0; i < NP; i++) {
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int j = 0; j < NP; j++) {
      float dx = px[j] - px[i], dy = py[j] - py[i], dz = pz[j] - pz[i];
      float r2 = dx * dx + dy * dy + dz * dz + 1e-3f;
      float inv = pm[j] / (r2 * sqrtf(r2));
      ax += dx * inv;
      ay += dy * inv;
      az += dz * inv;
    }
    fx[i] += ax;
    fy[i] += ay;
    fz[i] += az;
  }

  printf("nbody %.6e\n", (double)(fx[1] + fy[2] + fz[3]));
  return 0;
}
