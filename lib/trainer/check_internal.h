/* check_internal.h - what check.c and check_schema.c share (not public). */
#ifndef VRAMFIT_CHECK_INTERNAL_H
#define VRAMFIT_CHECK_INTERNAL_H

#include "vramfit/trainer/check.h"
#include "vramfit/trainer/schema.h"

/* Add an item to c (counted even when memory runs out). */
void vf__check_add(struct vf_check *c, enum vf_check_level level, const char *key, const struct vf_yaml_node *n,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Check every key and value under root against the schema's root model. */
void vf__check_schema(const struct vf_yaml_node *root, const struct vf_schema *s, struct vf_check *c);

/* "training_strategy.flexible.video.latents_dir" (a pydantic loc) -> the
 * longest key of doc along it, skipping parts that are no key there (union
 * tags); with missing, a last part absent under a mapping is kept (the
 * missing key). "(config)" for the root. */
void vf__check_map_loc(const struct vf_yamldoc *doc, const char *loc, bool missing, char *out, size_t n);

/* True when c already has a pending item on key, or one whose key msg names. */
bool vf__check_pending_on(const struct vf_check *c, const char *key, const char *msg);

/* The trainer's config class as the judge (pycheck.c; see vf_check_config):
 * items [from, to) are the static reader's answer on keys and values,
 * replaced when the class gives a verdict. Sets c->checked_by and
 * c->python_note. */
void vf__check_python(const struct vf_yamldoc *doc, const cJSON *configs, const char *trainer, size_t from,
		      size_t to, struct vf_check *c);

#endif
