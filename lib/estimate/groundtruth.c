/* groundtruth.c - run the estimator over measured records and score it
 * (groundtruth.h). Record fields: ../shared/groundtruth/README.md. */
#include "vramfit/estimate/groundtruth.h"
#include "vramfit/estimate/split.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vramfit/base/buf.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/base/json.h"

/* The public architecture a record names -> the transformers model_type
 * (arch_cfg carries the config values but not always the model_type). */
static const char *model_type_of(const char *arch)
{
	static const struct {
		const char *prefix;
		const char *type;
	} map[] = {
		{"gpt-neox", "gpt_neox"}, {"gpt_neox", "gpt_neox"}, {"pythia", "gpt_neox"},
		{"gpt2", "gpt2"},         {"gemma-3", "gemma3"},    {"gemma3", "gemma3"},
		{"gemma-2-", "gemma2"},   {"gemma2-", "gemma2"},    {"gemma", "gemma"},
		{"qwen3", "qwen3"},       {"qwen-3", "qwen3"},      {"qwen", "qwen2"},
		{"mistral", "mistral"},   {"mixtral", "mixtral"},   {"phi3", "phi3"},
		{"phi-3", "phi3"},        {"falcon", "falcon"},     {"t5", "t5"},
		{"flan-t5", "t5"},        {"mt5", "t5"},            {"llama", "llama"},
		{"tinyllama", "llama"},   {"stories", "llama"},     {"smollm", "llama"},
	};
	if (!arch)
		return NULL;
	char low[64];
	size_t i = 0;
	for (; arch[i] && i + 1 < sizeof low; i++)
		low[i] = (char)tolower((unsigned char)arch[i]);
	low[i] = 0;
	for (size_t k = 0; k < sizeof map / sizeof map[0]; k++)
		if (strncmp(low, map[k].prefix, strlen(map[k].prefix)) == 0)
			return map[k].type;
	return NULL;
}

/* Optional multi-GPU fields of a record (published runs): gpus, shard,
 * grad_accum, and one model across GPUs (split.h): split, tp, pp,
 * micro_batches, sequence_parallel - the setup flags of the same names. */
static vf_status record_parallel(const cJSON *rec, struct vf_setup *su, struct vf_error *err)
{
	static const char *const ints[][2] = {{"gpus", "gpus"}, {"grad_accum", "grad-accum"},
					       {"tp", "tp"}, {"pp", "pp"},
					       {"micro_batches", "micro-batches"}};
	static const char *const strs[][2] = {{"shard", "shard"}, {"split", "split"}};
	vf_status st;
	int64_t x;
	char v[32];
	for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
		if (vf_json_get_i64(rec, ints[i][0], &x)) {
			snprintf(v, sizeof v, "%lld", (long long)x);
			if ((st = vf_setup_set(su, ints[i][1], v, err)))
				return st;
		}
	for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
		const char *s = vf_json_get_str(rec, strs[i][0]);
		if (s && (st = vf_setup_set(su, strs[i][1], s, err)))
			return st;
	}
	bool b;
	if (vf_json_get_bool(rec, "sequence_parallel", &b))
		return vf_setup_set(su, "sequence-parallel", b ? "true" : "false", err);
	return VF_OK;
}

vf_status vf_groundtruth_record(const cJSON *rec, const char *what, struct vf_arch *arch,
				struct vf_setup *su, struct vf_error *err)
{
	const char *id = vf_json_get_str(rec, "id");
	char where[160];
	snprintf(where, sizeof where, "%s: record %s", what, id ? id : "(no id)");
	const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(rec, "arch_cfg");
	if (!cJSON_IsObject(cfg))
		return vf_error_set(err, VF_ERR, "%s: field arch_cfg: expected an object", where);
	cJSON *copy = cJSON_Duplicate(cfg, 1);
	if (!copy)
		return vf_error_set(err, VF_ENOMEM, "%s: out of memory", where);
	const char *mt = model_type_of(vf_json_get_str(rec, "arch"));
	if (mt && !cJSON_GetObjectItemCaseSensitive(copy, "model_type"))
		cJSON_AddStringToObject(copy, "model_type", mt);
	vf_status st = vf_arch_from_config(copy, where, arch, err);
	cJSON_Delete(copy);
	if (st)
		return st;

	vf_setup_defaults(su);
	const char *v;
	struct {
		const char *key, *flag;
	} strs[] = {{"mode", "mode"},
		    {"precision", "precision"},
		    {"attention", "attention"},
		    {"quant", "quant"}}; /* QLoRA records (bench/groundtruth/measure.py) */
	for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
		if ((v = vf_json_get_str(rec, strs[i].key)) && (st = vf_setup_set(su, strs[i].flag, v, err)))
			return vf_error_prefix(err, where);
	v = vf_json_get_str(rec, "optimizer");
	if (v && strcmp(v, "none") != 0 && (st = vf_setup_set(su, "optimizer", v, err)))
		return vf_error_prefix(err, where);
	int64_t x;
	if (!vf_json_get_i64(rec, "batch", &x) || x < 1)
		return vf_error_set(err, VF_ERR, "%s: field batch: expected a positive integer", where);
	su->batch = x;
	if (!vf_json_get_i64(rec, "seq", &x) || x < 1)
		return vf_error_set(err, VF_ERR, "%s: field seq: expected a positive integer", where);
	su->seq = x;
	if (vf_json_get_i64(rec, "target_seq", &x) && x > 0)
		su->target_seq = x;
	else if (strcmp(arch->family, "t5") == 0)
		su->target_seq = 128; /* README: T5 decoder labels of length 128 */
	bool b;
	if (vf_json_get_bool(rec, "grad_ckpt", &b))
		su->grad_ckpt = b;
	if (vf_json_get_i64(rec, "lora_r", &x) && x > 0) {
		su->lora_rank = (int)x;
		su->lora_alpha = (double)x;
		su->given |= VF_SETUP_G_LORA_RANK | VF_SETUP_G_LORA_ALPHA;
	}
	const cJSON *targets = cJSON_GetObjectItemCaseSensitive(rec, "lora_targets");
	if (cJSON_IsArray(targets)) {
		unsigned bits = 0;
		const cJSON *t;
		cJSON_ArrayForEach(t, targets)
		{
			unsigned one;
			if (!cJSON_IsString(t) || vf_lora_targets_parse(t->valuestring, &one, err))
				return vf_error_prefix(err, where);
			bits |= one;
		}
		if (bits)
			su->lora_targets = bits;
	}
	if ((st = record_parallel(rec, su, err)))
		return vf_error_prefix(err, where);
	if ((st = vf_setup_finish(su, err)))
		return vf_error_prefix(err, where);
	return VF_OK;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void vf_gt_report_release(struct vf_gt_report *r)
{
	if (!r)
		return;
	free(r->rows);
	memset(r, 0, sizeof *r);
}

vf_status vf_groundtruth_check(const char *path, struct vf_gt_report *r, struct vf_error *err)
{
	memset(r, 0, sizeof *r);
	struct vf_buf buf;
	vf_buf_init(&buf, VF_GT_MAX_FILE);
	vf_status st = vf_buf_read_file(&buf, path, VF_GT_MAX_FILE, err);
	if (st == VF_OK)
		st = vf_groundtruth_check_text(buf.data ? buf.data : "", buf.len, path, r, err);
	vf_buf_release(&buf);
	return st;
}

static bool line_blank(const char *line, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!isspace((unsigned char)line[i]))
			return false;
	return true;
}

/* A zeroed row at the end of r->rows (grown by doubling; *cap its room). */
static vf_status gt_row_new(struct vf_gt_report *r, size_t *cap, const char *path,
			    struct vf_gt_row **row, struct vf_error *err)
{
	if (r->n >= VF_GT_MAX_RECORDS)
		return vf_error_set(err, VF_ERR, "%s: more than %d records", path, VF_GT_MAX_RECORDS);
	if (r->n == *cap) {
		size_t nc = *cap ? *cap * 2 : 32;
		struct vf_gt_row *nr = realloc(r->rows, nc * sizeof *nr);
		if (!nr)
			return vf_error_set(err, VF_ENOMEM, "%s: out of memory", path);
		r->rows = nr;
		*cap = nc;
	}
	*row = &r->rows[r->n];
	memset(*row, 0, sizeof **row);
	return VF_OK;
}

/* The estimate of one record on the H200: of the GPU that limits when the
 * record splits over GPUs (*sp allocated on first use), else simulated. */
static vf_status gt_predict(const struct vf_arch *arch, const struct vf_setup *su,
			    const struct vf_gpu_spec *h200, const char *path, const char *what,
			    struct vf_split **sp, struct vf_gt_row *row, struct vf_estimate *e,
			    struct vf_error *err)
{
	vf_status st;
	if (vf_split_active(su)) { /* the GPU of the split that limits */
		if (!*sp && !(*sp = calloc(1, sizeof **sp)))
			return vf_error_set(err, VF_ENOMEM, "%s: out of memory", path);
		if ((st = vf_split_run(arch, su, h200, *sp, err))) {
			vf_error_prefix(err, what);
			return st;
		}
		*e = (*sp)->total;
		row->pred_peak_fast = e->peak_bytes;
		return VF_OK;
	}
	st = vf_estimate_simulate(arch, su, h200, NULL, e, NULL, err);
	if (st == VF_OK)
		row->pred_peak_fast = e->context_bytes + e->analytic_reserved_bytes;
	return st;
}

/* Measured against predicted, into row. */
static void gt_score(struct vf_gt_report *r, const struct vf_gpu_spec *h200, const struct vf_estimate *e,
		     int64_t pa, int64_t pr, double step, struct vf_gt_row *row)
{
	row->scored = strcmp(row->status, "ok") == 0;
	row->meas_alloc = pa;
	row->pred_alloc = e->peak_allocated_bytes;
	row->meas_peak = r->context_bytes + pr;
	row->pred_peak = e->peak_bytes;
	row->meas_step = step;
	row->pred_step = e->step_seconds;
	row->err_alloc = pa > 0 ? (double)e->peak_allocated_bytes / (double)pa - 1 : 0;
	row->err_peak = (double)e->peak_bytes / (double)row->meas_peak - 1;
	row->err_step = step > 0 && e->step_seconds > 0 ? e->step_seconds / step - 1 : NAN;
	if (!row->scored) {
		r->n_oom++;
		if (!vf_estimate_fits(e, h200, NULL))
			r->n_oom_predicted++;
	}
	row->phase = e->peak_phase;
	row->dominant = e->dominant;
}

/* One record (rec, consumed) into a new row of r. */
static vf_status gt_record_row(struct vf_gt_report *r, size_t *cap, cJSON *rec, const struct vf_gpu_spec *h200,
			       const char *path, const char *what, struct vf_split **sp,
			       struct vf_error *err)
{
	struct vf_gt_row *row = NULL;
	struct vf_arch arch;
	struct vf_setup su;
	vf_status st = gt_row_new(r, cap, path, &row, err);
	if (st == VF_OK)
		st = vf_groundtruth_record(rec, what, &arch, &su, err);
	if (st) {
		cJSON_Delete(rec);
		return st;
	}
	snprintf(row->id, sizeof row->id, "%s", vf_json_get_str(rec, "id") ? vf_json_get_str(rec, "id") : "?");
	const char *status = vf_json_get_str(rec, "status");
	snprintf(row->status, sizeof row->status, "%s", status ? status : "ok");
	int64_t pa = 0, pr = 0;
	double step = -1;
	if (!vf_json_get_i64(rec, "peak_alloc", &pa) || !vf_json_get_i64(rec, "peak_reserved", &pr)) {
		cJSON_Delete(rec);
		return vf_error_set(err, VF_ERR, "%s: fields peak_alloc, peak_reserved: expected integers", what);
	}
	vf_json_get_double(rec, "step_median_s", &step);
	cJSON_Delete(rec);
	su.context_bytes = r->context_bytes;
	struct vf_estimate e;
	if ((st = gt_predict(&arch, &su, h200, path, what, sp, row, &e, err)))
		return st;
	gt_score(r, h200, &e, pa, pr, step, row);
	r->n++;
	return VF_OK;
}

/* One non-blank line: an env record (its context) or a measured run. */
static vf_status gt_line(struct vf_gt_report *r, size_t *cap, const char *line, size_t len,
			 const struct vf_gpu_spec *h200, const char *path, size_t lineno, struct vf_split **sp,
			 struct vf_error *err)
{
	char what[300];
	snprintf(what, sizeof what, "%s:%zu", path, lineno);
	cJSON *rec = NULL;
	vf_status st = vf_json_parse(line, len, what, &rec, err);
	if (st)
		return st;
	const cJSON *env = cJSON_GetObjectItemCaseSensitive(rec, "env");
	if (cJSON_IsObject(env)) {
		int64_t c;
		if (vf_json_get_i64(env, "context_used_bytes", &c) && c > 0)
			r->context_bytes = c;
		cJSON_Delete(rec);
		return VF_OK;
	}
	return gt_record_row(r, cap, rec, h200, path, what, sp, err);
}

/* Largest and median of v[0..k) (v is sorted). */
static void gt_stats(double *v, size_t k, double *max, double *med)
{
	*max = 0;
	for (size_t i = 0; i < k; i++)
		if (v[i] > *max)
			*max = v[i];
	*med = median(v, k);
}

/* The summary over the scored records. */
static vf_status gt_summary(struct vf_gt_report *r, const char *path, struct vf_error *err)
{
	double *v = malloc((r->n ? r->n : 1) * sizeof *v);
	if (!v) {
		vf_gt_report_release(r);
		return vf_error_set(err, VF_ENOMEM, "%s: out of memory", path);
	}
	size_t k = 0;
	for (size_t i = 0; i < r->n; i++)
		if (r->rows[i].scored)
			v[k++] = fabs(r->rows[i].err_alloc);
	r->scored = k;
	gt_stats(v, k, &r->max_alloc, &r->med_alloc);
	k = 0;
	for (size_t i = 0; i < r->n; i++)
		if (r->rows[i].scored)
			v[k++] = fabs(r->rows[i].err_peak);
	gt_stats(v, k, &r->max_peak, &r->med_peak);
	k = 0;
	for (size_t i = 0; i < r->n; i++)
		if (r->rows[i].scored && !isnan(r->rows[i].err_step))
			v[k++] = fabs(r->rows[i].err_step);
	r->n_step = k;
	gt_stats(v, k, &r->max_step, &r->med_step);
	free(v);
	return VF_OK;
}

vf_status vf_groundtruth_check_text(const char *text, size_t textlen, const char *path,
				    struct vf_gt_report *r, struct vf_error *err)
{
	memset(r, 0, sizeof *r);
	const struct vf_gpu_spec *h200 = vf_gpu_catalog_find("h200");
	if (!h200)
		return vf_error_set(err, VF_ERR, "GPU catalog: no entry h200 (needed for ground truth)");
	if (textlen > VF_GT_MAX_FILE)
		return vf_error_set(err, VF_ERR, "%s: larger than %u bytes", path, VF_GT_MAX_FILE);
	r->context_bytes = vf_estimate_default_context(h200);
	struct vf_split *sp = NULL; /* records split over GPUs (tp, pp, layers) */
	size_t cap = 0;
	const char *line = text, *end_all = text + textlen;
	size_t lineno = 0;
	while (line && line < end_all) {
		const char *nl = memchr(line, '\n', (size_t)(end_all - line));
		size_t len = nl ? (size_t)(nl - line) : (size_t)(end_all - line);
		lineno++;
		if (!line_blank(line, len)) {
			vf_status st = gt_line(r, &cap, line, len, h200, path, lineno, &sp, err);
			if (st) {
				free(sp);
				vf_gt_report_release(r);
				return st;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	free(sp);
	return gt_summary(r, path, err);
}

bool vf_gt_within_bounds(const struct vf_gt_report *r)
{
	return r->med_alloc <= VF_GT_ALLOC_MEDIAN && r->max_alloc <= VF_GT_ALLOC_MAX &&
	       r->med_peak <= VF_GT_PEAK_MEDIAN && r->max_peak <= VF_GT_PEAK_MAX &&
	       r->med_step <= VF_GT_STEP_MEDIAN && r->max_step <= VF_GT_STEP_MAX;
}
