// OpenCL C dialect prelude: maps the portable kernel vocabulary of kernels/ to OpenCL C 1.2.
#define KERNEL __kernel
// The work-group size a kernel is always launched with, and how many of its groups a compute
// unit should hold at once: a register budget for CUDA. Here nothing: OpenCL C has no hint of the
// second, and `reqd_work_group_size` made NVIDIA's build of the fast Nick kernel 5-10 % slower
// (H100); NVIDIA's compiler takes the register budget as an option (REGISTER_BUDGET).
#define REQUIRED_GROUP_SIZE(x, y, z, groups)
#define GLOBAL __global
#define LOCAL __local
#define DEVICE_FN
#define LOCAL_ARRAY(type, name, size) __local type name[size]
#define LOCAL_ID_X ((uint)get_local_id(0))
#define LOCAL_ID_Y ((uint)get_local_id(1))
#define LOCAL_ID_Z ((uint)get_local_id(2))
#define GROUP_ID_X ((uint)get_group_id(0))
#define GROUP_ID_Y ((uint)get_group_id(1))
#define GROUP_ID_Z ((uint)get_group_id(2))
#define GLOBAL_ID_X ((uint)get_global_id(0))
#define GLOBAL_ID_Y ((uint)get_global_id(1))
#define GLOBAL_ID_Z ((uint)get_global_id(2))
#define LOCAL_BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
// Orders this work-item's global writes before its later ones (a store before a ticket's atomic).
#define GLOBAL_FENCE() mem_fence(CLK_GLOBAL_MEM_FENCE)
// Kernels of an in-order queue never overlap here: nothing to wait for (see the CUDA prelude).
#define WAIT_FOR_PREVIOUS_KERNEL() ((void)0)
#define LET_NEXT_KERNEL_START() ((void)0)
#if defined(LABEL_BITS) && LABEL_BITS == 64
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
#define ATOMIC_MIN(p, v) atom_min((p), (v))
#define ATOMIC_MAX(p, v) atom_max((p), (v))
#else
#define ATOMIC_MIN(p, v) atomic_min((p), (v))
#define ATOMIC_MAX(p, v) atomic_max((p), (v))
#endif
#define ATOMIC_ADD(p, v) atomic_add((p), (v))
// 32-bit compare-and-swap: returns the old value, stores v where it equalled cmp.
#define ATOMIC_CMPXCHG(p, cmp, v) atomic_cmpxchg((p), (cmp), (v))
// Atomic bitwise or and and on a 32-bit word (local or global), the count of set bits of one,
// and its count of leading zero bits (32 for 0).
#define ATOMIC_OR(p, v) atomic_or((p), (v))
#define ATOMIC_AND(p, v) atomic_and((p), (v))
#define POPCOUNT(x) popcount((uint)(x))
#define LEADING_ZEROS(x) clz((uint)(x))
// 64-bit add (kernels built with -D INT64_ATOMICS=1; the device must have
// cl_khr_int64_base_atomics).
#if defined(INT64_ATOMICS) && INT64_ATOMICS
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#define ATOMIC_ADD64(p, v) atom_add((p), (v))
#endif
// Double precision (kernels built with -D FLOAT64=1): IEEE operations, correctly rounded in
// OpenCL for double, and never contracted into fused multiply-adds, so that a kernel's results
// equal the host reference's bit for bit.
#if defined(FLOAT64) && FLOAT64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#pragma OPENCL FP_CONTRACT OFF
#define DADD(a, b) ((a) + (b))
#define DSUB(a, b) ((a) - (b))
#define DMUL(a, b) ((a) * (b))
#define DDIV(a, b) ((a) / (b))
#define DSQRT(a) sqrt(a)
#define DRINT(a) rint(a)
// Single precision a * b + c, fused or rounded twice (whichever the device does faster; both
// within an ulp of each operation, as the callers' error bounds assume).
#define FMAD(a, b, c) mad((a), (b), (c))
// Single precision reciprocal square root of a normal positive x (at most 2 ulp in both dialects'
// specifications).
#define FRSQRT(x) rsqrt(x)
