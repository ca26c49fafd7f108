// One arithmetic operation per kernel, for the SASS expansion table of cgpredict/compute.py
// (validation/sass_ops.py compiles this with nvcc -cubin -O3 -arch=sm_90, as the ports are).
// Each kernel loads a[i] and b[i] and stores one result; the op's expansion is its kernel's
// fast path less the baseline kernel of its type (base_*: o = a + b), plus the add the
// baseline has when the op replaces it (binary ops), as sass_ops.py says.
// Divisors and operands are run-time values (kernel arguments' elements) unless the name
// says a constant; the math functions are CUDA's default (IEEE div/sqrt, no fast-math).
extern "C" {
#define K(T, NAME, EXPR) \
  __global__ void NAME(T *o, const T *a, const T *b) { int i = threadIdx.x; o[i] = EXPR; }

K(int, base_i32, a[i] + b[i])
K(int, sdiv_i32, a[i] / b[i])
K(int, srem_i32, a[i] % b[i])
K(unsigned, udiv_i32, a[i] / b[i])
K(unsigned, urem_i32, a[i] % b[i])
K(int, sdiv_pow2_i32, a[i] / 8 + b[i])
K(int, srem_pow2_i32, a[i] % 8 + b[i])
K(int, sdiv_const_i32, a[i] / 7 + b[i])
K(int, srem_const_i32, a[i] % 7 + b[i])
K(int, mul_i32, a[i] * b[i])
// a / b and a % b of the same operands (an index decomposition): nvcc computes the remainder
// from the quotient (a - (a / b) * b); the xor keeps both (sass_ops.py: DIVREM)
K(int, sdivrem_i32, (a[i] / b[i]) ^ (a[i] % b[i]))
K(unsigned, udivrem_i32, (a[i] / b[i]) ^ (a[i] % b[i]))

K(float, base_f32, a[i] + b[i])
K(float, fdiv_f32, a[i] / b[i])
K(float, sqrt_f32, sqrtf(a[i]) + b[i])
K(float, exp_f32, expf(a[i]) + b[i])
K(float, log_f32, logf(a[i]) + b[i])
K(float, sin_f32, sinf(a[i]) + b[i])
K(float, cos_f32, cosf(a[i]) + b[i])
K(float, pow_f32, powf(a[i], b[i]))

K(double, base_f64, a[i] + b[i])
K(double, fadd_f64, a[i] - b[i])
K(double, fmul_f64, a[i] * b[i])
K(double, fma_f64, a[i] * b[i] + 1.0)
K(double, fdiv_f64, a[i] / b[i])
K(double, sqrt_f64, sqrt(a[i]) + b[i])
}
