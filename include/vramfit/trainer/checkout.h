/* checkout.h - what the user's trainer checkout says about itself, read
 * every time instead of copied into vramfit: its version (git HEAD when it
 * is in a repository, else the pyproject.toml version), its config families
 * (every shipped configs/<mode>_lora.yaml is a mode, with what it trains from
 * its header comment and training_strategy), the data directories a config
 * needs under the preprocessed data root, and the low-VRAM deltas (the keys
 * the trainer's own low-VRAM config changes from its standard one). File
 * name patterns and key names come from the profile (configs.json). */
#ifndef VRAMFIT_CHECKOUT_H
#define VRAMFIT_CHECKOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "vramfit/base/error.h"
#include "vramfit/base/yamldoc.h"

/* The trainer's version in words: "git 400fd31 (branch main)",
 * "git 400fd31 (detached)", "pyproject 2.0.1", or "unknown (no .git, no
 * pyproject.toml version)". Looks for .git in dir and up to 2 parents
 * (a monorepo's packages/ltx-trainer, no further: a checkout copied into
 * some other repository is not that repository's commit); follows `gitdir:` files, refs/ and
 * packed-refs. Never fails. */
void vf_checkout_version(const char *dir, char *out, size_t n);

/* The trainer in words, for refusals: "ltxv-trainer, pyproject 0.2.0" (the
 * pyproject.toml [project] name, else the directory's name, then
 * vf_checkout_version()). Never fails. */
void vf_checkout_describe(const char *dir, char *out, size_t n);

struct vf_trainer_mode {
	char name[48];      /* "t2v", "v2v_ic" */
	char config[128];   /* "t2v_lora.yaml" ("" when only a low-VRAM file ships) */
	char low_vram[128]; /* "t2v_lora_low_vram.yaml" or "" */
	char what[256];     /* the file's header comment, first line */
	char strategy[256]; /* "flexible: video generated; conditions reference, first_frame" */
};

struct vf_trainer_modes {
	struct vf_trainer_mode *v; /* owned, sorted by name */
	size_t n;
};

void vf_modes_release(struct vf_trainer_modes *m);

/* The config families in trainer_dir/<config_dir>, by the profile's
 * patterns (configs.json "families": {"standard": "{mode}_lora.yaml",
 * "low_vram": "{mode}_lora_low_vram.yaml"}). VF_ENOTFOUND when the directory
 * is missing. */
vf_status vf_checkout_modes(const char *trainer_dir, const cJSON *configs, struct vf_trainer_modes *out,
			    struct vf_error *err);

/* The mode named name, NULL when none. Borrowed. */
const struct vf_trainer_mode *vf_modes_find(const struct vf_trainer_modes *m, const char *name);

/* A value found in a config by a key pattern. */
struct vf_found_value {
	char key[160];                    /* the dotted key, "(always)" for a fixed name */
	char value[256];                  /* the string value */
	const struct vf_yaml_node *node;  /* Borrowed from the document; NULL for fixed names */
};

/* The string values at pattern (dotted keys; '*' matches any key or index).
 * Writes up to max; returns how many. */
size_t vf_checkout_collect(const struct vf_yamldoc *doc, const char *pattern, struct vf_found_value *out,
			   size_t max);

/* The data directories doc needs under its preprocessed data root, by the
 * profile's "data_dirs" rules (configs.json): "always" names, the string
 * values at "keys" patterns, and "by_strategy" names. Distinct names only.
 * Writes up to max; returns how many. */
size_t vf_checkout_data_dirs(const struct vf_yamldoc *doc, const cJSON *configs, struct vf_found_value *out,
			     size_t max);

/* One low-VRAM delta: a key the trainer's low-VRAM config sets differently
 * from its standard config, with the YAML text of the low-VRAM value. */
struct vf_delta {
	char key[128];
	char value[256];    /* the string itself when is_string, else YAML/JSON text */
	bool is_string;
	char standard[256]; /* the standard config's value ("(absent)") */
};

/* Diff standard against low (scalars and flow values, by dotted key; keys
 * under the profile's "delta_skip" prefixes, e.g. paths, are left out).
 * Writes up to max deltas to out; returns how many. */
size_t vf_checkout_deltas(const struct vf_yamldoc *standard, const struct vf_yamldoc *low, const cJSON *configs,
			  struct vf_delta *out, size_t max);

/* fopen(path, "r") for a regular file only (never blocks on a FIFO);
 * NULL otherwise. Internal to lib/trainer. */
FILE *vf__fopen_regular(const char *path);

#endif
