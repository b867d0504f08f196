/* bench-gpu-poll.c - what one memory-polling tick of `vramfit tune` costs
 * (it runs every 100 ms while a trial runs):
 *   1. vf_proc_pids: the trainer's process tree from /proc (this machine's
 *      process count decides it);
 *   2. vf_gpu_sampler_sample on the fake NVML (build/helpers/libfakenvml.so,
 *      or $VRAMFIT_NVML_LIB) with 1 and 8 devices, 3 processes each, and
 *      with 1000 processes on one device (growth to a larger array);
 *   3. the same against the real libnvidia-ml.so.1 when it loads.
 * Prints figures; asserts nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vramfit/base/proc.h"
#include "vramfit/gpu/gpu.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void sampler(const char *lib, const char *scenario, const char *what)
{
	if (lib)
		setenv("VRAMFIT_NVML_LIB", lib, 1);
	else
		unsetenv("VRAMFIT_NVML_LIB");
	setenv("VF_FAKE_NVML", scenario, 1);
	struct vf_gpu_sampler *s;
	struct vf_error err = {0};
	double t0 = now();
	if (vf_gpu_sampler_open(&s, &err) != VF_OK) {
		printf("  %-44s  not available: %s\n", what, err.msg);
		return;
	}
	double open_ms = (now() - t0) * 1e3;
	pid_t pids[] = {100, 200, 300, (pid_t)getpid()};
	struct vf_gpu_sample g;
	int n = 2000;
	t0 = now();
	for (int i = 0; i < n; i++)
		vf_gpu_sampler_sample(s, pids, 4, &g, NULL);
	double us = (now() - t0) / n * 1e6;
	printf("  %-44s  open %8.3f ms  sample %10.2f us  (%zu devices, %s)\n", what, open_ms, us, g.count,
	       vf_gpu_sampler_procs_api(s));
	vf_gpu_sampler_close(s);
}

int main(void)
{
	pid_t pids[256];
	int n = 200;
	double t0 = now();
	size_t got = 0;
	for (int i = 0; i < n; i++)
		got = vf_proc_pids(getpgid(0), pids, 256);
	double us = (now() - t0) / n * 1e6;
	int nproc = 0;
	FILE *f = popen("ls /proc | grep -c '^[0-9]'", "r");
	if (f) {
		if (fscanf(f, "%d", &nproc) != 1)
			nproc = -1;
		pclose(f);
	}
	printf("vf_proc_pids: %.1f us per scan (%d processes on this machine, %zu in the tree)\n", us,
	       nproc, got);

	char fake[1024];
	const char *b = getenv("VF_BUILD_DIR");
	snprintf(fake, sizeof fake, "%s/helpers/libfakenvml.so", b ? b : "build");
	printf("vf_gpu_sampler_sample:\n");
	sampler(fake, "proc=0:100:2048;proc=0:200:1024;proc=0:300:512", "fake NVML, 1 GPU, 3 processes");
	sampler(fake,
		"gpus=8;proc=0:100:2048;proc=0:200:1024;proc=0:300:512;proc=1:100:2048;"
		"proc=2:100:1;proc=3:100:1;proc=4:100:1;proc=5:100:1;proc=6:100:1;proc=7:100:1",
		"fake NVML, 8 GPUs");
	sampler(fake, "fill=0:1000:1;proc=0:100:7", "fake NVML, 1 GPU, 1000 processes");
	sampler(NULL, "", "libnvidia-ml.so.1 (real)");
	return 0;
}
