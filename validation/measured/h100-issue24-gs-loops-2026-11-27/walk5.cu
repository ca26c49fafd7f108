#include <cstdio>
#include <cuda_runtime.h>
#define NJ 8192
__global__ void sectors_data(int ni, float* A, int lanes, float* out) {
int j = blockIdx.x * 32 + (threadIdx.x % lanes);
float s = 0.0f;
for (int i = 0; i < ni; i++) s += A[i * NJ + j + min(__float_as_int(s), 0)];
out[blockIdx.x * 32 + threadIdx.x] = s;
}
__global__ void walk_data(int ni, const float* W, long stride, float* out) {
long base = (long)blockIdx.x * ni * stride + threadIdx.x;
float s = 0.0f;
for (int i = 0; i < ni; i++) s += W[base + i * stride + min(__float_as_int(s), 0)];
out[blockIdx.x * 32 + threadIdx.x] = s;
}
template <class F> static void timeit(const char* name, int iters, F launch) {
cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
launch(); cudaDeviceSynchronize();
float best = 1e30f, sum = 0.f; const int reps = 5;
for (int r = 0; r < reps; r++) {
cudaEventRecord(a); launch(); cudaEventRecord(b); cudaEventSynchronize(b);
float ms; cudaEventElapsedTime(&ms, a, b); sum += ms; if (ms < best) best = ms;
}
printf("%-16s min %.4f ms mean %.4f ms  ns/iter(min) %.2f  cycles/iter@1980MHz %.1f\n", name, best,
sum / reps, best * 1e6 / iters, best * 1e6 / iters * 1.98);
}
int main() {
float *W, *Q; long n = 256L * 1024 * 1024;
cudaMalloc(&W, sizeof(float) * n); cudaMemset(W, 0, sizeof(float) * n); cudaMalloc(&Q, 1 << 20);
for (int rep = 0; rep < 2; rep++) {
timeit("sectors 32 lanes", 8192, [&] { sectors_data<<<132, 32>>>(8192, W, 32, Q); });
long strides[][2] = {{32, 8192}, {64, 8192}, {256, 4096}, {2048, 512}, {8192, 128}};
for (auto& s : strides) {
char name[64]; snprintf(name, sizeof name, "walk %ld B x%ld", s[0] * 4, s[1]);
timeit(name, (int)s[1], [&] { walk_data<<<132, 32>>>((int)s[1], W, s[0], Q); });
}
}
printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
}
