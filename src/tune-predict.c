/* tune-predict.c - the estimate of a trainer config (tune-predict.h). */
#include <fnmatch.h>
#include <string.h>

#include "tune-predict.h"
#include "vramfit/base/json.h"
#include "vramfit/trainer/sweepfit.h"


/* The estimate of a trial config: the model from its model_path
 * (configs.json model_ids globs), the trainer's keys as plan reads them
 * (vf_sweepfit_config). VF_ENOTFOUND when the model is not one the
 * estimator knows. */
vf_status vf_cli_predict_estimate(const struct predict_ctx *pc, const struct vf_yamldoc *d, struct vf_estimate *e,
				  struct vf_error *err)
{
	const char *path = NULL;
	if (vf_yamldoc_get_str(d, "model.model_path", &path, NULL) != VF_OK)
		return VF_ENOTFOUND;
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const char *id = NULL;
	const cJSON *m;
	cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(pc->configs, "model_ids"))
	{
		const char *g = vf_json_get_str(m, "glob");
		if (g && fnmatch(g, base, FNM_CASEFOLD) == 0) {
			id = vf_json_get_str(m, "id");
			break;
		}
	}
	if (!id)
		return VF_ENOTFOUND;
	struct vf_ltx2_config lc;
	vf_status st = vf_sweepfit_config(pc->configs, d, pc->gpus > 0 ? pc->gpus : 1, &lc, err);
	/* the trial's sample is preprocessed at the plan's training size */
	for (int i = 0; i < 3; i++)
		lc.train_dims[i] = pc->train_dims[i];
	if (st == VF_OK)
		st = vf_estimate_ltx2(id, &lc, pc->spec, e, err);
	return st;
}

vf_status vf_cli_predict_peak(void *ctx, const struct vf_yamldoc *d, int64_t *bytes, struct vf_error *err)
{
	struct vf_estimate e;
	vf_status st = vf_cli_predict_estimate(ctx, d, &e, err);
	if (st)
		return st;
	*bytes = e.peak_bytes;
	return VF_OK;
}

vf_status vf_cli_predict_step(void *ctx, const struct vf_yamldoc *d, double *seconds, struct vf_error *err)
{
	struct vf_estimate e;
	vf_status st = vf_cli_predict_estimate(ctx, d, &e, err);
	if (st)
		return st;
	if (!(e.step_seconds > 0))
		return VF_ENOTFOUND;
	*seconds = e.step_seconds;
	return VF_OK;
}

