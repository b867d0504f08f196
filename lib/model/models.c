/* models.c - the model catalog: every models/<name>.json data file (embedded or
 * overridden), entries read generically into one list.
 *
 * Loading parses every file and checks every entry's own fields (id,
 * aliases, name, kind, params, a config where the kind needs one, ids
 * unique); an entry's architecture (vf_arch_from_config, the costly part)
 * is read when the entry is first asked for: by vf_models_lookup /
 * vf_models_find, or for all of them by vf_models_list and
 * vf_models_load_all (the listing verbs). An entry whose config does not
 * read fails there with the error naming the file and the entry, every
 * time it is asked for; another entry is not held up by it. */
#include "vramfit/model/models.h"

#include <ctype.h>
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "vramfit/base/data.h"
#include "vramfit/base/json.h"

#include "models-internal.h"

#define MAX_FILES 64

static struct {
	bool loaded;
	struct vf_json_doc *roots[MAX_FILES]; /* the files' trees (entries point into them) */
	size_t nroots;
	struct vf_model_entry *entries;
	bool *built; /* entries[i]'s architecture read (build_entry) */
	size_t n;
} cat;

/* Serialises build_entry: entries are read on first use, possibly by two
 * threads at once. */
static pthread_mutex_t build_lock = PTHREAD_MUTEX_INITIALIZER;

void vf_models_release(void)
{
	for (size_t i = 0; i < cat.nroots; i++)
		vf_json_doc_free(cat.roots[i]);
	free(cat.entries);
	free(cat.built);
	memset(&cat, 0, sizeof cat);
}

static bool is_models_json(const char *name)
{
	size_t n = strlen(name);
	return strncmp(name, "models/", 7) == 0 && n > 12 && strcmp(name + n - 5, ".json") == 0 &&
	       !strchr(name + 7, '/');
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names "models/x.json": embedded ones plus those only present in an
 * override directory. Sorted, unique. */
static size_t file_names(char names[MAX_FILES][64])
{
	size_t n = 0;
	const char *e;
	for (size_t i = 0; (e = vf_data_embedded_name(i)) && n < MAX_FILES; i++)
		if (is_models_json(e) && strlen(e) < 64)
			snprintf(names[n++], 64, "%s", e);
	char dirs[2][4096];
	size_t nd = vf_data_override_dirs(dirs);
	for (size_t k = 0; k < nd; k++) {
		char sub[4200];
		snprintf(sub, sizeof sub, "%s/models", dirs[k]);
		DIR *dir = opendir(sub);
		if (!dir)
			continue;
		struct dirent *de;
		while ((de = readdir(dir)) && n < MAX_FILES) {
			char name[64];
			if (strlen(de->d_name) + 8 > sizeof name)
				continue;
			snprintf(name, sizeof name, "models/%s", de->d_name);
			if (!is_models_json(name))
				continue;
			bool dup = false;
			for (size_t i = 0; i < n; i++)
				dup = dup || strcmp(names[i], name) == 0;
			if (!dup)
				snprintf(names[n++], 64, "%s", name);
		}
		closedir(dir);
	}
	char *ptrs[MAX_FILES];
	char sorted[MAX_FILES][64];
	for (size_t i = 0; i < n; i++)
		ptrs[i] = names[i];
	qsort(ptrs, n, sizeof ptrs[0], cmp_str);
	for (size_t i = 0; i < n; i++)
		memcpy(sorted[i], ptrs[i], 64);
	memcpy(names, sorted, n * 64);
	return n;
}

/* snprintf(dst, n, "%s", src) without the formatting machinery (four an
 * entry, a fifth of the model catalog's load after parsing; issue 21) */
static void copy_str(char *dst, size_t n, const char *src)
{
	size_t len = strlen(src);
	if (len >= n)
		len = n - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

static vf_status read_entry(const cJSON *j, const char *file, size_t idx,
			    struct vf_model_entry *e, struct vf_error *err)
{
	memset(e, 0, sizeof *e);
	copy_str(e->file, sizeof e->file, file);
	e->raw = j;
	e->params = -1;
	vf_arch_init(&e->arch);
	if (!cJSON_IsObject(j))
		return vf_error_set(err, VF_ERR, "%s: models[%zu]: expected an object", file, idx);
	const char *id = vf_json_get_str(j, "id");
	if (!id || !*id || strlen(id) >= sizeof e->id)
		return vf_error_set(err, VF_ERR,
				    "%s: models[%zu]: field id: expected a string of 1 to %zu "
				    "characters",
				    file, idx, sizeof e->id - 1);
	for (const char *p = id; *p; p++)
		if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || strchr("-._", *p)))
			return vf_error_set(err, VF_ERR,
					    "%s: model %s: field id: expected lower-case letters, "
					    "digits, '-', '.', '_'",
					    file, id);
	copy_str(e->id, sizeof e->id, id);
	const cJSON *aliases = cJSON_GetObjectItemCaseSensitive(j, "aliases");
	if (aliases) {
		const cJSON *al;
		bool ok = cJSON_IsArray(aliases);
		cJSON_ArrayForEach(al, aliases) ok = ok && cJSON_IsString(al);
		if (!ok)
			return vf_error_set(err, VF_ERR,
					    "%s: model %s: field aliases: expected a list of strings",
					    file, id);
	}
	const char *name = vf_json_get_str(j, "name");
	copy_str(e->name, sizeof e->name, name ? name : id);
	const cJSON *kind = cJSON_GetObjectItemCaseSensitive(j, "kind");
	if (kind && !cJSON_IsString(kind))
		return vf_error_set(err, VF_ERR, "%s: model %s: field kind: expected a string", file,
				    id);
	copy_str(e->kind, sizeof e->kind, kind ? kind->valuestring : "llm");

	const cJSON *p = cJSON_GetObjectItemCaseSensitive(j, "params");
	if (p && !cJSON_IsNull(p)) {
		if (!vf_json_number_is_i64(p, &e->params) || e->params < 0)
			return vf_error_set(err, VF_ERR,
					    "%s: model %s: field params: expected a whole number >= 0 "
					    "or null",
					    file, id);
	}
	const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(j, "config");
	if ((!cfg || cJSON_IsNull(cfg)) && strcmp(e->kind, "llm") == 0)
		return vf_error_set(err, VF_ERR, "%s: model %s: field config: required for kind llm",
				    file, id);
	return VF_OK;
}

/* Read entry e's architecture from its "config" (read_entry checked the
 * rest): what makes has_arch, arch, has_groups, groups and a params left
 * to the config. */
static vf_status build_entry(struct vf_model_entry *e, struct vf_error *err)
{
	const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(e->raw, "config");
	if (!cfg || cJSON_IsNull(cfg))
		return VF_OK;
	char what[160];
	snprintf(what, sizeof what, "%s: model %s: config", e->file, e->id);
	vf_status st = vf_arch_from_config(cfg, what, &e->arch, err);
	/* other kinds may carry configs that are not a transformer's */
	if (st == VF_ENOTFOUND && strcmp(e->kind, "llm") != 0) {
		vf_error_clear(err);
		vf_arch_init(&e->arch);
		return VF_OK;
	}
	if (st != VF_OK) {
		vf_arch_init(&e->arch);
		return st;
	}
	snprintf(e->arch.source, sizeof e->arch.source, "catalog");
	e->has_arch = true;
	e->has_groups = vf_arch_param_groups(&e->arch, &e->groups);
	if (e->params < 0 && e->has_groups)
		e->params = e->groups.total;
	return VF_OK;
}

vf_status vf_models_ready(const struct vf_model_entry *e, struct vf_error *err)
{
	if (!e || !cat.entries || e < cat.entries || e >= cat.entries + cat.n)
		return vf_error_set(err, VF_ERR, "model catalog: not an entry of the loaded catalog");
	size_t i = (size_t)(e - cat.entries);
	pthread_mutex_lock(&build_lock);
	vf_status st = VF_OK;
	if (!cat.built[i]) {
		st = build_entry(&cat.entries[i], err);
		cat.built[i] = st == VF_OK;
	}
	pthread_mutex_unlock(&build_lock);
	return st;
}

/* File name's tree, kept in cat.roots; *list: its array of entries. */
static vf_status load_file(const char *name, const cJSON **list, struct vf_error *err)
{
	struct vf_json_doc *doc = NULL;
	char source[4200];
	vf_status st = vf_data_load_doc(name, &doc, source, sizeof source, err);
	if (st != VF_OK)
		return st;
	cat.roots[cat.nroots++] = doc;
	const cJSON *root = vf_json_doc_root(doc);
	*list = cJSON_IsArray(root) ? root : cJSON_GetObjectItemCaseSensitive(root, "models");
	if (!cJSON_IsArray(*list))
		return vf_error_set(err, VF_ERR, "%s: expected {\"models\": [...]} or an array",
				    source);
	return VF_OK;
}

/* The entries of file name's list appended to cat.entries (room made). */
static vf_status read_file_entries(const char *name, const cJSON *list, struct vf_error *err)
{
	size_t i = 0;
	const cJSON *j;
	cJSON_ArrayForEach(j, list)
	{
		struct vf_model_entry *e = &cat.entries[cat.n];
		vf_status st = read_entry(j, name, i++, e, err);
		if (st != VF_OK)
			return st;
		cat.built[cat.n] = false;
		for (size_t k = 0; k < cat.n; k++)
			if (strcasecmp(cat.entries[k].id, e->id) == 0)
				return vf_error_set(err, VF_ERR, "%s: model %s: id already used in %s",
						    name, e->id, cat.entries[k].file);
		cat.n++;
	}
	return VF_OK;
}

/* Every file's tree first, then room for all their entries at once (a
 * realloc per file copied the first files' entries, 1,128 bytes each: 13
 * page faults of every start that reads the catalog, issue 21), then the
 * entries. */
static vf_status load_files(struct vf_error *err)
{
	char names[MAX_FILES][64];
	const cJSON *lists[MAX_FILES];
	size_t n = file_names(names), total = 0;
	for (size_t i = 0; i < n; i++) {
		vf_status st = load_file(names[i], &lists[i], err);
		if (st != VF_OK)
			return st;
		total += (size_t)cJSON_GetArraySize(lists[i]);
	}
	cat.entries = malloc((total + 1) * sizeof *cat.entries);
	cat.built = malloc((total + 1) * sizeof *cat.built);
	if (!cat.entries || !cat.built)
		return vf_error_set(err, VF_ENOMEM, "model catalog: out of memory");
	for (size_t i = 0; i < n; i++) {
		vf_status st = read_file_entries(names[i], lists[i], err);
		if (st != VF_OK)
			return st;
	}
	return VF_OK;
}

vf_status vf_models_load(struct vf_error *err)
{
	if (cat.loaded)
		return VF_OK;
	vf_status st = load_files(err);
	if (st != VF_OK) {
		vf_models_release();
		return st;
	}
	cat.loaded = true;
	return VF_OK;
}

vf_status vf_models_load_all(struct vf_error *err)
{
	vf_status st = vf_models_load(err);
	for (size_t i = 0; st == VF_OK && i < cat.n; i++)
		st = vf_models_ready(&cat.entries[i], err);
	return st;
}

const struct vf_model_entry *vf__models_locate(const char *id)
{
	if (!id || vf_models_load(NULL) != VF_OK)
		return NULL;
	for (size_t i = 0; i < cat.n; i++)
		if (strcasecmp(cat.entries[i].id, id) == 0)
			return &cat.entries[i];
	for (size_t i = 0; i < cat.n; i++) {
		const cJSON *al;
		cJSON_ArrayForEach(al, cJSON_GetObjectItemCaseSensitive(cat.entries[i].raw, "aliases"))
			if (strcasecmp(al->valuestring, id) == 0)
				return &cat.entries[i];
	}
	return NULL;
}

const struct vf_model_entry *vf__models_entries(size_t *n)
{
	*n = 0;
	if (vf_models_load(NULL) != VF_OK)
		return NULL;
	*n = cat.n;
	return cat.entries;
}

vf_status vf_models_get(const char *id, const struct vf_model_entry **out,
			struct vf_error *err)
{
	*out = NULL;
	vf_status st = vf_models_load(err);
	if (st != VF_OK)
		return st;
	const struct vf_model_entry *e = vf__models_locate(id);
	if (e && (st = vf_models_ready(e, err)) != VF_OK)
		return st;
	*out = e;
	return VF_OK;
}

const struct vf_model_entry *vf_models_find(const char *id)
{
	const struct vf_model_entry *e = NULL;
	return vf_models_get(id, &e, NULL) == VF_OK ? e : NULL;
}

const struct vf_model_entry *vf_models_list(size_t *n)
{
	*n = 0;
	if (vf_models_load_all(NULL) != VF_OK)
		return NULL;
	*n = cat.n;
	return cat.entries;
}
