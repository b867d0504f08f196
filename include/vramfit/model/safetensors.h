/* safetensors.h - read the header of a .safetensors file.
 * Layout: u64 little-endian N, N bytes of JSON (an object of tensors
 * {"dtype", "shape", "data_offsets"} and an optional "__metadata__" of
 * string -> string), then the tensor data (never read here).
 *
 * Validation follows the reference implementation (huggingface/safetensors):
 * N <= 100 MB and within the file, UTF-8 JSON object (trailing spaces
 * allowed), offsets contiguous from 0 without gaps or overlaps, each
 * tensor's byte size = numel x dtype bits / 8, no overflow, and the file is
 * exactly 8 + N + end of data. Names must be unique. */
#ifndef VRAMFIT_SAFETENSORS_H
#define VRAMFIT_SAFETENSORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "vramfit/base/error.h"

#define VF_SAFETENSORS_MAX_HEADER 100000000u /* the reference's MAX_HEADER_SIZE */

/* Every dtype of the format. */
enum vf_dtype {
	VF_DT_F64,
	VF_DT_F32,
	VF_DT_F16,
	VF_DT_BF16,
	VF_DT_F8_E4M3,
	VF_DT_F8_E5M2,
	VF_DT_F8_E8M0,
	VF_DT_F6_E2M3,
	VF_DT_F6_E3M2,
	VF_DT_F4,
	VF_DT_C64,
	VF_DT_I64,
	VF_DT_I32,
	VF_DT_I16,
	VF_DT_I8,
	VF_DT_U64,
	VF_DT_U32,
	VF_DT_U16,
	VF_DT_U8,
	VF_DT_BOOL,
	VF_DT_COUNT
};

/* "BF16" ...; Borrowed, static. */
const char *vf_dtype_name(enum vf_dtype d);
/* Bits per element (F4: 4, F6_*: 6, BOOL: 8). */
int vf_dtype_bits(enum vf_dtype d);
/* Look a name up; false for an unknown dtype. */
bool vf_dtype_from_name(const char *name, enum vf_dtype *out);

struct vf_tensor {
	char *name;        /* in the header's names arena (vf_safetensors.names) */
	enum vf_dtype dtype;
	int ndim;
	int64_t *shape;    /* ndim dims in vf_safetensors.dims (NULL for a scalar) */
	int64_t numel;     /* product of shape (1 for a scalar) */
	uint64_t begin;    /* data_offsets, relative to the data section */
	uint64_t end;
};

struct vf_safetensors {
	char *path;              /* as given (owned) */
	uint64_t file_bytes;     /* size of the file */
	uint64_t header_len;     /* N */
	uint64_t data_bytes;     /* end of the data section */
	size_t ntensors;
	struct vf_tensor *tensors; /* in header order */
	cJSON *metadata;         /* __metadata__ (owned) or NULL */
	char *names;             /* every tensor's name, NUL-terminated (owned) */
	int64_t *dims;           /* every tensor's shape, in order (owned) */
	int64_t params;          /* sum of numel */
	int64_t dtype_params[VF_DT_COUNT];
	bool stub;               /* read from a header stub (file_bytes as recorded) */
};

/* A header stub: what vramfit keeps of a file whose header came from the
 * Hub (hub.h): these 8 bytes, the real file's size as u64 little-endian,
 * then the file's first 8 + N bytes and nothing else. No safetensors file
 * starts so (as a header length it exceeds the 100 MB limit), so
 * vf_safetensors_read tells them apart and validates the header against
 * the recorded size; st->stub is then true. */
#define VF_SAFETENSORS_STUB_MAGIC "VFSTHDR\n"

/* Read and validate the header of path (or of a header stub): one pread of its first 128 KiB
 * (the whole file when shorter; a second pread for the rest of a longer
 * header); the tensor data is never looked at. Errors name the file: "<path>: header length ...
 * exceeds ...".
 * Caller owns *st contents; vf_safetensors_release(). */
vf_status vf_safetensors_read(const char *path, struct vf_safetensors *st,
			      struct vf_error *err);

/* Validate a header already in memory: buf holds the first len bytes of a
 * file of file_bytes bytes (len >= 8 + N is needed). what names it. */
vf_status vf_safetensors_parse(const void *buf, size_t len, uint64_t file_bytes,
			       const char *what, struct vf_safetensors *st, struct vf_error *err);

/* Tensor by name, or NULL. Borrowed. */
const struct vf_tensor *vf_safetensors_find(const struct vf_safetensors *st, const char *name);

void vf_safetensors_release(struct vf_safetensors *st);

/* A sharded checkpoint's index (model.safetensors.index.json): the pairs
 * of its weight_map, in order. */
struct vf_safetensors_index {
	size_t n;
	const char **tensors; /* tensor names (in arena) */
	const char **files;   /* the file each is in (in arena; a name repeated in a
			       * row is one string) */
	char *arena;          /* owned */
	bool have_map;
};

/* Scan an index's JSON text (len bytes; what names it in errors): strict
 * JSON, a weight_map object of strings ("<what>: field weight_map: expected
 * an object", "<what>: weight_map['t']: expected a file name", "<what>:
 * invalid JSON near byte N (why)"). No check of the names themselves.
 * Caller owns *ix; vf_safetensors_index_release(). */
vf_status vf_safetensors_index_parse(const char *text, size_t len, const char *what,
				     struct vf_safetensors_index *ix, struct vf_error *err);
void vf_safetensors_index_release(struct vf_safetensors_index *ix);

#endif
