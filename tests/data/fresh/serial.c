/* serial.c -- one thread: a serial recurrence of M dependent FMAs (the chain bound). */
#include <stdio.h>
#ifndef M
#define M (1 << 20)
#endif
#pragma cgp trace M=4096
static float out[1];
int main(void)
{
#pragma cgp kernel chain grid=1
  for (int i = 0; i < 1; i++) {
    float x = 1.0f;
    for (int k = 0; k < M; k++)
      x = x * 0.999f + 0.5f;
    out[i] = x;
  }
  printf("serial %.6e\n", (double)out[0]);
  return 0;
}
