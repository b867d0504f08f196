/* gguf.h - read the header of a GGUF file (what llama.cpp and Ollama run):
 * magic "GGUF", u32 version (2 or 3), u64 tensor count, u64 key-value
 * count, the metadata key-values, the tensor infos (name, dims, ggml type,
 * offset), padding to general.alignment (default 32), then the tensor data
 * (never read here). Little-endian only.
 *
 * Validation follows llama.cpp's reader: unique keys and tensor names
 * (names under 64 bytes), 1 to 4 dims, each row a whole number of blocks,
 * offsets contiguous from 0 with each tensor padded to the alignment, and
 * the data within the file. Every ggml type llama.cpp reads has its block
 * size and bytes per block (vf_ggml_type_*); a removed or unknown type is
 * an error naming the tensor. */
#ifndef VRAMFIT_GGUF_H
#define VRAMFIT_GGUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "vramfit/base/error.h"
#include "vramfit/model/arch.h"

#define VF_GGUF_MAX_HEADER (512u << 20) /* metadata + tensor infos (tokenizers are large) */
#define VF_GGUF_MAX_TENSORS (1u << 20)
#define VF_GGUF_MAX_KV (1u << 16)
#define VF_GGML_TYPES 42                 /* ggml type ids 0 .. 41 */

/* ggml type id -> "Q4_K" ..., or NULL for an id no ggml reads (removed or
 * unknown). Borrowed, static. */
const char *vf_ggml_type_name(int type);
/* Elements per block (1 for plain types, 32, 64, 128 or 256); 0 unknown. */
int vf_ggml_type_block(int type);
/* Bytes per block; 0 unknown. */
int vf_ggml_type_bytes(int type);

struct vf_gguf_tensor {
	char *name;        /* in vf_gguf.names */
	int type;          /* ggml type id */
	int ndim;
	int64_t dims[4];   /* ggml order: dims[0] is the row (innermost) */
	int64_t numel;
	uint64_t offset;   /* relative to the data section */
	uint64_t bytes;    /* as stored: numel / block x bytes per block */
};

struct vf_gguf {
	char *path;               /* as given (owned) */
	uint32_t version;
	uint64_t file_bytes;
	uint64_t header_bytes;    /* where the data section starts (aligned) */
	uint32_t alignment;
	size_t ntensors;
	struct vf_gguf_tensor *tensors;
	char *names;              /* every tensor's name (owned) */
	cJSON *metadata;          /* the key-values: scalars as they are, arrays of up to
				     64 scalars as arrays, longer ones {"type", "count"} (owned) */
	char architecture[64];    /* general.architecture, or "" */
	char name[128];           /* general.name, or "" */
	int64_t vocab;            /* tokenizer.ggml.tokens' length; -1 unknown */
	int64_t params;           /* sum of numel */
	uint64_t data_bytes;      /* sum of the tensors' bytes as stored */
	int64_t type_params[VF_GGML_TYPES];
	uint64_t type_bytes[VF_GGML_TYPES];
};

/* A GGUF header stub: what vramfit keeps of a GGUF file whose header came
 * from the Hub (hub.h): these 8 bytes, the real file's size as u64
 * little-endian, then the file's first bytes up to the data section. */
#define VF_GGUF_STUB_MAGIC "VFGGHDR\n"

/* Read and validate the header of path (or of a header stub; preads of its start, more as the
 * header needs, at most VF_GGUF_MAX_HEADER). Errors name the file:
 * "<path>: tensor 'blk.0.attn_q.weight': ...".
 * Caller owns *g contents; vf_gguf_release(). */
vf_status vf_gguf_read(const char *path, struct vf_gguf *g, struct vf_error *err);

/* Validate a header already in memory: buf holds the first len bytes of a
 * file of file_bytes bytes. what names it. When len is too short for the
 * header and file_bytes is larger, fails with VF_ENOTFOUND ("need more").
 * Caller owns *g contents; vf_gguf_release(). */
vf_status vf_gguf_parse(const void *buf, size_t len, uint64_t file_bytes, const char *what,
			struct vf_gguf *g, struct vf_error *err);

void vf_gguf_release(struct vf_gguf *g);

/* The architecture its metadata gives (<arch>.block_count,
 * .embedding_length, .feed_forward_length, .attention.head_count(_kv),
 * .attention.key_length, .context_length, .expert_count,
 * .expert_used_count; the vocabulary from the tokenizer or the embedding;
 * tied when there is no output.weight), read as the config.json keys of the
 * same family; source "gguf". False when the metadata lacks the sizes. */
bool vf_gguf_arch(const struct vf_gguf *g, struct vf_arch *a, struct vf_error *err);

/* Parameter group of a tensor by its llama.cpp name (token_embd, output,
 * blk.N.attn_*, ffn_*, *_exps, *_norm). */
void vf_gguf_group_tensor(const char *name, int64_t numel, struct vf_param_groups *gr);

#endif
