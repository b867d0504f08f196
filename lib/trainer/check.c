/* check.c - the self-check of a trainer run config (see check.h). The key
 * names and documented rules come from the profile's configs.json; the
 * schema (known keys, types, allowed values) is read from the trainer
 * checkout by schema.c and walked by check_schema.c. */
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
#include <unistd.h>

#include "vramfit/base/json.h"
#include "vramfit/trainer/plan.h" /* vf_plan_is_url */
#include "vramfit/trainer/profile.h"
#include "vramfit/trainer/checkout.h"
#include "check_internal.h"

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

#define add vf__check_add

void vf__check_add(struct vf_check *c, enum vf_check_level level, const char *key,
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
	else if (level == VF_CHECK_PENDING)
		c->pending++;
	else
		c->unchecked++;
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

/* Where the trainer finds path p: the trainer runs in its checkout (plan's
 * and tune's commands cd there first), so a relative path is read from the
 * trainer directory, not from where vramfit runs; without a checkout found,
 * from the working directory. *rel: p was relative and resolved there. */
static const char *trainer_path(const struct vf_check *c, const char *p, char *buf, size_t n,
				bool *rel)
{
	*rel = p[0] != '/' && c->trainer_dir[0];
	if (!*rel)
		return p;
	if ((size_t)snprintf(buf, n, "%s/%s", c->trainer_dir, p) >= n)
		return p;
	return buf;
}

/* " (relative: read from the trainer directory DIR, where the trainer runs)" */
static const char *rel_note(const struct vf_check *c, bool rel, char *buf, size_t n)
{
	if (!rel)
		return "";
	snprintf(buf, n, " (a relative path: the trainer reads it from its directory %s, where it runs)",
		 c->trainer_dir);
	return buf;
}

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
	char buf[PATH_MAX], note[PATH_MAX + 96];
	bool rel;
	const char *at = trainer_path(c, p, buf, sizeof buf, &rel);
	const char *why = rel_note(c, rel, note, sizeof note);
	if (stat(at, &st) != 0) {
		if (pending_ok)
			add(c, VF_CHECK_PENDING, key, n,
			    "%s does not exist yet (pending preprocessing of the dataset)%s", p, why);
		else
			add(c, VF_CHECK_FAIL, key, n, "%s does not exist%s", p, why);
		return;
	}
	if (want_dir && !S_ISDIR(st.st_mode))
		add(c, VF_CHECK_FAIL, key, n, "%s is not a directory%s", p, why);
	else if (!want_dir && !S_ISREG(st.st_mode))
		add(c, VF_CHECK_FAIL, key, n, "%s is not a regular file%s", p, why);
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
		bool set = vf_yaml_node_kind(m) == VF_YAML_STR; /* else the trainer's default */
		if (!l || vf_yaml_node_kind(l) != VF_YAML_MAP)
			add(c, VF_CHECK_FAIL, "lora", l ? l : m,
			    "%s %s but the lora block (rank, alpha, target_modules) is missing", km,
			    set ? "is \"lora\"" : "is not set (the trainer's default: \"lora\")");
	} else if (strcmp(mode, "full") == 0) {
		const char *kq = key_of(configs, "quantization", "acceleration.quantization");
		const struct vf_yaml_node *q = vf_yamldoc_find(doc, kq);
		if (q && vf_yaml_node_kind(q) != VF_YAML_NULL)
			add(c, VF_CHECK_FAIL, kq, q,
			    "quantization is not supported with full training (%s: \"full\"); set it to null",
			    km);
	}
}

/* ---- the trainer checkout -------------------------------------------------- */

static bool is_dir(const char *p)
{
	struct stat st;
	return p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The trainer directory: given, $LTX_TRAINER_DIR, or a profile candidate
 * (relative to the working directory) that has the schema file. */
static bool find_trainer(const char *given, const cJSON *configs, const char *schema_file, char *out, size_t n)
{
	const cJSON *td = cJSON_GetObjectItemCaseSensitive(configs, "trainer_dir"), *cand;
	const char *env = getenv(vf_json_get_str(td, "env") ? vf_json_get_str(td, "env") : "LTX_TRAINER_DIR");
	if (given || (env && *env)) {
		snprintf(out, n, "%s", given ? given : env);
		return true;
	}
	cJSON_ArrayForEach(cand, cJSON_GetObjectItemCaseSensitive(td, "candidates"))
	{
		char f[1400];
		if (!cJSON_IsString(cand))
			continue;
		snprintf(f, sizeof f, "%s/%s", cand->valuestring, schema_file);
		if (access(f, R_OK) == 0) {
			snprintf(out, n, "%s", cand->valuestring);
			return true;
		}
	}
	return false;
}

/* Read the schema from the checkout; NULL (with out->schema_note) when not. */
static struct vf_schema *load_schema(const char *given, const cJSON *configs, struct vf_check *out)
{
	const cJSON *sc = cJSON_GetObjectItemCaseSensitive(configs, "schema");
	const char *file = vf_json_get_str(sc, "file"), *cls = vf_json_get_str(sc, "class");
	if (!file || !cls) {
		snprintf(out->schema_note, sizeof out->schema_note, "the trainer profile names no schema source");
		return NULL;
	}
	if (!find_trainer(given, configs, file, out->trainer_dir, sizeof out->trainer_dir)) {
		snprintf(out->schema_note, sizeof out->schema_note,
			 "no trainer checkout found (--trainer-dir DIR or $LTX_TRAINER_DIR)");
		return NULL;
	}
	vf_checkout_version(out->trainer_dir, out->trainer_version, sizeof out->trainer_version);
	struct vf_schema *s = NULL;
	struct vf_error e = {0};
	if (vf_schema_load(out->trainer_dir, file, cls, &s, &e) != VF_OK) {
		snprintf(out->schema_note, sizeof out->schema_note, "%s", e.msg);
		/* the trainer cannot import its own config module: it will fail */
		if (vf_schema_cannot_import(e.msg))
			add(out, VF_CHECK_FAIL, "(schema)", NULL, "the trainer's %s: the trainer cannot start", e.msg);
		return NULL;
	}
	snprintf(out->schema_file, sizeof out->schema_file, "%s", file);
	vf_schema_stats(s, &out->schema_models, &out->schema_fields, &out->schema_files);
	return s;
}

/* Drift: every key the profile names must still exist in the schema
 * (its resume key too: vramfit run writes it before a resume). */
static void check_profile_keys(const cJSON *configs, const struct vf_schema *s, struct vf_check *c)
{
	static const char *const parts[] = {"keys", "patched_paths", NULL};
	for (int p = 0; parts[p]; p++) {
		const cJSON *e;
		cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(configs, parts[p]))
		{
			const char *key = p == 0 ? (cJSON_IsString(e) ? e->valuestring : NULL) : e->string;
			if (key && !vf_schema_has_path(s, key))
				add(c, VF_CHECK_UNCHECKED, key, NULL,
				    "not checked: the trainer profile (configs.json %s) names this key, but the "
				    "trainer's schema has no such field: vramfit's rule for it is not applied",
				    parts[p]);
		}
	}
	const char *rk = vf_json_get_str(cJSON_GetObjectItemCaseSensitive(configs, "checkpoints"), "resume_key");
	if (rk && !vf_schema_has_path(s, rk))
		add(c, VF_CHECK_UNCHECKED, rk, NULL,
		    "not checked: the trainer profile (configs.json checkpoints.resume_key) names this key as the "
		    "trainer's resume key, but the trainer's schema has no such field: vramfit run cannot resume "
		    "this trainer from a checkpoint");
}

/* ---- mode data -------------------------------------------------------------- */

/* Each directory the config's strategy reads under the data root. */
static void check_data_dirs(const struct vf_yamldoc *doc, const cJSON *configs, struct vf_check *c)
{
	const char *kroot = key_of(configs, "data_root", "data.preprocessed_data_root");
	const char *root = NULL;
	if (vf_yamldoc_get_str(doc, kroot, &root, NULL) != VF_OK || !root || !*root)
		return;
	struct vf_found_value d[16];
	size_t n = vf_checkout_data_dirs(doc, configs, d, 16);
	char buf[PATH_MAX];
	bool rel;
	const char *at = trainer_path(c, root, buf, sizeof buf, &rel);
	for (size_t i = 0; i < n; i++) {
		char path[1400], full[PATH_MAX + 256], note[PATH_MAX + 96];
		snprintf(path, sizeof path, "%s/%s", root, d[i].value);
		snprintf(full, sizeof full, "%s/%s", at, d[i].value);
		if (!is_dir(full))
			add(c, VF_CHECK_PENDING, d[i].node ? d[i].key : kroot, d[i].node,
			    "%s does not exist yet: the training strategy reads it (pending preprocessing of the "
			    "dataset)%s", path, rel_note(c, rel, note, sizeof note));
	}
}

/* Media the validation samples name (reference videos, images, audio). */
static void check_validation_media(const struct vf_yamldoc *doc, const cJSON *configs, struct vf_check *c)
{
	const cJSON *e;
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(configs, "validation_media"))
	{
		struct vf_found_value f[16];
		size_t n = cJSON_IsString(e) ? vf_checkout_collect(doc, e->valuestring, f, 16) : 0;
		for (size_t i = 0; i < n; i++) {
			char buf[PATH_MAX];
			bool rel;
			if (access(trainer_path(c, f[i].value, buf, sizeof buf, &rel), F_OK) != 0)
				add(c, VF_CHECK_PENDING, f[i].key, f[i].node,
				    "%s does not exist yet: validation reads it (put your own media there before "
				    "launch)", f[i].value);
		}
	}
}

static void check_model_paths(const struct vf_yamldoc *doc, const cJSON *configs, struct vf_check *c)
{
	check_path(doc, key_of(configs, "model_path", "model.model_path"), false, false, c);
	const char *kte = key_of(configs, "text_encoder_path", "model.text_encoder_path");
	const char *te = NULL;
	char buf[PATH_MAX];
	bool rel;
	bool packed = vf_yamldoc_get_str(doc, kte, &te, NULL) == VF_OK && te &&
		      !is_dir(trainer_path(c, te, buf, sizeof buf, &rel)) && strstr(te, ".safetensors");
	check_path(doc, kte, !packed, false, c);
	const char *comps[] = {"video_vae_path", "audio_vae_path", NULL};
	for (int i = 0; comps[i]; i++) {
		const char *k = key_of(configs, comps[i], NULL);
		const struct vf_yaml_node *n = k ? vf_yamldoc_find(doc, k) : NULL;
		if (n && vf_yaml_node_kind(n) != VF_YAML_NULL)
			check_path(doc, k, false, false, c);
	}
}

vf_status vf_check_config(const struct vf_yamldoc *doc, const char *trainer, const char *trainer_dir,
			  struct vf_check *out, struct vf_error *err)
{
	cJSON *configs = NULL;
	vf_status st = vf_profile_part(trainer, "configs", &configs, err);
	if (st != VF_OK)
		return st;
	snprintf(out->config, sizeof out->config, "%s", vf_yamldoc_name(doc));
	struct vf_schema *schema = load_schema(trainer_dir, configs, out);
	const struct vf_yaml_node *root = vf_yamldoc_root(doc);
	if (vf_yaml_node_kind(root) != VF_YAML_MAP || !root) {
		add(out, VF_CHECK_FAIL, "(document)", root, "expected a mapping of settings");
	} else {
		check_model_paths(doc, configs, out);
		check_path(doc, key_of(configs, "data_root", "data.preprocessed_data_root"), true, true, out);
		check_data_dirs(doc, configs, out);
		check_validation_media(doc, configs, out);
		check_dims(doc, configs, out);
		check_generated(doc, configs, out);
		check_mode(doc, configs, out);
		size_t from = out->n;
		if (schema) {
			vf__check_schema(root, schema, out);
		} else if (!vf_schema_cannot_import(out->schema_note)) {
			add(out, VF_CHECK_UNCHECKED, "(schema)", NULL,
			    "not checked: keys and values against the trainer's schema: %s", out->schema_note);
		}
		size_t to = out->n;
		if (schema)
			check_profile_keys(configs, schema, out);
		if (!vf_schema_cannot_import(out->schema_note))
			vf__check_python(doc, configs, trainer, from, to, out);
		else
			snprintf(out->checked_by, sizeof out->checked_by, "checked statically (%s)",
				 "the trainer cannot import its config module");
	}
	vf_schema_free(schema);
	cJSON_Delete(configs);
	return VF_OK;
}

vf_status vf_check_run(const char *run_dir, const char *trainer, const char *trainer_dir,
		       struct vf_check *out, struct vf_error *err)
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
	st = vf_check_config(doc, trainer, trainer_dir, out, err);
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
	cJSON_AddNumberToObject(o, "unchecked", (double)c->unchecked);
	cJSON *t = cJSON_AddObjectToObject(o, "trainer");
	cJSON_AddStringToObject(t, "dir", c->trainer_dir);
	cJSON_AddStringToObject(t, "version", c->trainer_version);
	cJSON_AddStringToObject(t, "schema", c->schema_file);
	cJSON_AddNumberToObject(t, "models", (double)c->schema_models);
	cJSON_AddNumberToObject(t, "fields", (double)c->schema_fields);
	cJSON_AddNumberToObject(t, "files", (double)c->schema_files);
	cJSON_AddStringToObject(t, "note", c->schema_note);
	cJSON_AddBoolToObject(t, "validated", c->trainer_validated);
	cJSON_AddStringToObject(t, "validate_note", c->trainer_validate_note);
	cJSON_AddStringToObject(t, "checked_by", c->python_checked ? "python" : "static");
	cJSON_AddStringToObject(t, "checked_by_text", c->checked_by);
	cJSON_AddStringToObject(t, "python_note", c->python_note);
	cJSON *a = cJSON_AddArrayToObject(o, "items");
	for (size_t i = 0; i < c->n; i++) {
		cJSON *it = cJSON_CreateObject();
		cJSON_AddStringToObject(it, "level", c->items[i].level == VF_CHECK_FAIL      ? "fail"
					: c->items[i].level == VF_CHECK_PENDING ? "pending"
										: "unchecked");
		cJSON_AddStringToObject(it, "key", c->items[i].key);
		vf_json_add_i64_or_null(it, "line", (int64_t)c->items[i].line, c->items[i].line > 0);
		cJSON_AddStringToObject(it, "rule", c->items[i].rule);
		cJSON_AddItemToArray(a, it);
	}
	return o;
}
