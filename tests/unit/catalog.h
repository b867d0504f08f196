/* catalog.h - the set-up the estimator's tests repeat: a catalog model's
 * architecture and a catalog GPU by id, a training setup with the four
 * knobs most tests name set directly (no vf_setup_finish: the stack's
 * defaults stay out), and a finished one as a search starts from. Shared by tests/unit and
 * bench/; REQUIRE is vf_test.h's. */
#ifndef VF_TEST_CATALOG_H
#define VF_TEST_CATALOG_H

#include <stdint.h>
#include <stdio.h>

#include "vramfit/estimate/setup.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/model/models.h"

/* The model catalog's architecture of id; NULL when the catalog has no
 * such model or no architecture for it. Borrowed from the catalog. */
static inline const struct vf_arch *catalog_arch(const char *id)
{
	const struct vf_model_entry *m = vf_models_find(id);
	return m && m->has_arch ? &m->arch : NULL;
}

/* The GPU catalog's entry of id; NULL (and said on stderr) when none. */
static inline const struct vf_gpu_spec *catalog_gpu(const char *id)
{
	const struct vf_gpu_spec *g = vf_gpu_catalog_find(id);
	if (!g)
		fprintf(stderr, "  no catalog GPU %s\n", id);
	return g;
}

/* The defaults with mode, precision, micro-batch and sequence length set
 * as a test names them, nothing derived (no vf_setup_finish). */
static inline struct vf_setup train_setup(enum vf_mode mode, enum vf_precision precision, int64_t batch,
					  int64_t seq)
{
	struct vf_setup s;
	vf_setup_defaults(&s);
	s.mode = mode;
	s.precision = precision;
	s.batch = batch;
	s.seq = seq;
	return s;
}

/* The defaults with mode, GPUs, micro-batch and sequence length, finished
 * (vf_setup_finish: DDP over several GPUs, the stack's defaults) without
 * marking them given, so a search may still change them. */
static inline struct vf_setup finished_setup(enum vf_mode mode, int gpus, int64_t batch, int64_t seq)
{
	struct vf_setup s;
	struct vf_error err = {0};
	vf_setup_defaults(&s);
	s.mode = mode;
	s.gpus = gpus;
	s.batch = batch;
	s.seq = seq;
	if (vf_setup_finish(&s, &err) != VF_OK)
		fprintf(stderr, "  %s\n", err.msg);
	return s;
}

#ifdef CHECK
/* A setup from flag/value pairs (NULL-terminated), each as the command
 * line sets it, then finished (the stack's defaults); every pair must be
 * accepted. Only where vf_test.h is in (its CHECK). */
static inline void flags_setup(const char *flags[], struct vf_setup *s)
{
	struct vf_error err = {0};
	vf_setup_defaults(s);
	for (int i = 0; flags[i]; i += 2)
		CHECK(vf_setup_set(s, flags[i], flags[i + 1], &err) == VF_OK);
	CHECK(vf_setup_finish(s, &err) == VF_OK);
}
#endif

#endif
