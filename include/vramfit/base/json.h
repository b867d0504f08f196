/* json.h - JSON reading on cJSON, with size limits and typed lookups.
 * All lookups take a "what" name used in error messages
 * ("config.json: field hidden_size: expected an integer"). */
#ifndef VRAMFIT_JSON_H
#define VRAMFIT_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "vramfit/base/error.h"

#define VF_JSON_MAX_FILE (64u << 20) /* 64 MiB: any JSON file vramfit reads */

/* Parse text (not necessarily NUL-terminated). what names it in errors.
 * Stricter than cJSON: a NUL byte anywhere ("WHAT: invalid JSON: a NUL
 * byte at byte N") and anything but white space after the top value
 * ("WHAT: invalid JSON: data after the top value at byte N") are errors.
 * Caller owns *out; cJSON_Delete(). */
vf_status vf_json_parse(const char *text, size_t len, const char *what, cJSON **out,
			struct vf_error *err);
/* vf_json_parse's fast path (lib/base/jsonfast.c): the tree cJSON would
 * build for text, or NULL where text is outside the plain subset it reads
 * (then cJSON parses it, and reports the error where there is one). Caller
 * owns the tree; cJSON_Delete(). Exposed for the tests and tests/fuzz/fuzz-json.c. */
#define VF__JSON_FAST_DEPTH 256
cJSON *vf__json_parse_fast(const char *text, size_t len);
/* Read and parse a file of at most cap bytes (0 = VF_JSON_MAX_FILE). */
vf_status vf_json_parse_file(const char *path, size_t cap, cJSON **out, struct vf_error *err);
/* vf_json_parse without the fast path and its NUL check: cJSON's tree or
 * its error; data after the top value is an error. */
vf_status vf__json_parse_cjson(const char *text, size_t len, const char *what, cJSON **out,
			       struct vf_error *err);
/* VF_ERR naming what and the offset when text holds a NUL byte. */
vf_status vf__json_check_nul(const char *text, size_t len, const char *what, struct vf_error *err);

/* A parsed text kept as a read-only tree (jsonfast.c): the tree and the
 * errors of vf_json_parse, the nodes held in a few large blocks freed
 * together (no malloc and free per node). Read it with every cJSON getter;
 * never modify, detach or cJSON_Delete its nodes (cJSON_Duplicate copies).
 * Caller owns *out; vf_json_doc_free(). */
struct vf_json_doc;
vf_status vf_json_doc_parse(const char *text, size_t len, const char *what,
			    struct vf_json_doc **out, struct vf_error *err);
vf_status vf_json_doc_parse_file(const char *path, size_t cap, struct vf_json_doc **out,
				 struct vf_error *err);
/* A doc from a tree image (the format: lib/base/jsonfast.c), as
 * cmake/json-image.c writes them for the embedded catalogs: the tree
 * vf_json_doc_parse builds for the text it was made from, without parsing;
 * the image must outlive the doc (its strings stay in it). A malformed
 * image: VF_ERR naming what. */
#define VF_JSON_IMAGE_MAGIC 0x314a4656u /* "VFJ1" read little-endian */
vf_status vf__json_doc_from_image(const unsigned char *image, size_t len, const char *what,
				  struct vf_json_doc **out, struct vf_error *err);
/* Borrowed; valid until vf_json_doc_free(d). NULL for d == NULL. */
const cJSON *vf_json_doc_root(const struct vf_json_doc *d);
void vf_json_doc_free(struct vf_json_doc *d);

/* Typed getters: return true and set *out when key exists with that type.
 * Integers must be whole numbers within range. */
bool vf_json_get_i64(const cJSON *obj, const char *key, int64_t *out);
bool vf_json_get_double(const cJSON *obj, const char *key, double *out);
bool vf_json_get_bool(const cJSON *obj, const char *key, bool *out);
const char *vf_json_get_str(const cJSON *obj, const char *key); /* Borrowed. */

/* Whole-number check for a cJSON number (no fraction, within int64). */
bool vf_json_number_is_i64(const cJSON *n, int64_t *out);

/* Strict UTF-8 (no overlongs, surrogates or code points past U+10FFFF):
 * the offset of the first bad byte, or len when s is valid. */
size_t vf_utf8_check(const unsigned char *s, size_t len);

/* Print to a malloc'd string (caller frees; NULL when out of memory),
 * formatted; always valid UTF-8 (a bad byte in a string prints as U+FFFD). */
char *vf_json_print(const cJSON *root);

/* Add a number that may be unknown: NaN/negative sentinel (< 0) prints null. */
cJSON *vf_json_add_i64_or_null(cJSON *obj, const char *key, int64_t v, bool known);

/* Add obj[key] = the items of a ", "-joined list ("a, b" -> ["a", "b"];
 * "" -> []), each item cut at 255 bytes. Returns the array (NULL: no memory). */
cJSON *vf_json_add_list(cJSON *obj, const char *key, const char *list);

#endif
