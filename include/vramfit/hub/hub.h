/* hub.h - models named by their Hugging Face Hub id, "org/name[@revision]":
 * found in the local Hugging Face cache (huggingface_hub's layout), in
 * vramfit's own cache of fetched headers, or fetched from the Hub - the
 * config files, the safetensors index and each shard's header by HTTP range
 * requests, never a weight byte.
 *
 * Environment, as huggingface_hub reads it: HF_HUB_CACHE, HF_HOME,
 * XDG_CACHE_HOME (caches); HF_ENDPOINT (default https://huggingface.co);
 * HF_TOKEN, else HF_TOKEN_PATH, else $HF_HOME/token; HF_HUB_OFFLINE=1 (no
 * request at all); HF_HUB_ETAG_TIMEOUT / HF_HUB_DOWNLOAD_TIMEOUT (seconds).
 * vramfit's cache: $XDG_CACHE_HOME/vramfit/hub (else ~/.cache/vramfit/hub),
 * laid out like the Hugging Face cache: models--org--name/refs/<revision>
 * holds the commit, snapshots/<commit>/ the files, each .safetensors a
 * header stub (safetensors.h); a GGUF repository's chosen file as a GGUF
 * header stub (gguf.h) in snapshots/<commit>:<TAG>/ (":" alone when only
 * one .gguf and no tag). */
#ifndef VRAMFIT_HUB_H
#define VRAMFIT_HUB_H

#include <stdbool.h>
#include <stddef.h>

#include "vramfit/base/error.h"

#define VF_HUB_PATH_MAX 4096

/* A parsed Hub id. */
struct vf_hub_ref {
	char repo[128];     /* "org/name" */
	char revision[128]; /* branch, tag or commit; "main" when none given */
	bool has_revision;  /* "@revision" was given */
	char tag[64];       /* ":TAG" (llama.cpp's -hf org/name:Q4_K_M): the .gguf file whose
			       name holds it; "" none */
};

/* Parse "org/name[@revision][:TAG]": one '/', each part of letters, digits,
 * '-', '_' and '.' (not "." or ".." and not starting with '-'), a revision
 * without "..", spaces or a leading '/'. False when s is not a Hub id. */
bool vf_hub_ref_parse(const char *s, struct vf_hub_ref *r);

/* Where a model's files were found. */
struct vf_hub_place {
	char dir[VF_HUB_PATH_MAX]; /* a folder of the model's files */
	char commit[64];
	char source[16];           /* "hf-cache" | "vramfit-cache" | "hub" */
	bool weights;              /* it holds weights (or their headers), not only configs */
};

/* Whether HF_HUB_OFFLINE asks for no network ("1", "true", "yes", "on"). */
bool vf_hub_offline(void);

/* The Hugging Face cache folder (HF_HUB_CACHE, $HF_HOME/hub,
 * $XDG_CACHE_HOME/huggingface/hub, ~/.cache/huggingface/hub) into out. */
void vf_hfcache_dir(char *out, size_t n);

/* The snapshot of r in the Hugging Face cache: refs/<revision> gives the
 * commit (a commit is taken as is). VF_ENOTFOUND when it is not there
 * (err says where it was looked for). */
vf_status vf_hfcache_find(const struct vf_hub_ref *r, struct vf_hub_place *p,
			  struct vf_error *err);

/* The snapshot of r in vramfit's cache of fetched headers (complete ones
 * only). VF_ENOTFOUND when it is not there. */
vf_status vf_hub_cache_find(const struct vf_hub_ref *r, struct vf_hub_place *p,
			    struct vf_error *err);

/* Fetch r's configs, index and safetensors headers from the Hub into
 * vramfit's cache (temp folder, then renamed into place) and say where.
 * One line for each failure: no libcurl, no network, timeout, gated or
 * private (401/403), missing repo, revision or file (404), rate limit
 * (429, with the retry time), a reply that ignored the range, a truncated
 * or oversized header. */
vf_status vf_hub_fetch(const struct vf_hub_ref *r, struct vf_hub_place *p, struct vf_error *err);

#endif
