/* bench-estimate.c - how fast vf_estimate_run is (the fit search calls it
 * millions of times): configurations per second on one core, over a sweep
 * of batch, sequence, mode and optimizer for llama2-7b; then the same sweep
 * through one vf_estimate_ctx (vf_estimate_run_ctx, what the search
 * calls). Prints figures; never a pass/fail test. */
#include <stdio.h>
#include <time.h>

#include "vramfit/estimate/estimate.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/model/models.h"

static double clock_s(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double now(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* CPU time of this thread: on a loaded machine, without the time spent
 * waiting for a core */
static double cpu_now(void)
{
	return clock_s(CLOCK_THREAD_CPUTIME_ID);
}

/* 200 rounds of batch x sequence x mode x optimizer x checkpointing
 * through vf_estimate_run_ctx (cx NULL: vf_estimate_run); the sum of the
 * peaks (a checksum), the count, wall and CPU seconds. */
static double sweep(struct vf_estimate_ctx *cx, const struct vf_arch *arch,
		    const struct vf_gpu_spec *g, long *n, double *dt, double *dc)
{
	struct vf_setup s;
	vf_setup_defaults(&s);
	struct vf_estimate e;
	double sink = 0;
	*n = 0;
	double t0 = now(), c0 = cpu_now();
	for (int rep = 0; rep < 200; rep++)
		for (int b = 1; b <= 32; b *= 2)
			for (int64_t sq = 512; sq <= 8192; sq *= 2)
				for (int mode = 0; mode < 2; mode++)
					for (int opt = 0; opt < 4; opt++)
						for (int ck = 0; ck < 2; ck++) {
							s.batch = b;
							s.seq = sq;
							s.mode = mode ? VF_MODE_LORA : VF_MODE_FULL;
							s.optimizer = (enum vf_optimizer)opt;
							s.grad_ckpt = ck;
							vf_estimate_run_ctx(cx, arch, &s, g, &e);
							sink += (double)e.peak_bytes;
							(*n)++;
						}
	*dt = now() - t0;
	*dc = cpu_now() - c0;
	return sink;
}

int main(void)
{
	struct vf_error err = {0};
	if (vf_models_load(&err) != VF_OK) {
		fprintf(stderr, "bench-estimate: %s\n", err.msg);
		return 1;
	}
	const struct vf_model_entry *m = vf_models_find("llama2-7b");
	const struct vf_gpu_spec *g = vf_gpu_catalog_find("h100-80gb");
	if (!m || !g) {
		fprintf(stderr, "bench-estimate: llama2-7b or h100-80gb missing from the catalogs\n");
		return 1;
	}
	struct vf_setup s;
	vf_setup_defaults(&s);
	long n = 0;
	double dt = 0, dc = 0;
	double sink = sweep(NULL, &m->arch, g, &n, &dt, &dc);
	printf("vf_estimate_run: %ld configurations in %.3f s: %.2f M/s per core, %.0f ns each "
	       "(checksum %.3g); CPU time %.3f s: %.2f M/s, %.0f ns each\n",
	       n, dt, n / dt / 1e6, dt / n * 1e9, sink, dc, n / dc / 1e6, dc / n * 1e9);
	/* the same sweep through one context, as the fit search runs it
	 * (vf_estimate_run_ctx): the layer kinds' step times of a (batch,
	 * sequence, mode) are computed once, on its first optimizer and
	 * checkpointing; from the second round on every one is remembered */
	struct vf_estimate_ctx *cx = vf_estimate_ctx_new();
	double sink2 = sweep(cx, &m->arch, g, &n, &dt, &dc);
	vf_estimate_ctx_free(cx);
	printf("vf_estimate_run_ctx (one context, as fit --search): %.2f M/s per core, %.0f ns each "
	       "(checksum %s); CPU time: %.2f M/s, %.0f ns each\n",
	       n / dt / 1e6, dt / n * 1e9, sink2 == sink ? "the same" : "DIFFERS", n / dc / 1e6,
	       dc / n * 1e9);
	/* the sweep's last setup, as before the sweep became a function */
	s.batch = 32;
	s.optimizer = (enum vf_optimizer)3;
	s.grad_ckpt = true;
	double t0 = now();
	long k = 0;
	for (int rep = 0; rep < 2000; rep++) {
		s.mode = VF_MODE_LORA;
		s.seq = 2048;
		sink += (double)vf_estimate_max_batch(&m->arch, &s, g, 0);
		k++;
	}
	dt = now() - t0;
	printf("vf_estimate_max_batch: %.1f us each\n", dt / k * 1e6);
	vf_models_release();
	return 0;
}
