/* libfakenvmlv2.c - the fake NVML without nvmlDeviceGetComputeRunningProcesses_v3
 * (a driver before R510): the sampler must fall back to ..._v2. */
#define VF_FAKE_NO_V3 1
#include "libfakenvml.c"
