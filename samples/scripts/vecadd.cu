// Kernels for driverapi.c, compiled to a fatbin: nvcc -fatbin -o vecadd.fatbin vecadd.cu
extern "C" __global__ void vecAdd(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}

extern "C" __global__ void empty(void)
{
}
