/* yamldoc.h - a YAML document kept as its source bytes, with dotted-path
 * lookup and byte-exact patching (on libyaml's source marks).
 *
 * A set splices the new value's text over the old value's source span and
 * re-parses; every other byte (comments, key order, blank lines, CRLF or LF,
 * quoting of other values) stays identical. A missing key is inserted at the
 * end of its mapping with the file's indentation; missing parent mappings are
 * created. Values are given as YAML text: null, true, 42, 1e-4, "a b",
 * plain-string, [960, 544, 89], {a: 1}.
 *
 * Limits (DESIGN.md convention 5): the document is at most
 * VF_YAMLDOC_MAX_BYTES; at most VF_YAMLDOC_MAX_ALIASES alias references,
 * VF_YAMLDOC_MAX_NODES nodes and VF_YAMLDOC_MAX_DEPTH levels of nesting;
 * one document per stream. Anything over a limit is refused with an error
 * naming the document and the limit.
 *
 * Paths: keys joined by '.', a sequence element by its index
 * ("validation.video_dims.0"). The empty path is the root. */
#ifndef VRAMFIT_YAMLDOC_H
#define VRAMFIT_YAMLDOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "vramfit/base/error.h"

#define VF_YAMLDOC_MAX_BYTES (16u << 20) /* 16 MiB */
#define VF_YAMLDOC_MAX_ALIASES 1000
#define VF_YAMLDOC_MAX_NODES 200000
#define VF_YAMLDOC_MAX_DEPTH 100

struct vf_yamldoc;
struct vf_yaml_node;

enum vf_yaml_kind {
	VF_YAML_NULL,  /* null, ~, empty */
	VF_YAML_BOOL,  /* true/false (also yes/no/on/off, as PyYAML reads them) */
	VF_YAML_INT,
	VF_YAML_FLOAT,
	VF_YAML_STR,   /* any quoted scalar, or a plain one that is none of the above */
	VF_YAML_SEQ,
	VF_YAML_MAP,
};

/* Load a document. `name` names it in errors (a path). Caller owns *out;
 * vf_yamldoc_free(). */
vf_status vf_yamldoc_load_file(const char *path, struct vf_yamldoc **out, struct vf_error *err);
vf_status vf_yamldoc_load_mem(const char *text, size_t len, const char *name,
			      struct vf_yamldoc **out, struct vf_error *err);
void vf_yamldoc_free(struct vf_yamldoc *doc);

/* The current bytes of the document. Borrowed; valid until the next set or free. */
const char *vf_yamldoc_text(const struct vf_yamldoc *doc, size_t *len);
/* The name given at load. Borrowed. */
const char *vf_yamldoc_name(const struct vf_yamldoc *doc);
/* True when the document uses CRLF line breaks. */
bool vf_yamldoc_crlf(const struct vf_yamldoc *doc);

/* Look up a dotted path (aliases followed). NULL when absent.
 * Borrowed; valid until the next set or free. */
const struct vf_yaml_node *vf_yamldoc_find(const struct vf_yamldoc *doc, const char *path);
const struct vf_yaml_node *vf_yamldoc_root(const struct vf_yamldoc *doc);

/* A mapping that sets a key twice keeps the last value, as PyYAML does (and
 * so the trainer): find, the getters and to_json read that one. This says
 * VF_ERR ("FILE:LINE: a.b is set twice (lines 2 and 3); PyYAML keeps the
 * last; remove one") when a key on path is set more than once in its
 * mapping, for a reader that must not let a user edit or read the wrong
 * copy; a set refuses such a path the same way. VF_OK otherwise (also for a
 * path that is absent). */
vf_status vf_yamldoc_check_path(const struct vf_yamldoc *doc, const char *path, struct vf_error *err);

enum vf_yaml_kind vf_yaml_node_kind(const struct vf_yaml_node *n);
const char *vf_yaml_kind_name(enum vf_yaml_kind k); /* "null", "bool", ... */
/* Scalar value as written after unquoting (NULL for collections). Borrowed. */
const char *vf_yaml_node_str(const struct vf_yaml_node *n);
bool vf_yaml_node_bool(const struct vf_yaml_node *n, bool *out);
bool vf_yaml_node_int(const struct vf_yaml_node *n, int64_t *out);
bool vf_yaml_node_double(const struct vf_yaml_node *n, double *out); /* ints too (past 64 bits: rounded) */
/* Sequence elements or mapping entries. */
size_t vf_yaml_node_count(const struct vf_yaml_node *n);
/* Mapping: the i-th key's string (Borrowed) and value; sequence: NULL key. */
const char *vf_yaml_node_key(const struct vf_yaml_node *n, size_t i);
const struct vf_yaml_node *vf_yaml_node_child(const struct vf_yaml_node *n, size_t i);
/* Line (1-based) where the node starts in the current text. */
size_t vf_yaml_node_line(const struct vf_yaml_node *n);

/* The node as JSON (scalars typed as above). NULL when it would expand to
 * more than VF_YAMLDOC_MAX_NODES nodes through aliases. Caller owns;
 * cJSON_Delete(). */
cJSON *vf_yaml_node_to_json(const struct vf_yaml_node *n);

/* Typed getters on a path: VF_ENOTFOUND when absent, VF_ERR when the type
 * differs (the message names the document, the key and the type expected). */
vf_status vf_yamldoc_get_str(const struct vf_yamldoc *doc, const char *path, const char **out,
			     struct vf_error *err); /* *out Borrowed */
vf_status vf_yamldoc_get_int(const struct vf_yamldoc *doc, const char *path, int64_t *out,
			     struct vf_error *err);
vf_status vf_yamldoc_get_bool(const struct vf_yamldoc *doc, const char *path, bool *out,
			      struct vf_error *err);

/* Set path to the YAML value text `value` (a scalar or a flow collection).
 * A quoted original keeps its quote style when the new value is a string.
 * Refused (VF_ERR, nothing changed) when a key on path is set twice in its
 * mapping (see vf_yamldoc_check_path), when the path goes through an alias
 * or a merge key, or when the value carries an anchor: the edit would change
 * other keys too (the message names them).
 * The document is re-parsed and the new value read back; on any failure the
 * document is unchanged. */
vf_status vf_yamldoc_set(struct vf_yamldoc *doc, const char *path, const char *value,
			 struct vf_error *err);

/* Set every member of the JSON object `set` (dotted path -> value) in
 * order: a string member is YAML value text as vf_yamldoc_set takes it,
 * any other member its JSON text (JSON is YAML's flow style). Stops at the
 * first failure, which names the path. */
vf_status vf_yamldoc_set_all(struct vf_yamldoc *doc, const cJSON *set, struct vf_error *err);

/* Set path to the string s (any bytes but NUL and line breaks): written in
 * the original's quote style when it was quoted, else plain when that reads
 * back as the same string, else double-quoted. */
vf_status vf_yamldoc_set_str(struct vf_yamldoc *doc, const char *path, const char *s,
			     struct vf_error *err);

/* Write the current bytes to path atomically. */
vf_status vf_yamldoc_save(const struct vf_yamldoc *doc, const char *path, struct vf_error *err);

#endif
