// Probe of eq. (12sc) (cgpredict/store_copies.py): a run-time j loop (16 a SASS trip) storing
// every iteration through a pointer it advances, with plain and __restrict__ pointers. Not a
// port: compiled only for its SASS (nvcc -cubin -O3 -arch=sm_90; nvdisasm -c). Read, per trip:
// one_store: B's pointer copied back (MOV + IMAD.MOV); one_store_plain: A's and B's (MOV +
// IMAD.MOV each); recur (FMUL + FFMA an iteration): B's by 2 MOV; recur_plain: B's by 2 MOV,
// A's low word by a MOV; prefix (FADD): B's, MOV + IMAD.MOV.
#define N 1024
__global__ void one_store(int n, const float* __restrict__ A, float* __restrict__ B) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) for (int j = 0; j < n; j++) B[i * N + j] = 2.0f * A[i * N + j];
}
__global__ void one_store_plain(int n, const float* A, float* B) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) for (int j = 0; j < n; j++) B[i * N + j] = 2.0f * A[i * N + j];
}
__global__ void recur(int n, float a, float b, const float* __restrict__ A, float* __restrict__ B) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float y = 0.0f;
  if (i < n) for (int j = 0; j < n; j++) { y = a * A[i * N + j] + b * y; B[i * N + j] = y; }
}
__global__ void recur_plain(int n, float a, float b, const float* A, float* B) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float y = 0.0f;
  if (i < n) for (int j = 0; j < n; j++) { y = a * A[i * N + j] + b * y; B[i * N + j] = y; }
}
__global__ void prefix(int n, const float* __restrict__ A, float* __restrict__ B) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float y = 0.0f;
  if (i < n) for (int j = 0; j < n; j++) { y += A[i * N + j]; B[i * N + j] = y; }
}
