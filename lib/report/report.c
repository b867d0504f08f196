/* report.c - render a report's data object into its page (report.h):
 * dispatch on the kind, the page-size limit, the atomic write; the helpers
 * the renderers share (common.h), and the phase-breakdown figure used by
 * both the estimate and the plan reports. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "vramfit/report/report.h"
#include "vramfit/base/rundir.h"

double vf__num(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

const char *vf__str(const cJSON *obj, const char *key, const char *dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsString(v) && v->valuestring ? v->valuestring : dflt;
}

char *vf__gib(char *out, size_t n, double bytes)
{
	if (!isfinite(bytes))
		snprintf(out, n, "-");
	else if (fabs(bytes) < GIB && bytes != 0)
		snprintf(out, n, "%.0f MiB", bytes / (1024.0 * 1024.0));
	else
		snprintf(out, n, "%.1f GiB", bytes / GIB);
	return out;
}

char *vf__secs(char *out, size_t n, double s)
{
	if (!isfinite(s) || s < 0)
		snprintf(out, n, "-");
	else if (s < 10)
		snprintf(out, n, "%.3g s", s);
	else if (s < 600)
		snprintf(out, n, "%.1f s", s);
	else if (s < 7200)
		snprintf(out, n, "%.1f min", s / 60);
	else
		snprintf(out, n, "%.1f h", s / 3600);
	return out;
}

char *vf__count(char *out, size_t n, double v)
{
	if (!isfinite(v)) {
		snprintf(out, n, "-");
		return out;
	}
	char raw[48];
	snprintf(raw, sizeof raw, "%.0f", fabs(v));
	size_t len = strlen(raw), o = 0;
	if (v < 0 && o + 1 < n)
		out[o++] = '-';
	for (size_t i = 0; i < len && o + 2 < n; i++) {
		if (i && (len - i) % 3 == 0)
			out[o++] = ',';
		out[o++] = raw[i];
	}
	out[o < n ? o : n - 1] = '\0';
	return out;
}

char *vf__gpu_short(const char *name, char *out, size_t n)
{
	if (!name)
		name = "?";
	if (strncmp(name, "NVIDIA ", 7) == 0)
		name += 7;
	if (strncmp(name, "GeForce ", 8) == 0)
		name += 8;
	snprintf(out, n, "%s", name);
	return out;
}

static const struct {
	const char *key, *label;
	int color;
} terms[] = {
	{"weights", "weights", 0},
	{"gradients", "gradients", 1},
	{"optimizer", "optimizer states", 2},
	{"optimizer_temp", "optimizer temporaries", 9},
	{"autocast_cache", "autocast copies", 3},
	{"activations", "activations", 5},
	{"logits", "logits and loss", 6},
	{"kv_cache", "KV cache", 4},
	{"context", "CUDA context", 7},
	{"allocator", "allocator reserve", 8},
};

const char *vf__term_label(const char *key)
{
	for (size_t i = 0; i < sizeof terms / sizeof terms[0]; i++)
		if (strcmp(terms[i].key, key) == 0)
			return terms[i].label;
	return key;
}

int vf__term_color(const char *key)
{
	for (size_t i = 0; i < sizeof terms / sizeof terms[0]; i++)
		if (strcmp(terms[i].key, key) == 0)
			return terms[i].color;
	return 7;
}

cJSON *vf_report_phases_json(const struct vf_estimate *e)
{
	cJSON *a = cJSON_CreateArray();
	for (int p = 0; p < VF_PHASE_COUNT && a; p++) {
		if (!(e->phases & (1u << p)))
			continue;
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "phase", vf_estimate_phase_name(e, (enum vf_phase)p));
		cJSON_AddBoolToObject(o, "peak", p == (int)e->peak_phase);
		cJSON *t = cJSON_AddObjectToObject(o, "terms");
		int64_t sum = 0;
		for (int k = 0; k < VF_TERM_COUNT; k++) {
			cJSON_AddNumberToObject(t, vf_term_name((enum vf_term)k), (double)e->phase_bytes[p][k]);
			sum += e->phase_bytes[p][k];
		}
		cJSON_AddNumberToObject(o, "total_bytes", (double)sum);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

typedef void (*render_fn)(struct vf_w *w, const cJSON *d);

static render_fn renderer(const char *kind)
{
	static const struct {
		const char *kind;
		render_fn fn;
	} table[] = {
		{"estimate", vf__report_estimate}, {"fit", vf__report_fit},     {"run", vf__report_run},
		{"history", vf__report_history},   {"plan", vf__report_plan},
	};
	for (size_t i = 0; kind && i < sizeof table / sizeof table[0]; i++)
		if (strcmp(table[i].kind, kind) == 0)
			return table[i].fn;
	return NULL;
}

vf_status vf_report_render(const cJSON *data, struct vf_buf *out, struct vf_error *err)
{
	const char *kind = vf__str(data, "report", NULL);
	render_fn fn = renderer(kind);
	if (!fn)
		return vf_error_set(err, VF_EUSAGE, "report: unknown kind '%s'", kind ? kind : "(none)");
	size_t start = out->len;
	struct vf_w w;
	vf_w_init(&w, out, err);
	fn(&w, data);
	if (w.st)
		return w.st;
	if (out->len - start > VF_REPORT_MAX_BYTES)
		return vf_error_set(err, VF_ERR, "report: the page would be %zu bytes, over the %u-byte limit",
				    out->len - start, VF_REPORT_MAX_BYTES);
	return VF_OK;
}

vf_status vf_report_write_run(const cJSON *data, const char *run_dir, const char *name, struct vf_error *err)
{
	struct vf_buf b;
	vf_buf_init(&b, 4 * VF_REPORT_MAX_BYTES);
	vf_status st = vf_report_render(data, &b, err);
	if (!st)
		st = vf_rundir_write_file(run_dir, name, b.data, b.len, 0644, err);
	vf_buf_release(&b);
	return st;
}

vf_status vf_report_write(const cJSON *data, const char *path, struct vf_error *err)
{
	struct vf_buf b;
	vf_buf_init(&b, 4 * VF_REPORT_MAX_BYTES);
	vf_status st = vf_report_render(data, &b, err);
	if (!st)
		st = vf_write_file_atomic(path, b.data, b.len, err);
	vf_buf_release(&b);
	return st;
}
