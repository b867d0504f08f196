/* bench-search.c - how fast the fit search is, on one core:
 *   1. raw evaluation rate of vf_estimate_run (the estimator's full memory
 *      and time model) over a realistic space: llama2-7b, >= 100,000
 *      distinct configurations (mode, precision, optimizer and its
 *      implementation, checkpointing, micro-batch, sequence, quantization,
 *      LoRA rank, GPUs and sharding);
 *   2. the same with the search's per-configuration work added
 *      (vf_search_eval: estimate + data-parallel communication + cost);
 *   3. end to end: vf_search_run over the default space of
 *      `fit llama2-7b --mode full --search --gpu rtx-4090:4` and over a wide
 *      space (every knob allowed, LoRA, 8 GPUs, effective batch 64), pruned
 *      and exhaustive; and the whole `vramfit fit --search` process;
 *   4. splitting (split.h): vf_split_run for a TP=8 and a layer split of
 *      Llama-3.1-70B, and the search of a space only splits fit (70B bf16
 *      inference on 8x h100-80gb: tp x pp x dp layouts) in configurations/s.
 * Prints figures; asserts nothing (README: vramfit fit). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vramfit/estimate/estimate.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/model/models.h"
#include "vramfit/estimate/search.h"
#include "vramfit/estimate/split.h"
#include "../tests/unit/catalog.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static size_t build_space(struct vf_setup *out, size_t cap)
{
	static const int seqs[] = {512, 1024, 2048, 4096};
	static const int ranks[] = {8, 16, 64};
	static const int gpus[] = {1, 2, 4, 8};
	size_t n = 0;
	struct vf_setup s;
	vf_setup_defaults(&s);
	for (int mode = 0; mode < 2; mode++)
		for (int prec = 0; prec < 2; prec++)
			for (int opt = 0; opt < 5; opt++)
				for (int impl = 0; impl < 3; impl++)
					for (int ck = 0; ck < 2; ck++)
						for (int gi = 0; gi < 4; gi++)
							for (int sh = gpus[gi] > 1 ? 1 : 0;
							     sh < (gpus[gi] > 1 ? VF_SHARD_COUNT : 1); sh++)
								for (int q = 0; q < (mode ? VF_QUANT_COUNT : 1); q++)
									for (int r = 0; r < (mode ? 3 : 1); r++)
										for (int si = 0; si < 4; si++)
											for (int b = 1; b <= 8; b++) {
												if (n == cap)
													return n;
												s.mode = mode ? VF_MODE_LORA : VF_MODE_FULL;
												s.precision = (enum vf_precision)prec;
												s.optimizer = (enum vf_optimizer)opt;
												s.optimizer_impl = (enum vf_optimizer_impl)impl;
												s.grad_ckpt = ck;
												s.gpus = gpus[gi];
												s.shard = (enum vf_shard)sh;
												s.quant = (enum vf_quant)q;
												s.lora_rank = ranks[r];
												s.lora_alpha = ranks[r];
												s.seq = seqs[si];
												s.batch = b;
												s.grad_accum = 1;
												out[n++] = s;
											}
	return n;
}

int main(int argc, char **argv)
{
	(void)argc;
	struct vf_error err = {0};
	if (vf_models_load(&err) != VF_OK) {
		fprintf(stderr, "bench-search: %s\n", err.msg);
		return 1;
	}
	const struct vf_model_entry *m = vf_models_find("llama2-7b");
	const struct vf_gpu_spec *g = vf_gpu_catalog_find("rtx-4090");
	if (!m || !m->has_arch || !g) {
		fprintf(stderr, "bench-search: llama2-7b or rtx-4090 missing from the catalogs\n");
		return 1;
	}
	const struct vf_arch *a = &m->arch;
	size_t cap = 400000;
	struct vf_setup *space = malloc(cap * sizeof *space);
	if (!space)
		return 1;
	size_t n = build_space(space, cap);

	/* 1. raw estimator rate */
	volatile int64_t sink = 0;
	double t0 = now(), t;
	size_t evals = 0;
	do {
		for (size_t i = 0; i < n; i++) {
			struct vf_estimate e;
			vf_estimate_run(a, &space[i], g, &e);
			sink += e.peak_bytes;
		}
		evals += n;
		t = now() - t0;
	} while (t < 1.0);
	printf("vf_estimate_run: %zu configurations (llama2-7b), %zu evaluations in %.2f s: "
	       "%.2fM evaluations/s on one core (%.0f ns each)\n",
	       n, evals, t, evals / t / 1e6, t / evals * 1e9);

	/* 2. per-configuration search work */
	t0 = now();
	evals = 0;
	do {
		for (size_t i = 0; i < n; i++) {
			struct vf_search_result r;
			vf_search_eval(a, &space[i], g, 0.10, -1, &r);
			sink += r.peak_bytes;
		}
		evals += n;
		t = now() - t0;
	} while (t < 1.0);
	printf("vf_search_eval (estimate + communication + cost): %.2fM evaluations/s (%.0f ns each)\n",
	       evals / t / 1e6, t / evals * 1e9);

	/* 3. end to end */
	struct vf_setup st = finished_setup(VF_MODE_FULL, 4, 1, 2048);
	struct vf_search_opts o;
	vf_search_opts_defaults(&o);
	o.max_gpus = 4;
	struct vf_search r;
	int reps = 0;
	t0 = now();
	do {
		vf_search_run(a, &st, g, &o, &r, &err);
		vf_search_release(&r);
		reps++;
		t = now() - t0;
	} while (t < 0.5);
	vf_search_run(a, &st, g, &o, &r, &err);
	printf("default space (full, 4x rtx-4090, effective batch 4): %llu configurations, %llu "
	       "evaluated, %.3f ms per search\n",
	       (unsigned long long)r.space, (unsigned long long)r.evaluated, t / reps * 1e3);
	vf_search_release(&r);

	struct vf_setup wide = finished_setup(VF_MODE_LORA, 8, 8, 2048);
	const struct vf_gpu_spec *h = vf_gpu_catalog_find("a100-80gb");
	for (int ex = 0; ex < 2; ex++) {
		o.knobs = VF_KNOBS_DEFAULT | VF_KNOB_BIT(VF_KNOB_LORA_RANK) |
			  VF_KNOB_BIT(VF_KNOB_PRECISION);
		o.max_gpus = 8;
		o.exhaustive = ex;
		reps = 0;
		t0 = now();
		do {
			vf_search_run(a, &wide, h, &o, &r, &err);
			vf_search_release(&r);
			reps++;
			t = now() - t0;
		} while (t < 0.5);
		vf_search_run(a, &wide, h, &o, &r, &err);
		printf("wide space (LoRA, every knob, 8x a100-80gb, effective batch 64)%s: %llu "
		       "configurations, %llu evaluated, %llu fit, %.2f ms per search\n",
		       ex ? ", exhaustive" : ", pruned", (unsigned long long)r.space,
		       (unsigned long long)r.evaluated, (unsigned long long)r.fitting,
		       t / reps * 1e3);
		vf_search_release(&r);
	}
	/* the same pruned search as fit --search runs it: the results shown
	 * (top 10) confirmed by the allocator simulation; each round with a
	 * replay memo of its own, as a new process has */
	o.exhaustive = false;
	reps = 0;
	unsigned long long confirmed = 0;
	t0 = now();
	do {
		struct vf_replay_memo *memo = vf_replay_memo_new();
		vf_search_run(a, &wide, h, &o, &r, &err);
		for (size_t i = 0; i < r.count; i++) {
			struct vf_estimate e;
			if (vf_estimate_simulate_memo(a, &r.results[i].setup, h, NULL, memo, &e, NULL,
						      &err) == VF_OK &&
			    !e.sim_oom && e.peak_bytes <= r.results[i].limit_bytes)
				confirmed++;
		}
		vf_replay_memo_free(memo);
		reps++;
		unsigned long long space_n = r.space;
		vf_search_release(&r);
		t = now() - t0;
		if (t >= 0.5)
			printf("wide space, pruned, the %zu results shown confirmed by the allocator "
			       "simulation (%llu of them fit): %.2f ms per search: %.2fM configurations/s\n",
			       o.top, confirmed / (unsigned long long)reps, t / reps * 1e3,
			       space_n / (t / reps) / 1e6);
	} while (t < 0.5);

	/* 4. splitting */
	const struct vf_model_entry *big = vf_models_find("llama3.1-70b");
	const struct vf_gpu_spec *h100 = vf_gpu_catalog_find("h100-80gb");
	if (big && big->has_arch && h100) {
		static struct vf_split sp;
		struct vf_setup ss;
		vf_setup_defaults(&ss);
		ss.mode = VF_MODE_INFER;
		const char *names[2] = {"tp 8", "layer split over 8 GPUs"};
		for (int kind = 0; kind < 2; kind++) {
			ss.tp = kind ? 1 : 8;
			ss.split = kind ? VF_SPLIT_LAYERS : VF_SPLIT_NONE;
			ss.gpus = 8;
			reps = 0;
			t0 = now();
			do {
				for (int i = 0; i < 1000; i++) {
					vf_split_run(&big->arch, &ss, h100, &sp, &err);
					sink += sp.gpu[sp.limiting].est.peak_bytes;
				}
				reps += 1000;
				t = now() - t0;
			} while (t < 0.5);
			printf("vf_split_run (llama3.1-70b inference, %s): %.0fk splits/s (%.1f us each)\n",
			       names[kind], reps / t / 1e3, t / reps * 1e6);
		}
		struct vf_setup inf = finished_setup(VF_MODE_INFER, 8, 8, 2048);
		o.knobs = VF_KNOBS_DEFAULT;
		o.max_gpus = 8;
		o.exhaustive = false;
		reps = 0;
		t0 = now();
		do {
			vf_search_run(&big->arch, &inf, h100, &o, &r, &err);
			vf_search_release(&r);
			reps++;
			t = now() - t0;
		} while (t < 0.5);
		vf_search_run(&big->arch, &inf, h100, &o, &r, &err);
		printf("split space (llama3.1-70b inference, 8x h100-80gb, effective batch 64, default "
		       "knobs): %llu configurations, %llu evaluated, %llu fit, %.2f ms per search: "
		       "%.2fM configurations/s\n",
		       (unsigned long long)r.space, (unsigned long long)r.evaluated,
		       (unsigned long long)r.fitting, t / reps * 1e3, r.space / (t / reps) / 1e6);
		vf_search_release(&r);
	}

	/* The whole process: build/vramfit next to build/bench/. */
	char exe[4096];
	snprintf(exe, sizeof exe, "%s", argv[0]);
	char *slash = strrchr(exe, '/');
	if (slash) {
		snprintf(slash, sizeof exe - (size_t)(slash - exe), "/../vramfit");
		if (access(exe, X_OK) == 0) {
			char cmd[4200];
			snprintf(cmd, sizeof cmd,
				 "%s fit llama2-7b --mode full --search --gpu rtx-4090:4 >/dev/null", exe);
			int runs = 20;
			t0 = now();
			for (int i = 0; i < runs; i++)
				if (system(cmd) != 0)
					break;
			printf("vramfit fit llama2-7b --mode full --search --gpu rtx-4090:4: %.1f ms per "
			       "process (start, catalogs, search, output)\n",
			       (now() - t0) / runs * 1e3);
		}
	}
	(void)sink;
	free(space);
	vf_models_release();
	return 0;
}
