/* model.c - resolve a model (catalog id, config.json, safetensors file,
 * sharded index, HF / PEFT / diffusers directory) into the inspect result:
 * files, tensors, parameters, bytes, dtypes, architecture, parameter
 * groups, components and adapter. Reads headers only. */
#include "vramfit/model.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "vramfit/json.h"

#define MAX_CONFIG (16u << 20)  /* config.json, adapter_config.json, index */
#define MAX_COMPONENTS 32
#define MAX_SHARDS 100000

static struct vf_model *model_new(const char *path, struct vf_error *err)
{
	struct vf_model *m = calloc(1, sizeof *m);
	if (m)
		m->path = strdup(path);
	if (!m || !m->path) {
		free(m);
		vf_error_set(err, VF_ENOMEM, "%s: out of memory", path);
		return NULL;
	}
	m->files = m->tensors = m->params = m->bytes = -1;
	m->adapter.rank = -1;
	m->adapter.alpha = -1;
	vf_arch_init(&m->arch);
	return m;
}

void vf_model_free(struct vf_model *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->ncomponents; i++)
		vf_model_free(m->components[i]);
	free(m->components);
	for (size_t i = 0; i < m->adapter.ntargets; i++)
		free(m->adapter.targets[i]);
	free(m->adapter.targets);
	cJSON_Delete(m->metadata);
	free(m->path);
	free(m);
}

static void set_groups_from_arch(struct vf_model *m)
{
	if (m->has_arch && vf_arch_param_groups(&m->arch, &m->groups)) {
		m->has_groups = true;
		snprintf(m->groups_source, sizeof m->groups_source, "architecture");
	}
}

/* ---- catalog ids and config.json --------------------------------------- */

static vf_status load_catalog(const struct vf_model_entry *e, struct vf_model *m)
{
	snprintf(m->format, sizeof m->format, "catalog");
	snprintf(m->name, sizeof m->name, "%s", e->id);
	m->entry = e;
	m->params = e->params;
	if (e->has_arch) {
		m->has_arch = true;
		m->arch = e->arch;
	}
	if (e->has_groups) {
		m->has_groups = true;
		m->groups = e->groups;
		snprintf(m->groups_source, sizeof m->groups_source, "architecture");
	}
	return VF_OK;
}

static vf_status read_config(const char *path, struct vf_arch *a, struct vf_error *err)
{
	cJSON *cfg = NULL;
	vf_status st = vf_json_parse_file(path, MAX_CONFIG, &cfg, err);
	if (st == VF_OK)
		st = vf_arch_from_config(cfg, path, a, err);
	cJSON_Delete(cfg);
	return st;
}

static vf_status load_config_file(const char *path, struct vf_model *m, struct vf_error *err)
{
	snprintf(m->format, sizeof m->format, "config");
	vf_status st = read_config(path, &m->arch, err);
	if (st != VF_OK)
		return st;
	m->has_arch = true;
	set_groups_from_arch(m);
	if (m->has_groups)
		m->params = m->groups.total;
	return VF_OK;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

vf_status vf_model_load(const char *id_or_path, struct vf_model **out, struct vf_error *err)
{
	*out = NULL;
	if (!id_or_path || !*id_or_path)
		return vf_error_set(err, VF_EUSAGE, "no model given (a catalog id, file or directory)");
	struct vf_model *m = model_new(id_or_path, err);
	if (!m)
		return VF_ENOMEM;
	vf_status st;
	struct stat sb;
	if (stat(id_or_path, &sb) != 0) {
		int e = errno;
		if (e == ENOENT && !strchr(id_or_path, '/')) {
			vf_status lst = vf_models_load(err);
			if (lst != VF_OK) {
				vf_model_free(m);
				return lst;
			}
			const struct vf_model_entry *ent = vf_models_find(id_or_path);
			if (ent) {
				load_catalog(ent, m);
				*out = m;
				return VF_OK;
			}
			vf_model_free(m);
			return vf_error_set(err, VF_ENOTFOUND,
					    "%s: no such file, directory or catalog model (see "
					    "'vramfit models')",
					    id_or_path);
		}
		vf_model_free(m);
		return vf_error_set(err, e == ENOENT ? VF_ENOTFOUND : VF_ERR, "%s: %s", id_or_path,
				    e == ELOOP ? "symlink loop (too many levels of symbolic links)"
					       : strerror(e));
	}
	if (S_ISREG(sb.st_mode) && ends_with(id_or_path, ".json")) {
		st = load_config_file(id_or_path, m, err);
	} else {
		st = vf_error_set(err, VF_ERR,
				  "%s: not a model (expected a catalog id or a config.json)",
				  id_or_path);
	}
	if (st != VF_OK) {
		vf_model_free(m);
		return st;
	}
	*out = m;
	return VF_OK;
}

/* ---- JSON -------------------------------------------------------------- */

static cJSON *groups_json(const struct vf_param_groups *g)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "embedding", (double)g->embedding);
	cJSON_AddNumberToObject(o, "attention", (double)g->attention);
	cJSON_AddNumberToObject(o, "mlp", (double)g->mlp);
	cJSON_AddNumberToObject(o, "norm", (double)g->norm);
	cJSON_AddNumberToObject(o, "experts", (double)g->experts);
	cJSON_AddNumberToObject(o, "other", (double)g->other);
	return o;
}

cJSON *vf_model_to_json(const struct vf_model *m)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	if (m->name[0])
		cJSON_AddStringToObject(o, m->entry ? "id" : "name", m->name);
	cJSON_AddStringToObject(o, "path", m->path);
	cJSON_AddStringToObject(o, "format", m->format);
	vf_json_add_i64_or_null(o, "files", m->files, m->files >= 0);
	vf_json_add_i64_or_null(o, "tensors", m->tensors, m->tensors >= 0);
	vf_json_add_i64_or_null(o, "params", m->params, m->params >= 0);
	vf_json_add_i64_or_null(o, "bytes", m->bytes, m->bytes >= 0);
	if (m->files >= 0) {
		cJSON *d = cJSON_AddObjectToObject(o, "dtypes");
		for (int i = 0; i < VF_DT_COUNT; i++)
			if (m->dtype_params[i])
				cJSON_AddNumberToObject(d, vf_dtype_name((enum vf_dtype)i),
							(double)m->dtype_params[i]);
		if (m->metadata)
			cJSON_AddItemToObject(o, "metadata", cJSON_Duplicate(m->metadata, 1));
		else
			cJSON_AddObjectToObject(o, "metadata");
	}
	if (m->has_arch)
		cJSON_AddItemToObject(o, "architecture", vf_arch_to_json(&m->arch));
	else
		cJSON_AddNullToObject(o, "architecture");
	if (m->has_groups) {
		cJSON *g = groups_json(&m->groups);
		cJSON_AddStringToObject(g, "source", m->groups_source);
		cJSON_AddItemToObject(o, "param_groups", g);
	} else {
		cJSON_AddNullToObject(o, "param_groups");
	}
	if (m->ncomponents || strcmp(m->format, "diffusers") == 0) {
		cJSON *c = cJSON_AddArrayToObject(o, "components");
		for (size_t i = 0; i < m->ncomponents; i++)
			cJSON_AddItemToArray(c, vf_model_to_json(m->components[i]));
	}
	if (m->has_adapter) {
		cJSON *a = cJSON_AddObjectToObject(o, "adapter");
		vf_json_add_i64_or_null(a, "rank", m->adapter.rank, m->adapter.rank >= 0);
		if (m->adapter.alpha >= 0)
			cJSON_AddNumberToObject(a, "alpha", m->adapter.alpha);
		else
			cJSON_AddNullToObject(a, "alpha");
		cJSON *t = cJSON_AddArrayToObject(a, "targets");
		for (size_t i = 0; i < m->adapter.ntargets; i++)
			cJSON_AddItemToArray(t, cJSON_CreateString(m->adapter.targets[i]));
		cJSON_AddNumberToObject(a, "params", (double)m->adapter.params);
	}
	return o;
}
