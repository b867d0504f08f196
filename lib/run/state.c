/* state.c - RUN/run.json, the state of `vramfit run` (run.h): read with a
 * size limit and checked field by field, written temp + rename. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "vramfit/base/buf.h"
#include "vramfit/base/json.h"
#include "vramfit/base/rundir.h"
#include "vramfit/run/run.h"

static const char *const stage_names[VF_RUN__STAGES] = {"preprocess", "tune", "train", "done"};

const char *vf_run_stage_name(enum vf_run_stage s)
{
	return s < VF_RUN__STAGES ? stage_names[s] : "?";
}

bool vf_run_stage_parse(const char *name, enum vf_run_stage *out)
{
	for (int i = 0; name && i < VF_RUN__STAGES; i++)
		if (strcmp(name, stage_names[i]) == 0) {
			*out = (enum vf_run_stage)i;
			return true;
		}
	return false;
}

cJSON *vf_run_state_new(void)
{
	cJSON *st = cJSON_CreateObject();
	cJSON_AddNumberToObject(st, "version", 1);
	cJSON_AddStringToObject(st, "stage", "preprocess");
	cJSON_AddStringToObject(st, "status", "not started");
	cJSON_AddStringToObject(st, "note", "");
	cJSON_AddArrayToObject(st, "attempts");
	cJSON_AddArrayToObject(st, "recoveries");
	return st;
}

/* Each field the readers use has its type; entries are objects. */
static vf_status check(const cJSON *st, const char *what, struct vf_error *err)
{
	if (!cJSON_IsObject(st))
		return vf_error_set(err, VF_ERR, "%s: expected a JSON object", what);
	/* a key twice is two answers to one question (the readers take the
	 * first, a rewrite the last): refused; the file has about 15 fields */
	if (cJSON_GetArraySize(st) > 256)
		return vf_error_set(err, VF_ERR, "%s: more than 256 fields: not a state file", what);
	for (const cJSON *a = st->child; a; a = a->next)
		for (const cJSON *b = a->next; b; b = b->next)
			if (a->string && b->string && strcmp(a->string, b->string) == 0)
				return vf_error_set(err, VF_ERR, "%s: field %s appears twice", what, a->string);
	enum vf_run_stage s;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(st, "version");
	if (!cJSON_IsNumber(v) || v->valuedouble != 1)
		return vf_error_set(err, VF_ERR, "%s: field version: expected 1", what);
	if (!vf_run_stage_parse(vf_json_get_str(st, "stage"), &s))
		return vf_error_set(err, VF_ERR, "%s: field stage: expected preprocess, tune, train or done", what);
	static const char *const strs[] = {"status", "note", "dataset_dir"};
	for (size_t i = 0; i < 3; i++) {
		v = cJSON_GetObjectItemCaseSensitive(st, strs[i]);
		if (v && !cJSON_IsString(v))
			return vf_error_set(err, VF_ERR, "%s: field %s: expected a string", what, strs[i]);
	}
	static const char *const arrs[] = {"attempts", "recoveries"};
	for (size_t i = 0; i < 2; i++) {
		v = cJSON_GetObjectItemCaseSensitive(st, arrs[i]);
		if (!cJSON_IsArray(v))
			return vf_error_set(err, VF_ERR, "%s: field %s: expected an array", what, arrs[i]);
		const cJSON *e;
		cJSON_ArrayForEach(e, v)
			if (!cJSON_IsObject(e))
				return vf_error_set(err, VF_ERR, "%s: field %s: expected objects", what, arrs[i]);
	}
	v = cJSON_GetObjectItemCaseSensitive(st, "preprocess");
	if (v && !cJSON_IsObject(v))
		return vf_error_set(err, VF_ERR, "%s: field preprocess: expected an object", what);
	v = cJSON_GetObjectItemCaseSensitive(st, "steps");
	if (v && !cJSON_IsNumber(v))
		return vf_error_set(err, VF_ERR, "%s: field steps: expected a number", what);
	return VF_OK;
}

vf_status vf_run_state_parse(const char *text, size_t len, const char *what, cJSON **out, struct vf_error *err)
{
	*out = NULL;
	if (len > VF_RUN_STATE_MAX_BYTES)
		return vf_error_set(err, VF_ERR, "%s: larger than %u bytes", what, VF_RUN_STATE_MAX_BYTES);
	cJSON *st = cJSON_ParseWithLength(text, len);
	if (!st)
		return vf_error_set(err, VF_ERR, "%s: not valid JSON", what);
	vf_status rc = check(st, what, err);
	if (rc) {
		cJSON_Delete(st);
		return rc;
	}
	*out = st;
	return VF_OK;
}

vf_status vf_run_state_load(const char *run_dir, cJSON **out, struct vf_error *err)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/%s", run_dir, VF_RUN_STATE_FILE);
	struct stat sb;
	if (lstat(path, &sb) != 0 && errno == ENOENT) {
		*out = vf_run_state_new();
		return VF_OK;
	}
	vf_status st;
	struct vf_buf b;
	vf_buf_init(&b, VF_RUN_STATE_MAX_BYTES);
	st = vf_buf_read_file(&b, path, VF_RUN_STATE_MAX_BYTES, err);
	if (st == VF_OK)
		st = vf_run_state_parse(b.data ? b.data : "", b.len, path, out, err);
	vf_buf_release(&b);
	return st;
}

vf_status vf_run_state_save(const char *run_dir, const cJSON *st, struct vf_error *err)
{
	char *text = cJSON_Print(st);
	if (!text)
		return vf_error_set(err, VF_ENOMEM, "out of memory");
	vf_status rc = vf_rundir_write_file(run_dir, VF_RUN_STATE_FILE, text, strlen(text), 0644, err);
	cJSON_free(text);
	return rc;
}

enum vf_run_stage vf_run_state_stage(const cJSON *st)
{
	enum vf_run_stage s = VF_RUN_PREPROCESS;
	vf_run_stage_parse(vf_json_get_str(st, "stage"), &s);
	return s;
}

static void replace_str(cJSON *o, const char *key, const char *v)
{
	cJSON_DeleteItemFromObjectCaseSensitive(o, key);
	cJSON_AddStringToObject(o, key, v ? v : "");
}

void vf_run_state_set(cJSON *st, enum vf_run_stage stage, const char *status, const char *note)
{
	replace_str(st, "stage", vf_run_stage_name(stage));
	replace_str(st, "status", status);
	replace_str(st, "note", note);
}

void vf_run_state_append(cJSON *st, const char *name, cJSON *obj)
{
	cJSON *a = cJSON_GetObjectItemCaseSensitive(st, name);
	if (!cJSON_IsArray(a))
		a = cJSON_AddArrayToObject(st, name);
	cJSON_AddItemToArray(a, obj);
	while (cJSON_GetArraySize(a) > VF_RUN_MAX_ENTRIES)
		cJSON_DeleteItemFromArray(a, 0);
}
