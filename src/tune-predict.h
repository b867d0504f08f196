/* tune-predict.h - the estimate of a trainer config, for tune's predicted
 * trials and run's recovery: the model from the config's model_path
 * (configs.json model_ids globs), the trainer's keys as plan reads them
 * (vf_sweepfit_config), the GPU the run is for. */
#ifndef VRAMFIT_CLI_TUNE_PREDICT_H
#define VRAMFIT_CLI_TUNE_PREDICT_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "vramfit/base/yamldoc.h"
#include "vramfit/estimate/estimate.h"
#include "vramfit/gpu/gpu.h"

struct predict_ctx {
	cJSON *configs;                   /* configs.json */
	const struct vf_gpu_spec *spec;   /* the smallest GPU's catalog entry, or NULL */
	int gpus;
	int train_dims[3];                /* --resolution-buckets' largest; 0: validation dims */
};

/* The estimate of config d. VF_ENOTFOUND when the model is not one the
 * estimator knows. */
vf_status vf_cli_predict_estimate(const struct predict_ctx *pc, const struct vf_yamldoc *d, struct vf_estimate *e,
				  struct vf_error *err);
/* vf_tune_predict_fn and vf_tune_predict_step_fn on a struct predict_ctx. */
vf_status vf_cli_predict_peak(void *ctx, const struct vf_yamldoc *d, int64_t *bytes, struct vf_error *err);
vf_status vf_cli_predict_step(void *ctx, const struct vf_yamldoc *d, double *seconds, struct vf_error *err);

#endif
