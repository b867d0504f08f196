/* check.c - the self-check of a trainer run config (see check.h). The key
 * names come from the profile's configs.json "keys", the known keys and
 * allowed values from schema.json; this file holds only the rule logic. */
#include "vramfit/trainer/check.h"
#include "vramfit/trainer/sbatch.h"
#include "vramfit/base/buf.h"
#include <unistd.h>

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "vramfit/base/json.h"
#include "vramfit/trainer/plan.h" /* vf_plan_is_url */
#include "vramfit/trainer/profile.h"

void vf_check_init(struct vf_check *c)
{
	memset(c, 0, sizeof *c);
}

void vf_check_release(struct vf_check *c)
{
	if (!c)
		return;
	free(c->items);
	memset(c, 0, sizeof *c);
}

static void add(struct vf_check *c, enum vf_check_level level, const char *key,
		const struct vf_yaml_node *n, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void add(struct vf_check *c, enum vf_check_level level, const char *key,
		const struct vf_yaml_node *n, const char *fmt, ...)
{
	if (c->n == c->alloc) {
		size_t na = c->alloc ? c->alloc * 2 : 16;
		struct vf_check_item *ni = realloc(c->items, na * sizeof *ni);
		if (!ni)
			return; /* an item lost to OOM still counts below */
		c->items = ni;
		c->alloc = na;
	}
	if (c->n < c->alloc) {
		struct vf_check_item *it = &c->items[c->n++];
		it->level = level;
		snprintf(it->key, sizeof it->key, "%s", key);
		it->line = vf_yaml_node_line(n);
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(it->rule, sizeof it->rule, fmt, ap);
		va_end(ap);
	}
	if (level == VF_CHECK_FAIL)
		c->failures++;
	else
		c->pending++;
}

void vf_check_add_line(struct vf_check *c, enum vf_check_level level, const char *key, size_t line,
		       const char *fmt, ...)
{
	char rule[384];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rule, sizeof rule, fmt, ap);
	va_end(ap);
	size_t n0 = c->n;
	add(c, level, key, NULL, "%s", rule);
	if (c->n > n0)
		c->items[c->n - 1].line = line;
}

/* The dotted key the profile gives for a role ("model_path"), or fallback. */
static const char *key_of(const cJSON *configs, const char *role, const char *fallback)
{
	const char *k = vf_json_get_str(cJSON_GetObjectItemCaseSensitive(configs, "keys"), role);
	return k ? k : fallback;
}

/* ---- paths -------------------------------------------------------------- */

static void check_path(const struct vf_yamldoc *doc, const char *key, bool want_dir, bool pending_ok,
		       struct vf_check *c)
{
	const struct vf_yaml_node *n = vf_yamldoc_find(doc, key);
	if (!n) {
		add(c, VF_CHECK_FAIL, key, NULL, "missing (a local %s path is required)",
		    want_dir ? "directory" : "file");
		return;
	}
	const char *p = vf_yaml_node_kind(n) == VF_YAML_STR ? vf_yaml_node_str(n) : NULL;
	if (!p || !*p) {
		add(c, VF_CHECK_FAIL, key, n, "expected a path, found %s",
		    vf_yaml_kind_name(vf_yaml_node_kind(n)));
		return;
	}
	if (vf_plan_is_url(p)) {
		add(c, VF_CHECK_FAIL, key, n, "'%s' is a URL; the trainer needs a local path", p);
		return;
	}
	struct stat st;
	if (stat(p, &st) != 0) {
		if (pending_ok)
			add(c, VF_CHECK_PENDING, key, n,
			    "%s does not exist yet (pending preprocessing of the dataset)", p);
		else
			add(c, VF_CHECK_FAIL, key, n, "%s does not exist", p);
		return;
	}
	if (want_dir && !S_ISDIR(st.st_mode))
		add(c, VF_CHECK_FAIL, key, n, "%s is not a directory", p);
	else if (!want_dir && !S_ISREG(st.st_mode))
		add(c, VF_CHECK_FAIL, key, n, "%s is not a regular file", p);
}

/* ---- workflow rules ------------------------------------------------------ */

static void check_dims(const struct vf_yamldoc *doc, const cJSON *configs, struct vf_check *c)
{
	const char *key = key_of(configs, "video_dims", "validation.video_dims");
	const cJSON *vd = cJSON_GetObjectItemCaseSensitive(configs, "video_dims");
	int64_t mult = 32, mod = 8, rem = 1;
	vf_json_get_i64(vd, "multiple", &mult);
	vf_json_get_i64(vd, "frames_mod", &mod);
	vf_json_get_i64(vd, "frames_rem", &rem);
	if (mult <= 0 || mod <= 0)
		return;
	const struct vf_yaml_node *n = vf_yamldoc_find(doc, key);
	if (!n)
		return; /* the trainer's default applies */
	int64_t v[3];
	if (vf_yaml_node_kind(n) != VF_YAML_SEQ || vf_yaml_node_count(n) != 3 ||
	    !vf_yaml_node_int(vf_yaml_node_child(n, 0), &v[0]) ||
	    !vf_yaml_node_int(vf_yaml_node_child(n, 1), &v[1]) ||
	    !vf_yaml_node_int(vf_yaml_node_child(n, 2), &v[2])) {
		add(c, VF_CHECK_FAIL, key, n, "expected [width, height, frames] as three integers");
		return;
	}
	if (v[0] <= 0 || v[0] % mult)
		add(c, VF_CHECK_FAIL, key, n, "width %lld is not a positive multiple of %lld",
		    (long long)v[0], (long long)mult);
	if (v[1] <= 0 || v[1] % mult)
		add(c, VF_CHECK_FAIL, key, n, "height %lld is not a positive multiple of %lld",
		    (long long)v[1], (long long)mult);
	if (v[2] <= 0 || v[2] % mod != rem)
		add(c, VF_CHECK_FAIL, key, n, "frames %lld: frames %% %lld must be %lld (e.g. 49, 89, 121)",
		    (long long)v[2], (long long)mod, (long long)rem);
}

static void check_generated(const struct vf_yamldoc *doc, const cJSON *configs, struct vf_check *c)
{
	const char *kv = key_of(configs, "video_generated", "training_strategy.video.is_generated");
	const char *ka = key_of(configs, "audio_generated", "training_strategy.audio.is_generated");
	bool v = false, a = false;
	const struct vf_yaml_node *nv = vf_yamldoc_find(doc, kv), *na = vf_yamldoc_find(doc, ka);
	bool hv = vf_yaml_node_bool(nv, &v), ha = vf_yaml_node_bool(na, &a);
	if (!hv && !ha)
		return; /* neither set: the strategy's defaults apply */
	if (!v && !a)
		add(c, VF_CHECK_FAIL, kv, nv ? nv : na,
		    "neither video (%s) nor audio (%s) is generated: at least one must be true", kv, ka);
}

static void check_mode(const struct vf_yamldoc *doc, const cJSON *configs, struct vf_check *c)
{
	const char *km = key_of(configs, "training_mode", "model.training_mode");
	const struct vf_yaml_node *m = vf_yamldoc_find(doc, km);
	const char *mode = vf_yaml_node_kind(m) == VF_YAML_STR ? vf_yaml_node_str(m) : "lora";
	if (!m)
		mode = "lora";
	if (strcmp(mode, "lora") == 0) {
		const struct vf_yaml_node *l = vf_yamldoc_find(doc, "lora");
		if (!l || vf_yaml_node_kind(l) != VF_YAML_MAP)
			add(c, VF_CHECK_FAIL, "lora", l ? l : m,
			    "%s is \"lora\" but the lora block (rank, alpha, target_modules) is missing",
			    km);
	} else if (strcmp(mode, "full") == 0) {
		const char *kq = key_of(configs, "quantization", "acceleration.quantization");
		const struct vf_yaml_node *q = vf_yamldoc_find(doc, kq);
		if (q && vf_yaml_node_kind(q) != VF_YAML_NULL)
			add(c, VF_CHECK_FAIL, kq, q,
			    "quantization is not supported with full training (%s: \"full\"); set it to null",
			    km);
	}
}

/* ---- schema -------------------------------------------------------------- */

static bool type_ok(enum vf_yaml_kind k, const char *t)
{
	switch (k) {
	case VF_YAML_NULL: return strcmp(t, "null") == 0;
	case VF_YAML_BOOL: return strcmp(t, "boolean") == 0;
	case VF_YAML_INT: return strcmp(t, "integer") == 0 || strcmp(t, "number") == 0;
	case VF_YAML_FLOAT: return strcmp(t, "number") == 0;
	case VF_YAML_STR: return strcmp(t, "string") == 0;
	case VF_YAML_SEQ: return strcmp(t, "sequence") == 0;
	case VF_YAML_MAP: return strcmp(t, "mapping") == 0;
	}
	return false;
}

/* True when kind matches spec's "type" (a string or a list). Writes the
 * expected types to want. */
static bool types_match(const cJSON *type, enum vf_yaml_kind k, char *want, size_t wn)
{
	want[0] = '\0';
	if (cJSON_IsString(type)) {
		snprintf(want, wn, "%s", type->valuestring);
		return type_ok(k, type->valuestring);
	}
	if (!cJSON_IsArray(type))
		return true;
	bool ok = false;
	const cJSON *t;
	cJSON_ArrayForEach(t, type)
	{
		if (!cJSON_IsString(t))
			continue;
		size_t l = strlen(want);
		snprintf(want + l, wn - l, "%s%s", l ? " or " : "", t->valuestring);
		ok = ok || type_ok(k, t->valuestring);
	}
	return ok;
}

static void enum_list(const cJSON *en, char *out, size_t n)
{
	out[0] = '\0';
	const cJSON *e;
	cJSON_ArrayForEach(e, en)
	{
		size_t l = strlen(out);
		snprintf(out + l, n - l, "%s%s", l ? ", " : "", cJSON_IsString(e) ? e->valuestring : "null");
	}
}

static void check_value(const struct vf_yaml_node *n, const char *path, const cJSON *spec,
			struct vf_check *c)
{
	enum vf_yaml_kind k = vf_yaml_node_kind(n);
	char want[128];
	if (!types_match(cJSON_GetObjectItemCaseSensitive(spec, "type"), k, want, sizeof want)) {
		add(c, VF_CHECK_FAIL, path, n, "expected %s, found %s", want, vf_yaml_kind_name(k));
		return;
	}
	const cJSON *en = cJSON_GetObjectItemCaseSensitive(spec, "enum");
	if (cJSON_IsArray(en) && k != VF_YAML_SEQ && k != VF_YAML_MAP) {
		cJSON *v = vf_yaml_node_to_json(n);
		bool found = false;
		const cJSON *e;
		cJSON_ArrayForEach(e, en) found = found || (v && cJSON_Compare(v, e, true));
		cJSON_Delete(v);
		if (!found) {
			char list[256];
			enum_list(en, list, sizeof list);
			add(c, VF_CHECK_FAIL, path, n, "'%s' is not an allowed value (allowed: %s)",
			    k == VF_YAML_NULL ? "null" : vf_yaml_node_str(n), list);
		}
	}
	double d, lim;
	if ((k == VF_YAML_INT || k == VF_YAML_FLOAT) && vf_yaml_node_double(n, &d)) {
		if (vf_json_get_double(spec, "min", &lim) && !(d >= lim))
			add(c, VF_CHECK_FAIL, path, n, "%s is below the minimum %g", vf_yaml_node_str(n), lim);
		if (vf_json_get_double(spec, "max", &lim) && !(d <= lim))
			add(c, VF_CHECK_FAIL, path, n, "%s is above the maximum %g", vf_yaml_node_str(n), lim);
	}
	if (k == VF_YAML_SEQ) {
		int64_t len;
		if (vf_json_get_i64(spec, "length", &len) && (int64_t)vf_yaml_node_count(n) != len)
			add(c, VF_CHECK_FAIL, path, n, "expected %lld elements, found %zu", (long long)len,
			    vf_yaml_node_count(n));
		const char *it = vf_json_get_str(spec, "items");
		for (size_t i = 0; it && i < vf_yaml_node_count(n); i++) {
			const struct vf_yaml_node *e = vf_yaml_node_child(n, i);
			if (!type_ok(vf_yaml_node_kind(e), it)) {
				add(c, VF_CHECK_FAIL, path, e, "element %zu: expected %s, found %s", i, it,
				    vf_yaml_kind_name(vf_yaml_node_kind(e)));
				break;
			}
		}
	}
}

static void check_schema(const struct vf_yaml_node *map, const char *prefix, const cJSON *keys,
			 struct vf_check *c, int depth)
{
	if (depth > 16)
		return;
	for (size_t i = 0; i < vf_yaml_node_count(map); i++) {
		const char *k = vf_yaml_node_key(map, i);
		const struct vf_yaml_node *v = vf_yaml_node_child(map, i);
		char path[512];
		snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "." : "", k ? k : "?");
		const cJSON *spec = k ? cJSON_GetObjectItemCaseSensitive(keys, path) : NULL;
		if (!spec) {
			add(c, VF_CHECK_FAIL, path, v,
			    "unknown key: the trainer's schema forbids keys it does not define");
			continue;
		}
		check_value(v, path, spec, c);
		if (vf_yaml_node_kind(v) == VF_YAML_MAP &&
		    !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(spec, "open")))
			check_schema(v, path, keys, c, depth + 1);
	}
}

vf_status vf_check_config(const struct vf_yamldoc *doc, const char *trainer, struct vf_check *out,
			  struct vf_error *err)
{
	cJSON *configs = NULL, *schema = NULL;
	vf_status st = vf_profile_part(trainer, "configs", &configs, err);
	if (st == VF_OK)
		st = vf_profile_part(trainer, "schema", &schema, err);
	if (st != VF_OK) {
		cJSON_Delete(configs);
		return st;
	}
	snprintf(out->config, sizeof out->config, "%s", vf_yamldoc_name(doc));
	const struct vf_yaml_node *root = vf_yamldoc_root(doc);
	if (vf_yaml_node_kind(root) != VF_YAML_MAP || !root) {
		add(out, VF_CHECK_FAIL, "(document)", root, "expected a mapping of settings");
	} else {
		check_path(doc, key_of(configs, "model_path", "model.model_path"), false, false, out);
		check_path(doc, key_of(configs, "text_encoder_path", "model.text_encoder_path"), true, false,
			   out);
		check_path(doc, key_of(configs, "data_root", "data.preprocessed_data_root"), true, true, out);
		check_dims(doc, configs, out);
		check_generated(doc, configs, out);
		check_mode(doc, configs, out);
		check_schema(root, "", cJSON_GetObjectItemCaseSensitive(schema, "keys"), out, 0);
	}
	cJSON_Delete(configs);
	cJSON_Delete(schema);
	return VF_OK;
}

vf_status vf_check_run(const char *run_dir, const char *trainer, struct vf_check *out,
		       struct vf_error *err)
{
	struct stat sb;
	if (stat(run_dir, &sb) == 0 && !S_ISDIR(sb.st_mode))
		return vf_error_set(err, VF_ERR,
				    "%s: not a directory (expected a run directory; a config file "
				    "is checked with --config FILE)",
				    run_dir);
	cJSON *configs = NULL;
	vf_status st = vf_profile_part(trainer, "configs", &configs, err);
	if (st != VF_OK)
		return st;
	const char *name = vf_json_get_str(cJSON_GetObjectItemCaseSensitive(configs, "run_files"), "config");
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", run_dir, name ? name : "config.yaml");
	cJSON_Delete(configs);
	struct vf_yamldoc *doc = NULL;
	st = vf_yamldoc_load_file(path, &doc, err);
	if (st == VF_ENOTFOUND)
		return vf_error_set(err, VF_ENOTFOUND, "%s: no run config here (is %s a run directory?)",
				    path, run_dir);
	if (st != VF_OK)
		return st;
	st = vf_check_config(doc, trainer, out, err);
	vf_yamldoc_free(doc);
	/* The Slurm launch script, when plan --slurm wrote one. */
	snprintf(path, sizeof path, "%s/launch.sbatch", run_dir);
	struct vf_buf b;
	vf_buf_init(&b, VF_SBATCH_MAX_BYTES);
	char abs[PATH_MAX];
	if (st == VF_OK && vf_buf_read_file(&b, path, VF_SBATCH_MAX_BYTES, NULL) == VF_OK)
		vf_sbatch_check_text(b.data ? b.data : "", b.len, realpath(run_dir, abs) ? abs : run_dir, out);
	else if (st == VF_OK && access(path, F_OK) == 0)
		vf_check_add_line(out, VF_CHECK_FAIL, "launch.sbatch", 0, "%s: unreadable or larger than %u bytes",
				  path, VF_SBATCH_MAX_BYTES);
	vf_buf_release(&b);
	return st;
}

cJSON *vf_check_to_json(const struct vf_check *c)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "config", c->config);
	cJSON_AddBoolToObject(o, "ok", c->failures == 0);
	cJSON_AddNumberToObject(o, "failures", (double)c->failures);
	cJSON_AddNumberToObject(o, "pending", (double)c->pending);
	cJSON *a = cJSON_AddArrayToObject(o, "items");
	for (size_t i = 0; i < c->n; i++) {
		cJSON *it = cJSON_CreateObject();
		cJSON_AddStringToObject(it, "level", c->items[i].level == VF_CHECK_FAIL ? "fail" : "pending");
		cJSON_AddStringToObject(it, "key", c->items[i].key);
		vf_json_add_i64_or_null(it, "line", (int64_t)c->items[i].line, c->items[i].line > 0);
		cJSON_AddStringToObject(it, "rule", c->items[i].rule);
		cJSON_AddItemToArray(a, it);
	}
	return o;
}
