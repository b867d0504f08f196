/* test-gpu-sampler.c - the NVML memory sampler (vf_gpu_sampler_*) against
 * the fake NVML: the v3, v2 and v1 process-list symbol sets and their
 * struct layouts, unknown figures, a process list that cannot be read,
 * INSUFFICIENT_SIZE growth and its bound, several devices, no NVML. Prints
 * the cost of one sample on the fake library. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vf_test.h"
#include "vramfit/base/buf.h"
#include "vramfit/gpu/gpu.h"

#define MIB (1024ll * 1024)

static char nvml[1024], nvml2[1024], nvml1[1024], calls[1024];

static vf_status open_with(const char *lib, const char *scenario, struct vf_gpu_sampler **s,
			   struct vf_error *err)
{
	setenv("VRAMFIT_NVML_LIB", lib, 1);
	setenv("VF_FAKE_NVML", scenario, 1);
	unlink(calls);
	return vf_gpu_sampler_open(s, err);
}

static char *calls_text(void)
{
	struct vf_buf b;
	vf_buf_init(&b, 1u << 20);
	struct vf_error err = {0};
	if (vf_buf_read_file(&b, calls, 1u << 20, &err) != VF_OK)
		return strdup("");
	char *t = strdup(b.data ? b.data : "");
	vf_buf_release(&b);
	return t;
}

/* Three processes on device 0; we ask about 100 and 300: 2048 + 512 MiB. */
static void check_three(const char *lib, const char *api, int64_t base_mib)
{
	struct vf_gpu_sampler *s = NULL;
	struct vf_error err = {0};
	CHECK_INT(open_with(lib, "proc=0:100:2048;proc=0:200:1024;proc=0:300:512", &s, &err), VF_OK);
	CHECK_STR(vf_gpu_sampler_procs_api(s), api);
	pid_t pids[] = {300, 100, 999};
	struct vf_gpu_sample g;
	CHECK_INT(vf_gpu_sampler_sample(s, pids, 3, &g, &err), VF_OK);
	CHECK_INT(g.count, 1);
	CHECK_INT(g.dev[0].procs_bytes, 2560 * MIB);
	CHECK_INT(g.dev[0].nprocs, 2);
	CHECK_INT(g.dev[0].used_bytes, (base_mib + 3584) * MIB);
	/* Nobody asked about: a known 0. */
	CHECK_INT(vf_gpu_sampler_sample(s, NULL, 0, &g, &err), VF_OK);
	CHECK_INT(g.dev[0].procs_bytes, 0);
	CHECK_INT(g.dev[0].nprocs, 0);
	char *c = calls_text();
	CHECK_CONTAINS(c, api);
	free(c);
	vf_gpu_sampler_close(s);
}

static void test_symbol_sets(void)
{
	check_three(nvml, "nvmlDeviceGetComputeRunningProcesses_v3", 1);
	check_three(nvml2, "nvmlDeviceGetComputeRunningProcesses_v2", 1);
	check_three(nvml1, "nvmlDeviceGetComputeRunningProcesses", 0);
}

static void test_unknown(void)
{
	struct vf_gpu_sampler *s = NULL;
	struct vf_error err = {0};
	struct vf_gpu_sample g;
	/* NVML_VALUE_NOT_AVAILABLE for one of ours: unknown, not 0. */
	CHECK_INT(open_with(nvml, "proc=0:100:na;proc=0:200:1024", &s, &err), VF_OK);
	pid_t ours[] = {100, 200};
	CHECK_INT(vf_gpu_sampler_sample(s, ours, 2, &g, &err), VF_OK);
	CHECK_INT(g.dev[0].procs_bytes, -1);
	CHECK_INT(g.dev[0].nprocs, 2);
	CHECK_INT(g.dev[0].used_bytes, (1 + 1024) * MIB);
	/* ... but someone else's unknown figure does not matter. */
	CHECK_INT(vf_gpu_sampler_sample(s, ours + 1, 1, &g, &err), VF_OK);
	CHECK_INT(g.dev[0].procs_bytes, 1024 * MIB);
	vf_gpu_sampler_close(s);

	/* No process list (every version fails): unknown; used memory still read. */
	CHECK_INT(open_with(nvml,
			    "used=5000;proc=0:100:2048;fail=nvmlDeviceGetComputeRunningProcesses_v3:3;"
			    "fail=nvmlDeviceGetComputeRunningProcesses_v2:3;"
			    "fail=nvmlDeviceGetComputeRunningProcesses:3",
			    &s, &err),
		  VF_OK);
	CHECK_INT(vf_gpu_sampler_sample(s, ours, 2, &g, &err), VF_OK);
	CHECK_INT(g.dev[0].procs_bytes, -1);
	CHECK_INT(g.dev[0].used_bytes, 7048 * MIB);
	vf_gpu_sampler_close(s);

	/* Memory calls failing too: both unknown. */
	CHECK_INT(open_with(nvml,
			    "fail=nvmlDeviceGetMemoryInfo_v2:999;fail=nvmlDeviceGetMemoryInfo:999;"
			    "fail=nvmlDeviceGetComputeRunningProcesses_v3:999",
			    &s, &err),
		  VF_OK);
	CHECK_INT(vf_gpu_sampler_sample(s, ours, 2, &g, &err), VF_OK);
	CHECK_INT(g.dev[0].used_bytes, -1);
	CHECK_INT(g.dev[0].procs_bytes, -1);
	vf_gpu_sampler_close(s);
}

static void test_growth(void)
{
	struct vf_gpu_sampler *s = NULL;
	struct vf_error err = {0};
	struct vf_gpu_sample g;
	/* 1000 other processes first: the first call (64 entries) is too small. */
	CHECK_INT(open_with(nvml, "fill=0:1000:1;proc=0:100:7", &s, &err), VF_OK);
	pid_t ours[] = {100};
	CHECK_INT(vf_gpu_sampler_sample(s, ours, 1, &g, &err), VF_OK);
	CHECK_INT(g.dev[0].procs_bytes, 7 * MIB);
	CHECK_INT(g.dev[0].nprocs, 1);
	char *c = calls_text();
	CHECK_CONTAINS(c, "nvmlDeviceGetComputeRunningProcesses_v3 64\n");
	CHECK_CONTAINS(c, "nvmlDeviceGetComputeRunningProcesses_v3 1259\n"); /* 1001 + 1/4 + 8 */
	free(c);
	/* The array is kept: the next sample asks once. */
	unlink(calls);
	CHECK_INT(vf_gpu_sampler_sample(s, ours, 1, &g, &err), VF_OK);
	c = calls_text();
	CHECK_STR(c, "nvmlDeviceGetComputeRunningProcesses_v3 1259\n");
	free(c);
	vf_gpu_sampler_close(s);

	/* Beyond VF_GPU_SAMPLE_MAX_PROCS: unknown, never a partial sum. */
	CHECK_INT(open_with(nvml, "fill=0:5000:1;proc=0:100:7", &s, &err), VF_OK);
	CHECK_INT(vf_gpu_sampler_sample(s, ours, 1, &g, &err), VF_OK);
	CHECK_INT(g.dev[0].procs_bytes, -1);
	CHECK(g.dev[0].used_bytes > 0);
	vf_gpu_sampler_close(s);
}

static void test_devices_and_absence(void)
{
	struct vf_gpu_sampler *s = NULL;
	struct vf_error err = {0};
	struct vf_gpu_sample g;
	CHECK_INT(open_with(nvml, "gpus=3;proc=1:100:300;proc=2:101:na;fail=nvmlDeviceGetHandleByIndex_v2@2:4",
			    &s, &err),
		  VF_OK);
	pid_t ours[] = {100, 101};
	CHECK_INT(vf_gpu_sampler_sample(s, ours, 2, &g, &err), VF_OK);
	CHECK_INT(g.count, 3);
	CHECK_INT(g.dev[0].procs_bytes, 0);
	CHECK_INT(g.dev[1].procs_bytes, 300 * MIB);
	CHECK_INT(g.dev[2].procs_bytes, -1); /* no handle: nothing known */
	CHECK_INT(g.dev[2].used_bytes, -1);
	vf_gpu_sampler_close(s);

	CHECK_INT(open_with("off", "", &s, &err), VF_ENOTFOUND);
	CHECK(s == NULL);
	CHECK_CONTAINS(err.msg, "VRAMFIT_NVML_LIB=off");
	CHECK_INT(open_with("/nonexistent/libnvidia-ml.so.1", "", &s, &err), VF_ENOTFOUND);
	CHECK_INT(open_with("libc.so.6", "", &s, &err), VF_ERR);
	CHECK_CONTAINS(err.msg, "not a usable NVML");
	CHECK_INT(open_with(nvml, "fail=nvmlInit_v2:9", &s, &err), VF_ENOTFOUND);
	CHECK_INT(open_with(nvml, "fail=nvmlInit_v2:999", &s, &err), VF_ERR);
	CHECK_INT(vf_gpu_sampler_sample(NULL, NULL, 0, &g, &err), VF_EUSAGE);
	vf_gpu_sampler_close(NULL);
}

/* A figure, not a timed test: the cost of one sample (one device, a few
 * processes) on the fake library. */
static void test_cost(void)
{
	struct vf_gpu_sampler *s = NULL;
	struct vf_error err = {0};
	struct vf_gpu_sample g;
	CHECK_INT(open_with(nvml, "proc=0:100:2048;proc=0:200:1024;proc=0:300:512", &s, &err), VF_OK);
	pid_t ours[] = {100, 300};
	unsetenv("VF_FAKE_NVML_CALLS");
	struct timespec a, b;
	int n = 2000;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < n; i++)
		vf_gpu_sampler_sample(s, ours, 2, &g, &err);
	clock_gettime(CLOCK_MONOTONIC, &b);
	double us = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / 1e3 / n;
	printf("  sampler: %.2f us per sample (fake NVML, 1 device, 3 processes)\n", us);
	CHECK_INT(g.dev[0].procs_bytes, 2560 * MIB);
	vf_gpu_sampler_close(s);
}

int main(void)
{
	const char *build = vf_test_env("VF_BUILD_DIR", "build");
	snprintf(nvml, sizeof nvml, "%s/helpers/libfakenvml.so", build);
	snprintf(nvml2, sizeof nvml2, "%s/helpers/libfakenvmlv2.so", build);
	snprintf(nvml1, sizeof nvml1, "%s/helpers/libfakenvmlv1.so", build);
	snprintf(calls, sizeof calls, "/tmp/vf-sampler-calls.%d", (int)getpid());
	setenv("VF_FAKE_NVML_CALLS", calls, 1);
	RUN(test_symbol_sets);
	RUN(test_unknown);
	RUN(test_growth);
	RUN(test_devices_and_absence);
	RUN(test_cost);
	unlink(calls);
	unsetenv("VF_FAKE_NVML_CALLS");
	return vf_test_done();
}
