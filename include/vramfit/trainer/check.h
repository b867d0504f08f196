/* check.h - the self-check of a trainer run config before any launch
 * (TRAINER.md section 3; issue 6 item 6): the model, text encoder and data
 * paths exist (the data root may be pending preprocessing), validation
 * video_dims are valid, something is generated, a LoRA run has its lora
 * block, full training has no quantization, and every key is known to the
 * trainer profile's schema with an allowed value. Rules and key names come
 * from the profile (configs.json, schema.json). */
#ifndef VRAMFIT_CHECK_H
#define VRAMFIT_CHECK_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "vramfit/base/error.h"
#include "vramfit/base/yamldoc.h"

enum vf_check_level {
	VF_CHECK_FAIL,    /* the trainer would refuse or crash: fix before launch */
	VF_CHECK_PENDING, /* not there yet, expected later (preprocessed data) */
	VF_CHECK_UNCHECKED, /* not checked: vramfit could not read the rule (never a failure) */
};

struct vf_check_item {
	enum vf_check_level level;
	char key[128];  /* dotted key the rule concerns */
	size_t line;    /* line in the config, 0 when the key is absent */
	char rule[384]; /* what is wrong, naming the rule */
};

struct vf_check {
	struct vf_check_item *items; /* owned */
	size_t n, alloc;
	size_t failures, pending, unchecked;
	char config[1024];           /* the file checked */
	/* What was read from the trainer checkout (drift is visible). */
	char trainer_dir[1024];      /* "" when none was found */
	char trainer_version[160];   /* vf_checkout_version() */
	char schema_file[256];       /* "src/ltx_trainer/config.py", "" when not read */
	char schema_note[512];       /* why no schema was read */
	size_t schema_models, schema_fields, schema_files;
	bool trainer_validated;      /* --trainer-validate ran the trainer's own validation */
	char trainer_validate_note[256];
	/* Who judged keys and values (issue 22): the trainer's config class run
	 * by the machine's python3 (pydantic 2 + PyYAML), else the static reader. */
	bool no_python;              /* set before vf_check_config: never run python3 (--no-python) */
	bool python_checked;         /* the trainer's config class gave the verdict */
	char checked_by[256];        /* "checked by the trainer's config class (C) with python3 3.11.7
				      * (pydantic 2.13.4)" or "checked statically (...)" */
	char python_note[384];       /* why python3 did not answer ("" when it did) */
};

void vf_check_init(struct vf_check *c);
void vf_check_release(struct vf_check *c);
/* Add an item (line: in the checked file, 0 none). */
void vf_check_add_line(struct vf_check *c, enum vf_check_level level, const char *key, size_t line,
		       const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Check a loaded config against the trainer profile's rules and the schema
 * read from trainer_dir's source (NULL: $LTX_TRAINER_DIR, then the profile's
 * candidates from the working directory). Without a readable schema every
 * key is one "not checked" item, never a failure. Then, where it can be run
 * (a python3 with pydantic 2 and PyYAML on PATH, or $VRAMFIT_PYTHON; not
 * with out->no_python or VRAMFIT_NO_PYTHON=1), the trainer's config class
 * judges keys and values instead of the static reader: the profile's
 * "python_check" script imports the checkout's config module (heavy imports
 * stubbed), validates the config text with yaml.safe_load and the class, in
 * a supervised child (timeout, memory, output limits); each pydantic error
 * is an item on the config key its loc names, and every static schema item
 * (failures and "not checked: <validator>" alike) is dropped. vramfit's own
 * workflow checks (paths, dims, mode rules, data dirs) stay. Anything short
 * of a verdict (no python3, no pydantic, an import that fails, a timeout)
 * keeps the static answer; out->checked_by and out->python_note say which
 * answered and why. Failures are items, not
 * errors: VF_OK means the check ran. Errors: the profile is unreadable, out
 * of memory. */
vf_status vf_check_config(const struct vf_yamldoc *doc, const char *trainer, const char *trainer_dir,
			  struct vf_check *out, struct vf_error *err);

/* Load RUN_DIR/config.yaml (the name from the profile) and check it.
 * Errors: no config there, invalid YAML. */
vf_status vf_check_run(const char *run_dir, const char *trainer, const char *trainer_dir,
		       struct vf_check *out, struct vf_error *err);

/* The trainer's own validation (--trainer-validate): when trainer_dir has an
 * environment (the profile's "trainer_validate" pythons, e.g. .venv/bin/python)
 * run its schema class on config_path in a supervised child (proc: own
 * process group, timeout, line cap) and add each error it reports as an
 * item on the key it names (pending when it is about a path our check found
 * pending, e.g. the data root before preprocessing). No environment, or a
 * child that cannot import the trainer: one "not checked" item, never a
 * failure. out->trainer_validated says whether it ran. Errors: the profile
 * is unreadable. */
vf_status vf_check_trainer_validate(const char *config_path, const struct vf_yamldoc *doc, const char *trainer,
				    const char *trainer_dir, struct vf_check *out, struct vf_error *err);

/* {"config", "ok", "failures", "pending", "unchecked", "trainer": {"dir",
 * "version", "schema", "models", "fields", "files", "note", "validated",
 * "validate_note", "checked_by" ("python" or "static"), "checked_by_text",
 * "python_note"},
 * "items":[{"level","key","line","rule"}]} (level fail, pending, unchecked).
 * Caller owns; cJSON_Delete(). */
cJSON *vf_check_to_json(const struct vf_check *c);

#endif
