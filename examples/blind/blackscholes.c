/*
 * blackscholes.c -- Black-Scholes European call and put prices, one thread per option, the
 * cumulative normal distribution by the polynomial approximation of the CUDA SDK sample
 * (BlackScholes: expf, logf, sqrtf and three divisions an option, all FP32).
 *
 *   S, K, T (in), call, put (out): N floats each.   Work size: N = 2^24.   Trace size: N = 2^14.
 *   Compulsory DRAM traffic: S, K, T read, call and put written: 5 x N x 4 bytes (335 MB).
 */
#include <math.h>
#include <stdio.h>

#ifndef N
#define N (1 << 24)
#endif

#pragma cgp trace N=16384

static float S[N];
static float K[N];
static float T[N];
static float call[N];
static float put[N];

/* The polynomial approximation of the cumulative normal distribution (Abramowitz-Stegun
 * 26.2.17), as in the CUDA SDK's BlackScholes sample. */
static inline float cnd(float d)
{
  const float A1 = 0.31938153f;
  const float A2 = -0.356563782f;
  const float A3 = 1.781477937f;
  const float A4 = -1.821255978f;
  const float A5 = 1.330274429f;
  const float RSQRT2PI = 0.39894228040143267793994605993438f;
  float k = 1.0f / (1.0f + 0.2316419f * fabsf(d));
  float c = RSQRT2PI * expf(-0.5f * d * d) * (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))));
  if (d > 0.0f)
    c = 1.0f - c;
  return c;
}

int main(void)
{
  const float r = 0.02f;     /* riskless rate */
  const float sigma = 0.30f; /* volatility */
  for (int i = 0; i < N; i++) {
    S[i] = 5.0f + (float)(i % 251) * 0.1f;    /* 5 .. 30 */
    K[i] = 1.0f + (float)(i % 991) * 0.1f;    /* 1 .. 100 */
    T[i] = 0.25f + (float)(i % 39) * 0.25f;   /* 0.25 .. 9.75 years */
  }

#pragma cgp kernel blackscholes grid=1
  for (int i = 0; i < N; i++) {
    float s = S[i], k = K[i], t = T[i];
    float sqrt_t = sqrtf(t);
    float d1 = (logf(s / k) + (r + 0.5f * sigma * sigma) * t) / (sigma * sqrt_t);
    float d2 = d1 - sigma * sqrt_t;
    float cnd1 = cnd(d1);
    float cnd2 = cnd(d2);
    float exp_rt = expf(-r * t);
    call[i] = s * cnd1 - k * exp_rt * cnd2;
    put[i] = k * exp_rt * (1.0f - cnd2) - s * (1.0f - cnd1);
  }

  printf("blackscholes %.6e %.6e\n", (double)call[N - 1], (double)put[N - 1]);
  return 0;
}
