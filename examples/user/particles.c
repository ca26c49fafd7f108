/*
 * particles_soa.c -- one position step x += v * dt over NP particles, in two layouts: a
 * structure of arrays (px, py, pz, vx, vy, vz: every load and store of a warp coalesced)
 * and an array of structures (one struct of 6 floats a particle: each field strides by 24
 * bytes across a warp, though the six fields together fill the sectors they touch).
 *
 *   NP particles of 6 floats.   Work size: NP = 2^22 (101 MB a layout).   Trace size: 2^14.
 *   Compulsory DRAM traffic per kernel: 6 floats read and 3 written per particle.
 */
#include <stdio.h>

#ifndef NP
#define NP (1 << 22)
#endif

#pragma cgp trace NP=16384

struct part { float x, y, z, vx, vy, vz; };

static float px[NP], py[NP], pz[NP], vx[NP], vy[NP], vz[NP];
static struct part q[NP];

int main(void)
{
  const float dt = 0.01f;
  for (int i = 0; i < NP; i++) {
    px[i] = q[i].x = (float)(i % 31);
    py[i] = q[i].y = (float)(i % 37);
    pz[i] = q[i].z = (float)(i % 41);
    vx[i] = q[i].vx = 1.0f;
    vy[i] = q[i].vy = -1.0f;
    vz[i] = q[i].vz = 0.5f;
  }

#pragma cgp kernel step_soa grid=1
  for (int i = 0; i < NP; i++) {
    px[i] += vx[i] * dt;
    py[i] += vy[i] * dt;
    pz[i] += vz[i] * dt;
  }

#pragma cgp kernel step_aos grid=1
  for (int i = 0; i < NP; i++) {
    q[i].x += q[i].vx * dt;
    q[i].y += q[i].vy * dt;
    q[i].z += q[i].vz * dt;
  }

  printf("particles %.6e %.6e\n", (double)px[NP - 1], (double)q[NP - 1].x);
  return 0;
}
