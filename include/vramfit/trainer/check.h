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
	size_t failures, pending;
	char config[1024];           /* the file checked */
};

void vf_check_init(struct vf_check *c);
void vf_check_release(struct vf_check *c);
/* Add an item (line: in the checked file, 0 none). */
void vf_check_add_line(struct vf_check *c, enum vf_check_level level, const char *key, size_t line,
		       const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Check a loaded config against the trainer profile. Failures are items,
 * not errors: VF_OK means the check ran. Errors: the profile is unreadable,
 * out of memory. */
vf_status vf_check_config(const struct vf_yamldoc *doc, const char *trainer, struct vf_check *out,
			  struct vf_error *err);

/* Load RUN_DIR/config.yaml (the name from the profile) and check it.
 * Errors: no config there, invalid YAML. */
vf_status vf_check_run(const char *run_dir, const char *trainer, struct vf_check *out,
		       struct vf_error *err);

/* {"config", "ok", "failures", "pending", "items":[{"level","key","line","rule"}]}.
 * Caller owns; cJSON_Delete(). */
cJSON *vf_check_to_json(const struct vf_check *c);

#endif
