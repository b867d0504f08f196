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

#endif
