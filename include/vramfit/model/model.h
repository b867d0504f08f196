/* model.h - resolve "a model" the way every command takes one: a catalog id,
 * a config.json, a .safetensors file, a *.safetensors.index.json, or a
 * directory (Hugging Face model, sharded checkpoint, PEFT adapter,
 * diffusers-style components) - and report what it is: the inspect result.
 *
 * Only headers are read (safetensors.h), never tensor data. Counts that a
 * source cannot give are -1 (a catalog id has no files or dtypes). */
#ifndef VRAMFIT_MODEL_H
#define VRAMFIT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "vramfit/model/arch.h"
#include "vramfit/base/error.h"
#include "vramfit/model/gguf.h"
#include "vramfit/model/qconfig.h"
#include "vramfit/model/ltx.h"
#include "vramfit/model/models.h"
#include "vramfit/model/safetensors.h"
#include "vramfit/model/vision.h"

/* A PEFT (LoRA) adapter. */
struct vf_adapter {
	int64_t rank;         /* r; -1 unknown */
	double alpha;         /* lora_alpha; < 0 unknown */
	char **targets;       /* target module names (owned) */
	size_t ntargets;
	int64_t params;       /* adapter parameters (from the tensors) */
};

struct vf_model {
	char *path;             /* what was given (owned) */
	char format[16];        /* "safetensors" | "sharded" | "hf-dir" | "peft-adapter" |
				   "diffusers" | "config" | "catalog" | "gguf" */
	char name[96];          /* component name (diffusers), catalog id, or "" */
	const struct vf_model_entry *entry; /* catalog entry or NULL (borrowed) */
	int64_t files;          /* safetensors files read; -1 for catalog/config */
	int shard_index, shard_count; /* one file named NAME-00002-of-00004.safetensors given
				       * alone: shard 2 of 4 (its tensors only); 0 otherwise */
	int64_t tensors;        /* -1 unknown */
	int64_t params;         /* total parameters; -1 unknown */
	int64_t bytes;          /* tensor data bytes; -1 unknown */
	int64_t dtype_params[VF_DT_COUNT]; /* parameters per dtype (files only) */
	cJSON *metadata;        /* __metadata__ of the (first) file, owned, or NULL */
	bool has_arch;
	struct vf_arch arch;    /* source: "config.json", "metadata", "tensors", "catalog" */
	bool has_ltx;           /* an LTX video DiT (its config in __metadata__, or its tensors);
				   has_arch is then false: no language-model architecture */
	struct vf_ltx_arch ltx;
	struct vf_ltx_parts ltx_parts; /* has_ltx from files: parameters by part (transformer,
					  connectors, text projection, VAEs, vocoder) */
	bool has_vision;        /* a ViT / CLIP / VLM / diffusers DiT config.json (vision.h);
				   has_arch is then false */
	struct vf_vision vision;
	bool has_groups;
	struct vf_param_groups groups; /* from tensor names when files were read,
					  else from the architecture */
	char groups_source[16]; /* "tensors" | "architecture" */
	struct vf_model **components; /* diffusers: one per component (owned) */
	size_t ncomponents;
	bool has_adapter;
	struct vf_adapter adapter;
	bool has_quant;         /* config.json has a quantization_config (qconfig.h): params
				   unpacked, bytes as stored */
	struct vf_qconfig quant;
	bool count_exact;       /* arch.approximate for its quantization_config alone (a
				   config without weights, quant_method not understood): the
				   count is the config's, the weights' bytes as stored unknown */
	struct vf_gguf *gguf;   /* a GGUF file's header (owned), or NULL; bytes are then
				   as stored (quantized), dtype_params empty */
	/* a Hub id ("org/name[@revision]", hub.h): where its files came from */
	char hub_revision[128];
	char hub_commit[64];
	char hub_source[16];    /* "hf-cache" | "vramfit-cache" | "hub" | "catalog"; "" not a Hub id */
	char hub_dir[4096];     /* the snapshot folder read ("" for the catalog) */
};

/* Resolve and inspect. A string naming an existing path is a path; else
 * "org/name[@revision]" is a Hub id (hub.h: the Hugging Face cache when it
 * holds weights, vramfit's cache of fetched headers, the catalog entry of
 * that Hub id, then - unless HF_HUB_OFFLINE - the Hub; offline, a
 * snapshot of configs only); else a catalog model by any of its names
 * (vf_models_find_loose), an unknown one with "did you mean". Fails with a one-line message naming the file and the problem
 * (VF_ENOTFOUND: neither a path nor a catalog id).
 * Caller owns *out; vf_model_free(). */
vf_status vf_model_load(const char *id_or_path, struct vf_model **out, struct vf_error *err);

void vf_model_free(struct vf_model *m);

/* The inspect --json object (README: vramfit inspect). Caller owns;
 * cJSON_Delete(). */
/* Whether path's file name is a shard of a sharded checkpoint,
 * "...-00002-of-00004.safetensors" with more than one shard: *k of *n. */
bool vf_model_shard_name(const char *path, int *k, int *n);
/* When m is one shard given alone (m->shard_count > 1): err says so and
 * what to give for the whole model (its folder or index), VF_ERR; else VF_OK. */
vf_status vf_model_need_whole(const struct vf_model *m, struct vf_error *err);

cJSON *vf_model_to_json(const struct vf_model *m);

/* Parameter group of one tensor name ("embedding", "attention", "mlp",
 * "norm", "experts", "other"): adds numel to that group of g. */
void vf_model_group_tensor(const char *name, int64_t numel, struct vf_param_groups *g);

/* Infer what the tensor names and shapes say (layers, hidden, vocab, ffn,
 * heads where derivable, tied, experts); every field set is marked
 * inferred, source "tensors". */
void vf_model_infer_arch(const struct vf_safetensors *const *files, size_t nfiles,
			 struct vf_arch *a);

#endif
