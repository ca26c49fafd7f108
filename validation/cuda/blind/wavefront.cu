// wavefront.cu -- CUDA port of examples/blind/wavefront.c: a Needleman-Wunsch-style score
// matrix filled by anti-diagonals. The host loops over d = 2 .. 2N (rec.host_loop, 2N - 1
// launches); kernel `wavefront` (1-D grid over the diagonal's cells i = ilo .. ihi, j = d - i)
// takes the diagonal's bounds as run-time ints; rows are strided by the macro N + 1.
#include "../user/user.cuh"

#ifndef N
#define N 2048
#endif

static const int GRID_DIMS = 1;

__global__ void wavefront(int ilo, int ihi, int d, CGP_CONST int* CGP_RESTRICT a,
                          CGP_CONST int* CGP_RESTRICT b, int* CGP_RESTRICT H) {
  int i = ilo + blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= ihi) {
    int j = d - i;
    int s = a[i] == b[j] ? 1 : -1;
    int m = H[(i - 1) * (N + 1) + j - 1] + s;
    int up = H[(i - 1) * (N + 1) + j] - 1;
    int left = H[i * (N + 1) + j - 1] - 1;
    if (up > m)
      m = up;
    if (left > m)
      m = left;
    H[i * (N + 1) + j] = m;
  }
}

int main(int argc, char** argv) {
  cgp::Options opt = cgp::parse_args(argc, argv, 256, 1);
  std::vector<int> a(N + 1), b(N + 1);
  std::vector<int> H((size_t)(N + 1) * (N + 1));
  unsigned int seed = 2024u;
  for (int i = 1; i <= N; i++) {
    seed = seed * 1103515245u + 12345u;
    a[i] = (int)((seed >> 16) & 3);
    seed = seed * 1103515245u + 12345u;
    b[i] = (int)((seed >> 16) & 3);
  }
  for (int i = 0; i <= N; i++) H[(size_t)i * (N + 1)] = -i;
  for (int j = 0; j <= N; j++) H[j] = -j;
  cgp::DevBuf<int> da(N + 1), db(N + 1), dH(H.size());
  auto reset = [&] { da.upload(a); db.upload(b); dH.upload(H); };
  auto run = [&](cgp::Recorder& rec) {
    dim3 block = cgp::block1d(opt);
    for (long d : rec.host_loop(2, 2 * N + 1, {"wavefront"})) {
      int ilo = d - N > 1 ? (int)d - N : 1;
      int ihi = d - 1 < N ? (int)d - 1 : N;
      dim3 grid = cgp::grid1d(opt, ihi - ilo + 1);
      rec.launch("wavefront", [&] { wavefront<<<grid, block>>>(ilo, ihi, (int)d, da, db, dH); });
    }
  };
  auto check = [&] {
    std::vector<int> ref = H;
    for (int d = 2; d <= 2 * N; d++) {
      int ilo = d - N > 1 ? d - N : 1;
      int ihi = d - 1 < N ? d - 1 : N;
      for (int i = ilo; i <= ihi; i++) {
        int j = d - i;
        int s = a[i] == b[j] ? 1 : -1;
        int m = ref[(size_t)(i - 1) * (N + 1) + j - 1] + s;
        m = std::max(m, ref[(size_t)(i - 1) * (N + 1) + j] - 1);
        m = std::max(m, ref[(size_t)i * (N + 1) + j - 1] - 1);
        ref[(size_t)i * (N + 1) + j] = m;
      }
    }
    return cgp::rel_err(cgp::as_float(dH.download()), cgp::as_float(ref));
  };
  return cgp::run_bench("wavefront", opt, {{"N", N}}, GRID_DIMS, reset, run, check);
}
