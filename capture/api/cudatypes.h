/* cudatypes.h: the few CUDA driver types cut reads (libcuthook, and the argument decoder of both
 * capture paths), mirrored so it builds without cuda.h. gen-api.sh checks every offset used
 * here against the installed cuda.h. */
#ifndef HOOK_CUDATYPES_H
#define HOOK_CUDATYPES_H

#include <stddef.h>
#include <stdint.h>

enum {
	HOOK_CUDA_SUCCESS = 0,
	HOOK_CUDA_ERROR_NOT_INITIALIZED = 3,
	HOOK_CUDA_ERROR_NOT_FOUND = 500,
};

/* CUmemorytype */
enum {
	HOOK_MEMORYTYPE_HOST = 1,
	HOOK_MEMORYTYPE_DEVICE = 2,
	HOOK_MEMORYTYPE_ARRAY = 3,
	HOOK_MEMORYTYPE_UNIFIED = 4,
};

/* cuGetProcAddress flag CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM */
#define HOOK_GPA_PER_THREAD_STREAM 2

/* CUDA_MEMCPY2D (_v2) */
struct hook_memcpy2d {
	size_t srcXInBytes, srcY;
	int srcMemoryType;
	const void *srcHost;
	uint64_t srcDevice;
	void *srcArray;
	size_t srcPitch;
	size_t dstXInBytes, dstY;
	int dstMemoryType;
	void *dstHost;
	uint64_t dstDevice;
	void *dstArray;
	size_t dstPitch;
	size_t WidthInBytes, Height;
};

/* CUDA_MEMCPY3D (_v2) */
struct hook_memcpy3d {
	size_t srcXInBytes, srcY, srcZ, srcLOD;
	int srcMemoryType;
	const void *srcHost;
	uint64_t srcDevice;
	void *srcArray;
	void *reserved0;
	size_t srcPitch, srcHeight;
	size_t dstXInBytes, dstY, dstZ, dstLOD;
	int dstMemoryType;
	void *dstHost;
	uint64_t dstDevice;
	void *dstArray;
	void *reserved1;
	size_t dstPitch, dstHeight;
	size_t WidthInBytes, Height, Depth;
};

/* CUlaunchConfig (the leading members cuLaunchKernelEx's decoder reads) */
struct hook_launch_config {
	unsigned gridDimX, gridDimY, gridDimZ;
	unsigned blockDimX, blockDimY, blockDimZ;
	unsigned sharedMemBytes;
	void *hStream;
	void *attrs;
	unsigned numAttrs;
};

#endif
