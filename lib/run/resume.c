/* resume.c - how the trainer resumes from a checkpoint (run.h): the key
 * and whether it takes a directory come from the trainer profile
 * (configs.json checkpoints.resume_key, resume_takes_dir), and the key is
 * checked against the schema of the trainer checkout the user has, the
 * way plan and check read it (configs.json schema.file, schema.class), so
 * a key that trainer does not have is named instead of written. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "vramfit/base/json.h"
#include "vramfit/run/run.h"
#include "vramfit/trainer/schema.h"

vf_status vf_run_resume_load(const char *trainer_dir, const cJSON *configs, struct vf_run_resume *out,
			     struct vf_error *err)
{
	memset(out, 0, sizeof *out);
	const cJSON *ck = cJSON_GetObjectItemCaseSensitive(configs, "checkpoints");
	const char *key = vf_json_get_str(ck, "resume_key");
	if (!key || !*key || strlen(key) >= sizeof out->key)
		return vf_error_set(err, VF_ERR,
				    "the trainer profile's configs.json: checkpoints.resume_key: expected the config "
				    "key through which the trainer resumes from a checkpoint");
	snprintf(out->key, sizeof out->key, "%s", key);
	vf_json_get_bool(ck, "resume_takes_dir", &out->takes_dir);
	const cJSON *sc = cJSON_GetObjectItemCaseSensitive(configs, "schema");
	const char *file = vf_json_get_str(sc, "file"), *cls = vf_json_get_str(sc, "class");
	if (!file || !cls) {
		snprintf(out->unchecked, sizeof out->unchecked, "the trainer profile names no schema source");
		return VF_OK;
	}
	struct vf_schema *s = NULL;
	struct vf_error e = {0};
	vf_status st = vf_schema_load(trainer_dir, file, cls, &s, &e);
	if (st != VF_OK) {
		snprintf(out->unchecked, sizeof out->unchecked, "%s", e.msg);
		return VF_OK;
	}
	bool has = vf_schema_has_path(s, key);
	vf_schema_free(s);
	if (!has)
		return vf_error_set(err, VF_ERR,
				    "%s/%s: %s has no field %s, the trainer's resume key in the trainer profile "
				    "(configs.json checkpoints.resume_key): this checkout cannot be resumed through it, "
				    "and vramfit does not write a key its schema rejects",
				    trainer_dir, file, cls, key);
	return VF_OK;
}

void vf_run_resume_value(const struct vf_run_resume *rs, const char *ckpt, bool want_dir, char *out, size_t n)
{
	snprintf(out, n, "%s", ckpt);
	char *slash = strrchr(out, '/');
	if (want_dir && rs->takes_dir && slash && slash != out)
		*slash = '\0';
}
