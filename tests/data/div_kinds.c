/* div_kinds.c: one int32 division each by a power of two, by another constant and by a
 * run-time value (a volatile read once): tests/test_sass_ops.py checks that only the last
 * reaches the SFU (a MUFU.RCP in its sm_90 sequence; the others are shifts and a multiply by
 * a magic number). */
#include <stdio.h>
#ifndef N
#define N 4096
#endif
static int a[N], b[N], c[N], d[N];
static volatile int w_rt = 13;
int main(void) {
  for (int i = 0; i < N; i++) a[i] = i * 3 - 100;
  int w = w_rt;
#pragma cgp kernel divk grid=1
  for (int i = 0; i < N; i++) {
    b[i] = a[i] / 8;
    c[i] = a[i] % 7;
    d[i] = a[i] / w;
  }
  printf("%d %d %d\n", b[5], c[5], d[5]);
  return 0;
}
