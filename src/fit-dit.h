/* fit-dit.h - `vramfit fit` for a model the trainer profile trains (a
 * video DiT: ltx-2-19b, an LTX checkpoint, a diffusers DiT): per GPU kind
 * and count the tier, its starting config, the predicted autotune sweep
 * and the run's time and cost (cmd-fit-dit.c). */
#ifndef VF_FIT_DIT_H
#define VF_FIT_DIT_H

#include <stdbool.h>
#include <stdint.h>

#include "vramfit/estimate/setup.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/model/model.h"

struct vf_fit_dit_args {
	const char *model;
	const struct vf_setup *setup;     /* the flags given (mode, video, gpus) */
	int64_t steps;                    /* 0 = the starting config's */
	bool search, json, accept_risk;
	const char *sort;                 /* "cost" (default) | "time" */
	const char *trainer_dir;          /* the checkout's shipped configs, or NULL */
	double price;                     /* < 0: the catalog's */
	const struct vf_gpu_spec *const *gpus; /* the GPU kinds */
	const int *counts;                /* per kind: 0 = the profile's counts */
	int ngpus;
	int64_t top;                      /* --search results per GPU */
};

/* Print the answer; returns the exit code. */
int vf_fit_dit(const struct vf_fit_dit_args *a, const struct vf_model *m);

#endif
