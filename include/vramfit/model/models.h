/* models.h - the model catalog: every data/models/<name>.json (embedded,
 * or overridden under $VRAMFIT_DATA_DIR/models/ or ~/.config/vramfit/models/),
 * loaded once into one list.
 *
 * Each file is {"models": [entry, ...]} (a bare array also works). An entry:
 *   "id"      lower-case, stable, unique over all files (required)
 *   "aliases" other names vf_models_find accepts (optional; e.g. "gemma-3-12b")
 *   "name"    display name (default: the id)
 *   "kind"    "llm" (default), "dit", "text-encoder", ...
 *   "params"  exact total parameters, or null/absent (then computed from
 *             "config" when possible)
 *   "config"  the architecture in Hugging Face config.json keys (optional
 *             for kinds other than "llm")
 * and any other fields, reachable through `raw`. */
#ifndef VRAMFIT_MODELS_H
#define VRAMFIT_MODELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "vramfit/model/arch.h"
#include "vramfit/base/error.h"

struct vf_model_entry {
	char id[48];
	char name[96];
	char kind[16];         /* "llm" | "dit" | ... */
	char file[64];         /* the catalog file: "models/llm.json" */
	bool has_arch;         /* "config" present and read */
	struct vf_arch arch;   /* source "catalog"; vf_arch_init'd without a config */
	bool has_groups;       /* groups computed from the architecture */
	struct vf_param_groups groups;
	int64_t params;        /* exact total; -1 unknown */
	const cJSON *raw;      /* the entry (borrowed; valid until vf_models_release) */
};

/* Load the catalog if not loaded yet. Fails on a malformed file, naming it,
 * the entry and the field, for every field but "config": an entry's
 * architecture is read from its config when the entry is first asked for
 * (vf_models_ready; vf_models_find and vf_models_lookup do it), so a
 * malformed config fails where that entry is used, naming the file and the
 * entry, and does not stop the use of another. */
vf_status vf_models_load(struct vf_error *err);

/* vf_models_load, then every entry's architecture read: fails on the first
 * entry whose config does not read (what a verb that lists every entry
 * runs, so the listing validates the whole catalog). */
vf_status vf_models_load_all(struct vf_error *err);

/* Read entry e's architecture if not read yet (an entry of the loaded
 * catalog). VF_OK when it reads; else the error naming the file, the
 * entry and the field, each time it is asked. Thread-safe. */
vf_status vf_models_ready(const struct vf_model_entry *e, struct vf_error *err);

/* The entry with this id or alias (case-insensitive), or NULL (also when the catalog
 * fails to load, or the entry's config does not read). Borrowed; valid until
 * vf_models_release(). */
const struct vf_model_entry *vf_models_find(const char *id);

/* vf_models_find with the errors: VF_OK with *out the entry (its
 * architecture read) or NULL when no entry has this id or alias; the
 * load's error, or that of the entry whose config does not read. */
vf_status vf_models_get(const char *id, const struct vf_model_entry **out,
			struct vf_error *err);

/* The entry a person means: an id or alias (vf_models_find), the Hub id
 * ("meta-llama/Llama-3.1-8B", case-insensitive), or, without an org, the
 * compact form (names.h) of the id, an alias, the display name or the Hub
 * name ("Llama-3.1-8B", "llama 3.1 8b") when one entry alone has it. NULL
 * when none or several do; then hint (n bytes) holds "; did you mean a, b?"
 * or "". Borrowed; valid until vf_models_release(). */
const struct vf_model_entry *vf_models_find_loose(const char *name, char *hint, size_t n);

/* vf_models_find_loose with the errors: VF_OK with *out the entry (its
 * architecture read), or VF_OK with *out NULL when no entry or several
 * match (hint as there); the load's error, or that of the matching entry
 * whose config does not read (naming the file and the entry). *out
 * borrowed; valid until vf_models_release(). */
vf_status vf_models_lookup(const char *name, const struct vf_model_entry **out, char *hint,
			   size_t n, struct vf_error *err);

/* All entries, in file order (files sorted by name), every architecture
 * read (vf_models_load_all; NULL and *n 0 when that fails). Borrowed; *n set. */
const struct vf_model_entry *vf_models_list(size_t *n);

/* Free the loaded catalog (tests; LeakSanitizer). */
void vf_models_release(void);

#endif
