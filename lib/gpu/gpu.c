/* gpu.c - the GPU catalog (data/gpus.json or the user's override), matching
 * of probed names to catalog entries, GPU sets, simulation specs
 * ("h100-80gb", "h100-80gb:8", "NAME=MiB") and the probe order
 * (NVML, then nvidia-smi; see gpu_nvml.c, gpu_smi.c).
 *
 * The loaded catalog is the one piece of global state in libvramfit
 * (DESIGN.md). */
#include "vramfit/gpu/gpu.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gpu/gpu_probe.h"
#include "vramfit/base/data.h"
#include "vramfit/base/json.h"

#define CATALOG_MAX 1024      /* entries in gpus.json */
#define CLASSES_MAX 64        /* nominal_classes_gb */
#define MATCH_TOLERANCE 0.10  /* a probed MiB this far from an entry's MiB is another card */
#define NOMINAL_TOLERANCE 0.10 /* default of gpus.json nominal_tolerance */
#define CLASS_OVER 1.02       /* reported MiB may exceed the class by this factor (A100 80GB: 81920) */

static struct {
	bool loaded;
	struct vf_gpu_spec *specs;
	size_t count;
	int classes[CLASSES_MAX];
	int nclasses;
	double tolerance;
	char origin[512];
} cat;

void vf_gpu_catalog_reset(void)
{
	free(cat.specs);
	memset(&cat, 0, sizeof cat);
}

const char *vf_gpu_catalog_origin(void)
{
	return cat.origin;
}

void vf_gpu_name_normalize(const char *name, char *out, size_t n)
{
	static const char *const drop[] = {"nvidia", "geforce", "tesla", NULL};
	size_t o = 0;
	if (!n)
		return;
	out[0] = '\0';
	if (!name)
		return;
	const char *p = name;
	while (*p) {
		while (*p && !isalnum((unsigned char)*p))
			p++;
		const char *start = p;
		while (*p && isalnum((unsigned char)*p))
			p++;
		size_t len = (size_t)(p - start);
		if (!len)
			break;
		bool skip = false;
		for (int i = 0; drop[i]; i++)
			if (strlen(drop[i]) == len && strncasecmp(start, drop[i], len) == 0)
				skip = true;
		if (skip)
			continue;
		if (o && o + 1 < n)
			out[o++] = ' ';
		for (size_t i = 0; i < len && o + 1 < n; i++)
			out[o++] = (char)tolower((unsigned char)start[i]);
		out[o] = '\0';
	}
}

/* An entry's fields, found in one walk over its members (issue 21: a
 * cJSON_GetObjectItemCaseSensitive per field scanned the members 20 times
 * an entry). Listed in gpus.json's order, so that the walk, which tries the
 * field after the last one found first, finds each member in one compare;
 * "note" is read by no one and listed only for that. */
enum gpu_field {
	F_ID, F_NAME, F_MATCH, F_MEMORY_MIB, F_NOMINAL_GB, F_BF16, F_FP16, F_FP32, F_BANDWIDTH,
	F_INTERCONNECT, F_INTERCONNECT_GBS, F_NVLINK, F_CC, F_GENERATION, F_SMS, F_FORM_FACTOR,
	F_PRICE, F_PRICE_SOURCE, F_COMMON, F_NOTE, F_COUNT
};
static const char *const field_name[F_COUNT] = {
	"id", "name", "match", "memory_mib", "nominal_gb", "bf16_tflops", "fp16_tflops",
	"fp32_tflops", "bandwidth_gbs", "interconnect", "interconnect_gbs", "nvlink",
	"compute_capability", "generation", "sms", "form_factor", "price_usd_hour",
	"price_source", "common", "note",
};

/* f[k] = the member cJSON_GetObjectItemCaseSensitive(e, field_name[k])
 * finds: the first one with that key, or NULL */
static void collect_fields(const cJSON *e, const cJSON *f[F_COUNT])
{
	memset(f, 0, F_COUNT * sizeof *f);
	int next = 0;
	for (const cJSON *m = e->child; m && m->string; m = m->next) {
		for (int t = 0; t < F_COUNT; t++) {
			int k = (next + t) % F_COUNT;
			if (strcmp(m->string, field_name[k]) == 0) {
				if (!f[k])
					f[k] = m;
				next = k + 1;
				break;
			}
		}
	}
}

/* The "file: gpus[i]" or "file: gpus[i] (id)" that an entry's errors start
 * with, formatted only for an error. */
struct where {
	const char *file;
	size_t i;
	const char *id; /* NULL until the id is read */
	char buf[128];
};

static const char *where_str(struct where *w)
{
	if (w->id)
		snprintf(w->buf, sizeof w->buf, "%s: gpus[%zu] (%s)", w->file, w->i, w->id);
	else
		snprintf(w->buf, sizeof w->buf, "%s: gpus[%zu]", w->file, w->i);
	return w->buf;
}

/* Copy the string field v (key); error when missing (required) or too long. */
static vf_status get_str(const cJSON *v, const char *key, char *dst, size_t n, bool required,
			 struct where *w, struct vf_error *err)
{
	dst[0] = '\0';
	if (!v || cJSON_IsNull(v)) {
		if (required)
			return vf_error_set(err, VF_ERR, "%s: field %s: expected a string",
					    where_str(w), key);
		return VF_OK;
	}
	if (!cJSON_IsString(v))
		return vf_error_set(err, VF_ERR, "%s: field %s: expected a string", where_str(w),
				    key);
	size_t len = strlen(v->valuestring);
	if (len >= n)
		return vf_error_set(err, VF_ERR, "%s: field %s: longer than %zu characters",
				    where_str(w), key, n - 1);
	memcpy(dst, v->valuestring, len + 1);
	return VF_OK;
}

/* The number field v (key) that may be null (unknown -> -1); must be >= 0
 * when present. */
static vf_status get_num(const cJSON *v, const char *key, double *dst, struct where *w,
			 struct vf_error *err)
{
	*dst = -1;
	if (!v || cJSON_IsNull(v))
		return VF_OK;
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0)
		return vf_error_set(err, VF_ERR, "%s: field %s: expected a number >= 0 or null",
				    where_str(w), key);
	*dst = v->valuedouble;
	return VF_OK;
}

static bool valid_id(const char *id)
{
	if (!*id)
		return false;
	for (const char *p = id; *p; p++)
		if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '-' ||
		      *p == '_' || *p == '.'))
			return false;
	return true;
}

#define STR(k, dst, req) get_str(f[k], field_name[k], dst, sizeof dst, req, w, err)

/* the fields after id: strings, then sizes and rates, in the order their
 * errors are reported */
static vf_status entry_values(const cJSON *const f[F_COUNT], struct vf_gpu_spec *g,
			      struct where *w, struct vf_error *err)
{
	vf_status st;
	if ((st = STR(F_NAME, g->name, true)) || (st = STR(F_CC, g->cc, false)) ||
	    (st = STR(F_GENERATION, g->generation, false)) ||
	    (st = STR(F_INTERCONNECT, g->interconnect, false)) ||
	    (st = STR(F_FORM_FACTOR, g->form_factor, false)) ||
	    (st = STR(F_PRICE_SOURCE, g->price_source, false)))
		return st;
	int64_t v;
	if (!vf_json_number_is_i64(f[F_MEMORY_MIB], &v) || v <= 0 || v > (INT64_C(1) << 30))
		return vf_error_set(err, VF_ERR, "%s: field memory_mib: expected a positive integer",
				    where_str(w));
	g->memory_mib = v;
	if (!vf_json_number_is_i64(f[F_NOMINAL_GB], &v) || v <= 0 || v > (1 << 20))
		return vf_error_set(err, VF_ERR, "%s: field nominal_gb: expected a positive integer",
				    where_str(w));
	g->nominal_gb = (int)v;
	const cJSON *sm = f[F_SMS];
	if (sm && !cJSON_IsNull(sm) && (!vf_json_number_is_i64(sm, &v) || v < 1 || v > 4096))
		return vf_error_set(err, VF_ERR, "%s: field sms: expected a positive integer (streaming "
				    "multiprocessors) or null", where_str(w));
	g->sms = sm && !cJSON_IsNull(sm) ? (int)v : 0;
	static const enum gpu_field nums[] = {F_BF16, F_FP16, F_FP32, F_BANDWIDTH,
					      F_INTERCONNECT_GBS, F_PRICE};
	double *dst[] = {&g->bf16_tflops, &g->fp16_tflops, &g->fp32_tflops, &g->bandwidth_gbs,
			 &g->interconnect_gbs, &g->price_usd_hour};
	for (size_t k = 0; k < sizeof nums / sizeof *nums; k++)
		if ((st = get_num(f[nums[k]], field_name[nums[k]], dst[k], w, err)))
			return st;
	return VF_OK;
}

/* nvlink, common and the match names */
static vf_status entry_flags(const cJSON *const f[F_COUNT], struct vf_gpu_spec *g,
			     struct where *w, struct vf_error *err)
{
	const cJSON *b = f[F_NVLINK];
	if (b && !cJSON_IsBool(b))
		return vf_error_set(err, VF_ERR, "%s: field nvlink: expected true or false",
				    where_str(w));
	g->nvlink = cJSON_IsTrue(b);
	b = f[F_COMMON];
	if (b && !cJSON_IsBool(b))
		return vf_error_set(err, VF_ERR, "%s: field common: expected true or false",
				    where_str(w));
	g->common = cJSON_IsTrue(b);
	const cJSON *m = f[F_MATCH];
	if (m && !cJSON_IsArray(m))
		return vf_error_set(err, VF_ERR, "%s: field match: expected an array of names",
				    where_str(w));
	const cJSON *it;
	cJSON_ArrayForEach(it, m)
	{
		if (!cJSON_IsString(it))
			return vf_error_set(err, VF_ERR, "%s: field match: expected strings",
					    where_str(w));
		if (g->nmatch == VF_GPU_MAX_MATCH)
			return vf_error_set(err, VF_ERR, "%s: field match: more than %d names",
					    where_str(w), VF_GPU_MAX_MATCH);
		vf_gpu_name_normalize(it->valuestring, g->match[g->nmatch],
				      sizeof g->match[g->nmatch]);
		if (g->match[g->nmatch][0])
			g->nmatch++;
	}
	return VF_OK;
}

static vf_status parse_entry(const cJSON *e, size_t i, struct vf_gpu_spec *g, const char *file,
			     struct vf_error *err)
{
	struct where wh = {file, i, NULL, ""}, *w = &wh;
	memset(g, 0, sizeof *g);
	if (!cJSON_IsObject(e))
		return vf_error_set(err, VF_ERR, "%s: expected an object", where_str(w));
	const cJSON *f[F_COUNT];
	collect_fields(e, f);
	vf_status st = STR(F_ID, g->id, true);
	if (st)
		return st;
	if (!valid_id(g->id))
		return vf_error_set(err, VF_ERR,
				    "%s: field id: '%s' is not a lower-case id (a-z, 0-9, '-')",
				    where_str(w), g->id);
	w->id = g->id;
	if ((st = entry_values(f, g, w, err)) || (st = entry_flags(f, g, w, err)))
		return st;
	return VF_OK;
}

#undef STR

/* nominal_classes_gb and nominal_tolerance (each optional) */
static vf_status read_classes(const cJSON *root, const char *file, int classes[CLASSES_MAX],
			      int *nclasses, double *tol, struct vf_error *err)
{
	const cJSON *cl = cJSON_GetObjectItemCaseSensitive(root, "nominal_classes_gb");
	if (cl) {
		const cJSON *c;
		if (!cJSON_IsArray(cl))
			return vf_error_set(err, VF_ERR,
					    "%s: field nominal_classes_gb: expected an array of GB",
					    file);
		cJSON_ArrayForEach(c, cl)
		{
			int64_t gb;
			if (!vf_json_number_is_i64(c, &gb) || gb <= 0 || gb > (1 << 20) ||
			    *nclasses == CLASSES_MAX ||
			    (*nclasses && gb <= classes[*nclasses - 1]))
				return vf_error_set(err, VF_ERR,
						    "%s: field nominal_classes_gb: expected at most %d "
						    "increasing positive integers",
						    file, CLASSES_MAX);
			classes[(*nclasses)++] = (int)gb;
		}
	}
	if (cJSON_GetObjectItemCaseSensitive(root, "nominal_tolerance") &&
	    (!vf_json_get_double(root, "nominal_tolerance", tol) || *tol < 0 || *tol >= 0.5))
		return vf_error_set(err, VF_ERR,
				    "%s: field nominal_tolerance: expected a fraction from 0 to 0.5",
				    file);
	return VF_OK;
}

static vf_status load(struct vf_error *err)
{
	struct vf_json_doc *doc = NULL;
	char origin[sizeof cat.origin];
	vf_status st = vf_data_load_doc("gpus.json", &doc, origin, sizeof origin, err);
	if (st)
		return st;
	const cJSON *root = vf_json_doc_root(doc);
	const char *file = origin;
	struct vf_gpu_spec *specs = NULL;
	size_t n = 0;
	int classes[CLASSES_MAX];
	int nclasses = 0;
	double tol = NOMINAL_TOLERANCE;

	const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(root, "gpus");
	if (!cJSON_IsArray(gpus)) {
		st = vf_error_set(err, VF_ERR, "%s: field gpus: expected an array", file);
		goto out;
	}
	int total = cJSON_GetArraySize(gpus);
	if (total <= 0 || total > CATALOG_MAX) {
		st = vf_error_set(err, VF_ERR, "%s: field gpus: expected 1 to %d entries, found %d",
				  file, CATALOG_MAX, total);
		goto out;
	}
	specs = calloc((size_t)total, sizeof *specs);
	if (!specs) {
		st = vf_error_set(err, VF_ENOMEM, "%s: out of memory", file);
		goto out;
	}
	const cJSON *e;
	cJSON_ArrayForEach(e, gpus)
	{
		if ((st = parse_entry(e, n, &specs[n], file, err)))
			goto out;
		for (size_t k = 0; k < n; k++)
			if (strcmp(specs[k].id, specs[n].id) == 0) {
				st = vf_error_set(err, VF_ERR, "%s: gpus[%zu]: duplicate id '%s'",
						  file, n, specs[n].id);
				goto out;
			}
		n++;
	}
	if ((st = read_classes(root, file, classes, &nclasses, &tol, err)))
		goto out;
	vf_gpu_catalog_reset();
	cat.specs = specs;
	specs = NULL;
	cat.count = n;
	memcpy(cat.classes, classes, sizeof classes);
	cat.nclasses = nclasses;
	cat.tolerance = tol;
	snprintf(cat.origin, sizeof cat.origin, "%s", origin);
	cat.loaded = true;
out:
	free(specs);
	vf_json_doc_free(doc);
	return st;
}

const struct vf_gpu_spec *vf_gpu_catalog(size_t *count, struct vf_error *err)
{
	if (!cat.loaded && load(err) != VF_OK) {
		if (count)
			*count = 0;
		return NULL;
	}
	if (count)
		*count = cat.count;
	return cat.specs;
}

const struct vf_gpu_spec *vf_gpu_catalog_find(const char *id)
{
	size_t n;
	const struct vf_gpu_spec *s = vf_gpu_catalog(&n, NULL);
	if (!s || !id)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strcasecmp(s[i].id, id) == 0)
			return &s[i];
	return NULL;
}

/* Number of words of pat when pat occurs in name as whole words, else 0. */
static int words_match(const char *name, const char *pat)
{
	size_t pl = strlen(pat), nl = strlen(name);
	if (!pl)
		return 0;
	for (const char *p = name; (p = strstr(p, pat)) != NULL; p++) {
		bool left = p == name || p[-1] == ' ';
		bool right = p + pl == name + nl || p[pl] == ' ';
		if (left && right) {
			int w = 1;
			for (const char *q = pat; *q; q++)
				w += *q == ' ';
			return w;
		}
	}
	return 0;
}

const struct vf_gpu_spec *vf_gpu_catalog_match(const char *name, int64_t memory_mib)
{
	size_t n;
	const struct vf_gpu_spec *s = vf_gpu_catalog(&n, NULL);
	if (!s || !name)
		return NULL;
	char norm[128];
	vf_gpu_name_normalize(name, norm, sizeof norm);
	if (!norm[0])
		return NULL;
	const struct vf_gpu_spec *best = NULL;
	int best_score = 0;
	int64_t best_diff = INT64_MAX;
	for (size_t i = 0; i < n; i++) {
		int score = 0;
		char idpat[sizeof s[i].id];
		vf_gpu_name_normalize(s[i].id, idpat, sizeof idpat);
		score = words_match(norm, idpat);
		for (int k = 0; k < s[i].nmatch; k++) {
			int w = words_match(norm, s[i].match[k]);
			if (w > score)
				score = w;
		}
		if (!score)
			continue;
		int64_t diff = 0;
		if (memory_mib >= 0) { /* any reading, a broken 0 too, must agree with the card's */
			diff = memory_mib - s[i].memory_mib;
			if (diff < 0)
				diff = -diff;
			/* Same name, different memory: another card (GH200 144 GB). */
			if ((double)diff > MATCH_TOLERANCE * (double)s[i].memory_mib)
				continue;
		}
		if (score > best_score || (score == best_score && diff < best_diff)) {
			best = &s[i];
			best_score = score;
			best_diff = diff;
		}
	}
	return best;
}

int vf_gpu_nominal_gb(int64_t memory_mib)
{
	if (memory_mib <= 0 || !vf_gpu_catalog(NULL, NULL))
		return -1;
	for (int i = 0; i < cat.nclasses; i++) {
		double mib = (double)cat.classes[i] * 1024.0;
		if ((double)memory_mib >= mib * (1.0 - cat.tolerance) &&
		    (double)memory_mib <= mib * CLASS_OVER)
			return cat.classes[i];
	}
	int64_t gb = (memory_mib + 512) / 1024;
	return gb < 1 ? 1 : gb > (1 << 20) ? (1 << 20) : (int)gb;
}

/* --- GPU sets ------------------------------------------------------------ */

void vf_gpu_init(struct vf_gpu *g)
{
	memset(g, 0, sizeof *g);
	g->index = -1;
	g->memory_total_mib = g->memory_used_mib = g->memory_free_mib = -1;
	g->nominal_gb = -1;
}

void vf_gpu_identify(struct vf_gpu *g)
{
	const struct vf_gpu_spec *s = vf_gpu_catalog_match(g->name, g->memory_total_mib);
	g->catalog_id[0] = '\0';
	if (s)
		snprintf(g->catalog_id, sizeof g->catalog_id, "%s", s->id);
	if (s)
		g->nominal_gb = s->nominal_gb;
	else
		g->nominal_gb = vf_gpu_nominal_gb(g->memory_total_mib);
}

void vf_gpu_set_init(struct vf_gpu_set *s)
{
	memset(s, 0, sizeof *s);
	s->source = VF_GPU_NONE;
}

void vf_gpu_set_release(struct vf_gpu_set *s)
{
	if (!s)
		return;
	free(s->gpus);
	vf_gpu_set_init(s);
}

vf_status vf_gpu_set_add(struct vf_gpu_set *s, const struct vf_gpu *g, struct vf_error *err)
{
	if (s->count >= VF_GPU_MAX_COUNT)
		return vf_error_set(err, VF_ERR, "more than %d GPUs", VF_GPU_MAX_COUNT);
	if (s->count == s->alloc) {
		size_t cap = s->alloc ? s->alloc * 2 : 8;
		struct vf_gpu *p = realloc(s->gpus, cap * sizeof *p);
		if (!p)
			return vf_error_set(err, VF_ENOMEM, "out of memory");
		s->gpus = p;
		s->alloc = cap;
	}
	s->gpus[s->count++] = *g;
	return VF_OK;
}

void vf_gpu_set_note(struct vf_gpu_set *s, const char *fmt, ...)
{
	int max = (int)(sizeof s->notes / sizeof s->notes[0]);
	if (s->nnotes >= max)
		return;
	if (s->nnotes == max - 1) {
		snprintf(s->notes[s->nnotes++], sizeof s->notes[0], "(further notes dropped)");
		return;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->notes[s->nnotes++], sizeof s->notes[0], fmt, ap);
	va_end(ap);
}

const char *vf_gpu_source_name(enum vf_gpu_source src)
{
	switch (src) {
	case VF_GPU_NVML:
		return "nvml";
	case VF_GPU_SMI:
		return "nvidia-smi";
	case VF_GPU_SIMULATED:
		return "simulated";
	case VF_GPU_NONE:
		break;
	}
	return "none";
}

/* --- simulation specs ---------------------------------------------------- */

/* Parse a positive decimal integer in [1, max]; the whole string. */
static bool parse_count(const char *p, size_t len, int64_t max, int64_t *out)
{
	if (!len || len > 12)
		return false;
	int64_t v = 0;
	for (size_t i = 0; i < len; i++) {
		if (!isdigit((unsigned char)p[i]))
			return false;
		v = v * 10 + (p[i] - '0');
	}
	if (v < 1 || v > max)
		return false;
	*out = v;
	return true;
}

/* vf_gpu_set_add_spec: a card given as NAME=MiB (spec[0..body)). */
static vf_status gpu_from_name_mib(const char *spec, size_t body, const char *eq, struct vf_gpu *g,
				   struct vf_error *err)
{
	size_t nlen = (size_t)(eq - spec);
	int64_t mib;
	if (!nlen)
		return vf_error_set(err, VF_EUSAGE, "--gpu %s: missing NAME before '='", spec);
	if (nlen >= sizeof g->name)
		return vf_error_set(err, VF_EUSAGE, "--gpu %s: NAME longer than %zu characters",
				    spec, sizeof g->name - 1);
	if (!parse_count(eq + 1, body - nlen - 1, INT64_C(1) << 24, &mib))
		return vf_error_set(err, VF_EUSAGE,
				    "--gpu %s: MiB after '=' must be a whole number of MiB "
				    "from 1 to %" PRId64,
				    spec, INT64_C(1) << 24);
	memcpy(g->name, spec, nlen);
	g->name[nlen] = '\0';
	g->memory_total_mib = mib;
	g->memory_free_mib = mib;
	g->memory_used_mib = 0;
	vf_gpu_identify(g);
	const struct vf_gpu_spec *c = g->catalog_id[0] ? vf_gpu_catalog_find(g->catalog_id) : NULL;
	if (c)
		snprintf(g->cc, sizeof g->cc, "%s", c->cc);
	return VF_OK;
}

/* vf_gpu_set_add_spec: a catalog card by id (spec[0..body)). */
static vf_status gpu_from_catalog(const char *spec, size_t body, struct vf_gpu *g, struct vf_error *err)
{
	char id[64];
	if (body >= sizeof id)
		return vf_error_set(err, VF_EUSAGE, "--gpu %s: unknown GPU id", spec);
	memcpy(id, spec, body);
	id[body] = '\0';
	struct vf_error lerr = {0};
	if (!vf_gpu_catalog(NULL, &lerr))
		return vf_error_set(err, lerr.code, "%s", lerr.msg);
	char hint[200];
	const struct vf_gpu_spec *c = vf_gpu_catalog_find_loose(id, hint, sizeof hint);
	if (!c) {
		return vf_error_set(err, VF_EUSAGE,
				    "--gpu %s: unknown GPU id '%s'%s (`vramfit gpus` lists "
				    "them; NAME=MiB gives any card)",
				    spec, id, hint);
	}
	snprintf(g->name, sizeof g->name, "%s", c->name);
	snprintf(g->catalog_id, sizeof g->catalog_id, "%s", c->id);
	snprintf(g->cc, sizeof g->cc, "%s", c->cc);
	g->memory_total_mib = c->memory_mib;
	g->memory_free_mib = c->memory_mib;
	g->memory_used_mib = 0;
	g->nominal_gb = c->nominal_gb;
	return VF_OK;
}

vf_status vf_gpu_set_add_spec(struct vf_gpu_set *s, const char *spec, struct vf_error *err)
{
	if (!spec || !*spec)
		return vf_error_set(err, VF_EUSAGE, "--gpu: empty GPU spec (expected ID, ID:N or "
						   "NAME=MiB)");
	size_t len = strlen(spec);
	if (len > 200)
		return vf_error_set(err, VF_EUSAGE, "--gpu: spec longer than 200 characters");
	/* Optional ":N" count at the end. */
	int64_t count = 1;
	size_t body = len;
	const char *colon = strrchr(spec, ':');
	if (colon) {
		body = (size_t)(colon - spec);
		if (!parse_count(colon + 1, len - body - 1, VF_GPU_MAX_COUNT, &count))
			return vf_error_set(err, VF_EUSAGE,
					    "--gpu %s: count after ':' must be a whole number from "
					    "1 to %d",
					    spec, VF_GPU_MAX_COUNT);
	}
	if (s->count + (size_t)count > VF_GPU_MAX_COUNT)
		return vf_error_set(err, VF_EUSAGE, "--gpu %s: more than %d GPUs in all", spec,
				    VF_GPU_MAX_COUNT);
	struct vf_gpu g;
	vf_gpu_init(&g);
	const char *eq = memchr(spec, '=', body);
	vf_status st = eq ? gpu_from_name_mib(spec, body, eq, &g, err)
			  : gpu_from_catalog(spec, body, &g, err);
	if (st)
		return st;
	for (int64_t i = 0; i < count; i++) {
		g.index = (int)s->count;
		st = vf_gpu_set_add(s, &g, err);
		if (st)
			return st;
	}
	s->source = VF_GPU_SIMULATED;
	return VF_OK;
}

/* --- probing ------------------------------------------------------------- */

vf_status vf_gpu_probe(struct vf_gpu_set *s, struct vf_error *err)
{
	vf_gpu_set_release(s);
	struct vf_error nerr = {0}, serr = {0};
	vf_status nst = vf__gpu_nvml_probe(s, &nerr);
	if (nst == VF_OK)
		goto found;
	/* NVML absent, disabled or failing: keep its reason, ask nvidia-smi. */
	vf_gpu_set_release(s);
	vf_status sst = vf__gpu_smi_probe(s, &serr);
	if (sst == VF_OK) {
		if (nerr.msg[0])
			vf_gpu_set_note(s, "NVML not used: %s", nerr.msg);
		goto found;
	}
	vf_gpu_set_release(s);
	if (sst != VF_ENOTFOUND) /* nvidia-smi ran and failed: its message is the clearest */
		return vf_error_set(err, sst, "%s", serr.msg);
	if (nst != VF_ENOTFOUND) /* no nvidia-smi to ask; NVML's failure stands */
		return vf_error_set(err, nst, "%s", nerr.msg);
	/* Neither found a GPU: not an error. Say why. */
	if (nerr.msg[0])
		vf_gpu_set_note(s, "NVML: %s", nerr.msg);
	if (serr.msg[0])
		vf_gpu_set_note(s, "%s", serr.msg);
	return VF_OK;
found:
	for (size_t i = 0; i < s->count; i++)
		vf_gpu_identify(&s->gpus[i]);
	vf_status st = vf__gpu_apply_visible(s, getenv("CUDA_VISIBLE_DEVICES"), err);
	if (st == VF_OK && s->count == 0)
		s->source = VF_GPU_NONE; /* nothing to report: "none", with the notes saying why */
	return st;
}
