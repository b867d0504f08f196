/* replay-check.h - what the allocator replay's tests share: the random
 * traces' generator (test-alloc, test-replayfork); for test-replaymemo and
 * test-replayfork, two estimates equal in every figure a replay decides,
 * every setup of the ground-truth files, and threads warming one replay
 * memo at once (each waits at one barrier, then prefetches a family of n
 * setups from its own first one on, wrapping around). */
#ifndef VF_TEST_REPLAY_CHECK_H
#define VF_TEST_REPLAY_CHECK_H

#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "estimate/steptrace.h"
#include "vf_test.h"
#include "vramfit/estimate/estimate.h"
#include "vramfit/estimate/groundtruth.h"
#include "vramfit/estimate/split.h"

/* Marsaglia's xorshift64 (13, 7, 17): the next number of *state. */
static inline uint64_t xorshift64(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

/* a and b agree in every figure the allocator replay decides. */
static inline bool same_estimate(const struct vf_estimate *a, const struct vf_estimate *b)
{
	return a->peak_bytes == b->peak_bytes && a->peak_reserved_bytes == b->peak_reserved_bytes &&
	       a->peak_allocated_bytes == b->peak_allocated_bytes &&
	       a->sim_allocated_bytes == b->sim_allocated_bytes &&
	       a->allocator_bytes == b->allocator_bytes && a->sim_oom == b->sim_oom &&
	       a->simulated == b->simulated && a->sim_short == b->sim_short &&
	       a->analytic_reserved_bytes == b->analytic_reserved_bytes &&
	       memcmp(a->phase_bytes, b->phase_bytes, sizeof a->phase_bytes) == 0;
}

/* A random tensor size for a replay test: one of common[0..ncommon) a
 * third of the time, else 1 KiB to about 96 MiB. */
static inline double replay_random_size(uint64_t *rng, const double *common, int ncommon)
{
	if (xorshift64(rng) % 3 == 0)
		return common[xorshift64(rng) % (uint64_t)ncommon];
	return (double)(1024 + xorshift64(rng) % (96u << 20));
}

/* 0 to max random tensors (replay_random_size) into t. */
static inline void replay_random_tensors(uint64_t *rng, struct vf__tensors *t, int max, const double *common,
					 int ncommon)
{
	t->n = (int)(xorshift64(rng) % (uint64_t)(max + 1));
	for (int i = 0; i < t->n; i++)
		t->bytes[i] = replay_random_size(rng, common, ncommon);
}

/* fn(arch, setup, ctx) for each record of the ground-truth file path whose
 * setup replays through vf_estimate_simulate (the env line and split
 * setups skipped). */
static inline void each_record_setup(const char *path,
				     void (*fn)(const struct vf_arch *, const struct vf_setup *, void *), void *ctx)
{
	FILE *f = fopen(path, "r");
	CHECK(f != NULL);
	if (!f)
		return;
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0) {
		cJSON *rec = cJSON_Parse(line);
		struct vf_arch arch;
		struct vf_setup su;
		struct vf_error err = {0};
		if (rec && !cJSON_GetObjectItem(rec, "env") &&
		    vf_groundtruth_record(rec, path, &arch, &su, &err) == VF_OK && !vf_split_active(&su))
			fn(&arch, &su, ctx);
		cJSON_Delete(rec);
	}
	free(line);
	fclose(f);
}

/* each_record_setup over every *.jsonl file of $VF_SHARED_DIR/groundtruth
 * (the calibration and held-out sets); returns the files read, 0 (a failed
 * CHECK) when the folder cannot be read. */
static inline int each_groundtruth_setup(void (*fn)(const struct vf_arch *, const struct vf_setup *, void *),
					 void *ctx)
{
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/groundtruth", vf_test_env("VF_SHARED_DIR", "../shared"));
	DIR *d = opendir(dir);
	CHECK(d != NULL);
	if (!d)
		return 0;
	int files = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		if (n < 6 || strcmp(de->d_name + n - 6, ".jsonl") != 0)
			continue;
		char path[8192];
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		each_record_setup(path, fn, ctx);
		files++;
	}
	closedir(d);
	return files;
}

#define WARM_THREADS 4

/* One warming thread: setups setup(s, k) for k = first, first + 1, ...
 * (mod n), each prefetched into memo. */
struct warm_run {
	const struct vf_arch *arch;
	const struct vf_gpu_spec *g;
	struct vf_replay_memo *memo;
	pthread_barrier_t *start;
	int first, n;
	void (*setup)(struct vf_setup *s, int k);
};

static inline void *warm_worker(void *arg)
{
	struct warm_run *r = arg;
	pthread_barrier_wait(r->start);
	for (int k = 0; k < r->n; k++) {
		struct vf_setup s;
		r->setup(&s, (r->first + k) % r->n);
		vf_estimate_prefetch_memo(r->arch, &s, r->g, NULL, r->memo);
	}
	return NULL;
}

/* WARM_THREADS threads, thread t starting at setup stride x t, warm memo
 * with the n setups of setup() at once; returns when all have ended. */
static inline void warm_threads(const struct vf_arch *arch, const struct vf_gpu_spec *g,
				struct vf_replay_memo *memo, void (*setup)(struct vf_setup *s, int k), int n,
				int stride)
{
	pthread_barrier_t start;
	pthread_barrier_init(&start, NULL, WARM_THREADS);
	struct warm_run run[WARM_THREADS];
	pthread_t th[WARM_THREADS];
	for (int t = 0; t < WARM_THREADS; t++) {
		run[t] = (struct warm_run){arch, g, memo, &start, stride * t, n, setup};
		CHECK(pthread_create(&th[t], NULL, warm_worker, &run[t]) == 0);
	}
	for (int t = 0; t < WARM_THREADS; t++)
		pthread_join(th[t], NULL);
	pthread_barrier_destroy(&start);
}

#endif
