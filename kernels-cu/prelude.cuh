// CUDA dialect prelude: maps the portable kernel vocabulary of kernels/ to CUDA C++ (NVRTC).
typedef unsigned char uchar;
typedef unsigned int uint;
#define KERNEL extern "C" __global__
#define GLOBAL
#define LOCAL
#define DEVICE_FN __device__ __forceinline__
#define LOCAL_ARRAY(type, name, size) __shared__ type name[size]
#define LOCAL_ID_X threadIdx.x
#define LOCAL_ID_Y threadIdx.y
#define GROUP_ID_X blockIdx.x
#define GROUP_ID_Y blockIdx.y
#define GLOBAL_ID_X (blockIdx.x * blockDim.x + threadIdx.x)
#define GLOBAL_ID_Y (blockIdx.y * blockDim.y + threadIdx.y)
#define LOCAL_BARRIER() __syncthreads()
#define ATOMIC_MIN(p, v) atomicMin((p), (v))
