// A fake CUDA driver for testing the host side of cuda modules without a GPU: memory is host
// memory, copies are memcpy, kernel launches are only recorded (see tests/test_gpu.py).
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
typedef int CUresult;
long last_launch[8];
int n_launch, n_ptx_loaded, n_alloc, n_cubin_loaded;
CUresult cuInit(unsigned f){return 0;}
CUresult cuDeviceGet(int *d, int o){*d=0;return 0;}
CUresult cuDeviceGetAttribute(int *v, int a, int d){*v=(a==75)?8:0;return 0;}  // an sm_80
CUresult cuDevicePrimaryCtxRetain(void **c, int d){*c=(void*)1;return 0;}
CUresult cuCtxPushCurrent_v2(void *c){return 0;}
CUresult cuCtxPopCurrent_v2(void **c){if(c)*c=0;return 0;}
CUresult cuEventCreate(void **e, unsigned f){*e=(void*)1;return 0;}
CUresult cuEventDestroy_v2(void *e){return 0;}
CUresult cuEventRecord(void *e, void *s){return 0;}
CUresult cuEventSynchronize(void *e){return 0;}
CUresult cuFuncSetAttribute(void *f, int a, int v){return 0;}
CUresult cuGetErrorName(CUresult r, const char **s){*s="STUB";return 0;}
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned sh, void *s, void **params, void **extra){
  long v[8]={gx,gy,gz,bx,by,bz,sh,0}; memcpy(last_launch,v,sizeof v); n_launch++; return 0;}
CUresult cuLaunchKernelEx(void *c, void *f, void **p, void **e){return 0;}
CUresult cuMemAllocManaged(void **p, size_t n, unsigned f){*p=malloc(n);return 0;}
CUresult cuMemAlloc_v2(void **p, size_t n){*p=malloc(n);n_alloc++;return 0;}
CUresult cuMemFree_v2(void *p){free(p);return 0;}
CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned f){return 0;}
CUresult cuMemHostUnregister(void *p){return 0;}
CUresult cuMemcpy(void *d, void *s, size_t n){memcpy(d,s,n);return 0;}
CUresult cuMemcpyAsync(void *d, void *s, size_t n, void *st){memcpy(d,s,n);return 0;}
CUresult cuMemsetD16Async(void *d, unsigned short v, size_t n, void *s){return 0;}
CUresult cuMemsetD32Async(void *d, unsigned v, size_t n, void *s){return 0;}
CUresult cuModuleGetFunction(void **f, void *m, const char *name){*f=(void*)2;return 0;}
CUresult cuModuleLoadData(void **m, const void *img){
  if (!memcmp(img, "\177ELF", 4)) n_cubin_loaded++; *m=(void*)3; return 0;}
CUresult cuModuleLoadDataEx(void **m, const void *img, unsigned n, void *o, void **v){
  if (strstr((const char *)img, ".entry")) n_ptx_loaded++; *m=(void*)3; return 0;}
CUresult cuModuleUnload(void *m){return 0;}
CUresult cuStreamCreate(void **s, unsigned f){*s=(void*)4;return 0;}
CUresult cuStreamDestroy_v2(void *s){return 0;}
CUresult cuStreamSynchronize(void *s){return 0;}
CUresult cuStreamWaitEvent(void *s, void *e, unsigned f){return 0;}
CUresult cuTensorMapEncodeTiled(void){return 0;}
CUresult cuMemcpyHtoD_v2(void *d, const void *s, size_t n){memcpy(d,s,n);return 0;}
CUresult cuMemcpyDtoH_v2(void *d, const void *s, size_t n){memcpy(d,s,n);return 0;}
CUresult cuDeviceGetCount(int *n){*n=1;return 0;}
CUresult cuDevicePrimaryCtxRelease_v2(int d){return 0;}
CUresult cuEventElapsedTime(float *ms, void *s, void *e){*ms=0.5f;return 0;}
CUresult cuMemGetInfo_v2(size_t *f, size_t *t){*f=*t=(size_t)1<<34;return 0;}
