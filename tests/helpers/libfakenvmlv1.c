/* libfakenvmlv1.c - the fake NVML with only the v1 symbols (an old driver):
 * nvmlInit, nvmlDeviceGetCount, nvmlDeviceGetHandleByIndex,
 * nvmlDeviceGetName, nvmlDeviceGetMemoryInfo, nvmlShutdown. */
#define VF_FAKE_V1_ONLY 1
#include "libfakenvml.c"
