/* validate.c - the trainer's own validation of a config (see check.h,
 * vf_check_trainer_validate): its schema class run on the file by the
 * checkout's Python environment, supervised by proc (timeout, line cap, the
 * whole process tree ended), its errors mapped back to config keys. The
 * script, interpreter candidates and markers are profile data
 * (configs.json "trainer_validate"). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_internal.h"
#include "vramfit/base/json.h"
#include "vramfit/base/proc.h"
#include "vramfit/trainer/profile.h"

#define MAX_ERRORS 64

struct collected {
	const char *prefix, *ok_line;
	bool ok;
	char errors[MAX_ERRORS][512];
	int nerrors;
	char last_err[256]; /* the child's last stderr line (why it could not run) */
};

static void on_line(void *ctx, enum vf_proc_stream stream, const char *line, size_t len, bool truncated)
{
	struct collected *c = ctx;
	(void)len;
	(void)truncated;
	if (stream == VF_PROC_STDERR) {
		if (*line)
			snprintf(c->last_err, sizeof c->last_err, "%s", line);
		return;
	}
	size_t pl = strlen(c->prefix);
	if (strncmp(line, c->prefix, pl) == 0 && c->nerrors < MAX_ERRORS)
		snprintf(c->errors[c->nerrors++], sizeof c->errors[0], "%s", line + pl);
	else if (strcmp(line, c->ok_line) == 0)
		c->ok = true;
}

/* The first interpreter candidate that exists in the checkout. */
static bool find_python(const char *dir, const cJSON *tv, char *out, size_t n)
{
	const cJSON *p;
	cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(tv, "pythons"))
	{
		char path[PATH_MAX + 64];
		if (!cJSON_IsString(p))
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, p->valuestring);
		if (access(path, X_OK) == 0) {
			snprintf(out, n, "%s", path);
			return true;
		}
	}
	return false;
}

static void report(const struct vf_yamldoc *doc, const struct collected *col, struct vf_check *out)
{
	/* what our check found pending (the data root) stays pending */
	const char *root = NULL;
	vf_yamldoc_get_str(doc, "data.preprocessed_data_root", &root, NULL);
	for (int i = 0; i < col->nerrors; i++) {
		char loc[256], key[256];
		const char *tab = strchr(col->errors[i], '\t');
		const char *msg = tab ? tab + 1 : col->errors[i];
		snprintf(loc, sizeof loc, "%.*s", tab ? (int)(tab - col->errors[i]) : 0, col->errors[i]);
		vf__check_map_loc(doc, loc, false, key, sizeof key);
		bool pending = vf__check_pending_on(out, key, msg) || (root && *root && strstr(msg, root));
		vf__check_add(out, pending ? VF_CHECK_PENDING : VF_CHECK_FAIL, key, vf_yamldoc_find(doc, key),
			      "the trainer's own validation: %s", msg);
	}
}

/* "src/ltx_trainer/config.py" -> "ltx_trainer.config" */
static void module_of(const char *file, char *out, size_t n)
{
	snprintf(out, n, "%s", strncmp(file, "src/", 4) == 0 ? file + 4 : file);
	char *dot = strrchr(out, '.');
	if (dot && strcmp(dot, ".py") == 0)
		*dot = '\0';
	for (char *p = out; *p; p++)
		if (*p == '/')
			*p = '.';
}

static void run_child(const char *python, const char *config_path, const char *dir, const cJSON *cfg,
		      const struct vf_yamldoc *doc, struct vf_check *out)
{
	const cJSON *tv = cJSON_GetObjectItemCaseSensitive(cfg, "trainer_validate");
	const cJSON *sc = cJSON_GetObjectItemCaseSensitive(cfg, "schema");
	char module[256], abs_cfg[PATH_MAX];
	module_of(vf_json_get_str(sc, "file") ? vf_json_get_str(sc, "file") : "", module, sizeof module);
	if (!realpath(config_path, abs_cfg))
		snprintf(abs_cfg, sizeof abs_cfg, "%s", config_path);
	const char *script = vf_json_get_str(tv, "script"), *cls = vf_json_get_str(sc, "class");
	const char *argv[] = {python, "-c", script ? script : "", abs_cfg, module, cls ? cls : "", NULL};
	struct collected col = {vf_json_get_str(tv, "error_prefix"), vf_json_get_str(tv, "ok_line"), false, {{0}}, 0, ""};
	if (!col.prefix || !col.ok_line || !script) {
		snprintf(out->trainer_validate_note, sizeof out->trainer_validate_note, "the profile has no validation script");
		return;
	}
	double timeout = 180;
	int64_t exit_err = 3;
	vf_json_get_double(tv, "timeout_s", &timeout);
	vf_json_get_i64(tv, "error_exit", &exit_err);
	struct vf_proc p;
	vf_proc_init(&p);
	p.argv = argv;
	p.cwd = dir;
	p.timeout_s = timeout;
	p.line_max = 4096;
	p.on_line = on_line;
	p.ctx = &col;
	struct vf_error e = {0};
	if (vf_proc_run(&p, &e) != VF_OK)
		snprintf(out->trainer_validate_note, sizeof out->trainer_validate_note, "%s", e.msg);
	else if (p.end == VF_PROC_TIMEOUT)
		snprintf(out->trainer_validate_note, sizeof out->trainer_validate_note,
			 "%s ran past %.0f s and was ended", python, timeout);
	else if (p.status == 0 && col.ok)
		out->trainer_validated = true;
	else if (p.status == (int)exit_err && col.nerrors) {
		out->trainer_validated = true;
		report(doc, &col, out);
	} else
		snprintf(out->trainer_validate_note, sizeof out->trainer_validate_note, "%s exited %d: %s", python,
			 p.status, col.last_err[0] ? col.last_err : "no output");
}

vf_status vf_check_trainer_validate(const char *config_path, const struct vf_yamldoc *doc, const char *trainer,
				    const char *trainer_dir, struct vf_check *out, struct vf_error *err)
{
	cJSON *cfg = NULL;
	vf_status st = vf_profile_part(trainer, "configs", &cfg, err);
	if (st != VF_OK)
		return st;
	const char *dir = trainer_dir ? trainer_dir : out->trainer_dir;
	char python[PATH_MAX + 64];
	out->trainer_validated = false;
	if (!dir || !*dir)
		snprintf(out->trainer_validate_note, sizeof out->trainer_validate_note, "no trainer checkout found");
	else if (!find_python(dir, cJSON_GetObjectItemCaseSensitive(cfg, "trainer_validate"), python, sizeof python))
		snprintf(out->trainer_validate_note, sizeof out->trainer_validate_note,
			 "no trainer environment in %s (.venv: run `uv sync` there)", dir);
	else
		run_child(python, config_path, dir, cfg, doc, out);
	if (!out->trainer_validated)
		vf__check_add(out, VF_CHECK_UNCHECKED, "(trainer validation)", NULL,
			      "not checked: the trainer's own validation did not run: %s", out->trainer_validate_note);
	cJSON_Delete(cfg);
	return VF_OK;
}
