/* model.c - resolve a model (catalog id, config.json, safetensors file,
 * sharded index, HF / PEFT / diffusers directory) into the inspect result:
 * files, tensors, parameters, bytes, dtypes, architecture, parameter
 * groups, components and adapter. Reads headers only. */
#include "vramfit/model/model.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vramfit/base/buf.h"
#include "vramfit/base/hash.h"
#include "vramfit/base/json.h"
#include "vramfit/model/towers.h"
#include "vramfit/hub/hub.h"

#define MAX_CONFIG (16u << 20)  /* config.json, adapter_config.json, index */
#define MAX_COMPONENTS 32
#define MAX_SHARDS 100000

static struct vf_model *model_new(const char *path, struct vf_error *err)
{
	struct vf_model *m = calloc(1, sizeof *m);
	if (m)
		m->path = strdup(path);
	if (!m || !m->path) {
		free(m);
		vf_error_set(err, VF_ENOMEM, "%s: out of memory", path);
		return NULL;
	}
	m->files = m->tensors = m->params = m->bytes = -1;
	m->adapter.rank = -1;
	m->adapter.alpha = -1;
	vf_arch_init(&m->arch);
	return m;
}

/* Everything m owns but its path. */
static void model_release(struct vf_model *m)
{
	for (size_t i = 0; i < m->ncomponents; i++)
		vf_model_free(m->components[i]);
	free(m->components);
	for (size_t i = 0; i < m->adapter.ntargets; i++)
		free(m->adapter.targets[i]);
	free(m->adapter.targets);
	cJSON_Delete(m->metadata);
	vf_gguf_release(m->gguf);
	free(m->gguf);
}

void vf_model_free(struct vf_model *m)
{
	if (!m)
		return;
	model_release(m);
	free(m->path);
	free(m);
}

/* Back to what model_new made (a second source after a failed first). */
static void model_reset(struct vf_model *m)
{
	char *path = m->path;
	model_release(m);
	memset(m, 0, sizeof *m);
	m->path = path;
	m->files = m->tensors = m->params = m->bytes = -1;
	m->adapter.rank = -1;
	m->adapter.alpha = -1;
	vf_arch_init(&m->arch);
}

static void set_groups_from_arch(struct vf_model *m)
{
	if (m->has_arch && vf_arch_param_groups(&m->arch, &m->groups)) {
		m->has_groups = true;
		snprintf(m->groups_source, sizeof m->groups_source, "architecture");
	}
}

/* A quantization_config vramfit does not read (quant_method unknown, or
 * its bits): named, and the result approximate (the weights' bytes as
 * stored are not known). */
static void quant_not_understood(struct vf_model *m)
{
	char note[96];
	snprintf(note, sizeof note, "quantization_config (quant_method %s)", m->quant.method);
	m->count_exact = m->files < 0 && !m->arch.approximate;
	vf_arch_not_understood(&m->arch, note);
}

/* ---- catalog ids and config.json --------------------------------------- */

static vf_status load_catalog(const struct vf_model_entry *e, struct vf_model *m)
{
	snprintf(m->format, sizeof m->format, "catalog");
	snprintf(m->name, sizeof m->name, "%s", e->id);
	m->entry = e;
	m->params = e->params;
	if (e->has_arch) {
		m->has_arch = true;
		m->arch = e->arch;
	}
	if (e->has_groups) {
		m->has_groups = true;
		m->groups = e->groups;
		snprintf(m->groups_source, sizeof m->groups_source, "architecture");
	}
	return VF_OK;
}

/* A config.json: a vision or diffusion transformer's (vision.h) into
 * m->vision, else a language model's into *a; quant: its
 * quantization_config into m->quant too (a config without weights: a
 * checkpoint's is read with its tensors, unpack_quantized). */
static vf_status read_config(const char *path, struct vf_model *m, struct vf_arch *a,
			     bool quant, struct vf_error *err)
{
	cJSON *cfg = NULL;
	vf_status st = vf_json_parse_file(path, MAX_CONFIG, &cfg, err);
	if (st == VF_OK && vf_towers_config_is(cfg)) { /* speech, ViT backbones, VLMs (towers.h) */
		st = vf_towers_from_config(cfg, path, &m->vision, err);
		m->has_vision = st == VF_OK;
	} else if (st == VF_OK && vf_vision_config_is(cfg)) {
		st = vf_vision_from_config(cfg, path, &m->vision, err);
		m->has_vision = st == VF_OK;
	} else if (st == VF_OK) {
		st = vf_arch_from_config(cfg, path, a, err);
		if (quant)
			m->has_quant = vf_qconfig_read(cfg, &m->quant);
		/* a timm config names its model in "architecture": said when
		 * not understood (load_config_file) */
		const char *timm = vf_json_get_str(cfg, "architecture");
		if (st == VF_ENOTFOUND && !(a->known & VF_ARCH_F_FAMILY) && timm && timm[0]) {
			snprintf(a->family, sizeof a->family, "timm %s", timm);
			a->known |= VF_ARCH_F_FAMILY;
		}
	}
	cJSON_Delete(cfg);
	return st;
}

static vf_status load_config_file(const char *path, struct vf_model *m, struct vf_error *err)
{
	snprintf(m->format, sizeof m->format, "config");
	vf_status st = read_config(path, m, &m->arch, true, err);
	if (st == VF_ENOTFOUND && (m->arch.known & VF_ARCH_F_FAMILY)) {
		/* a valid config of an architecture not understood (no hidden
		 * size or layer count where its family is read): said, not
		 * refused; no count */
		char note[200];
		snprintf(note, sizeof note, "architecture %s (%s)", m->arch.family,
			 strstr(err->msg, "no layer count") ? "no layer count" : "no hidden size");
		m->arch.not_understood[0] = 0;
		vf_arch_not_understood(&m->arch, note);
		vf_error_clear(err);
		m->has_arch = true;
		return VF_OK;
	}
	if (st != VF_OK)
		return st;
	if (m->has_vision) {
		/* a diffusers class not understood is named, not counted */
		m->params = strcmp(m->vision.kind, "unknown") == 0 ? -1 : m->vision.params;
		return VF_OK;
	}
	m->has_arch = true;
	set_groups_from_arch(m);
	if (m->has_groups)
		m->params = m->groups.total;
	if (m->has_quant && !m->quant.understood)
		quant_not_understood(m);
	return VF_OK;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

static char *path_join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%s/%s", dir, name);
	return p;
}

static vf_status stat_error(const char *path, int e, struct vf_error *err)
{
	return vf_error_set(err, e == ENOENT ? VF_ENOTFOUND : VF_ERR, "%s: %s", path,
			    e == ELOOP ? "symlink loop (too many levels of symbolic links)"
				       : strerror(e));
}

/* ---- parameter groups and architecture from tensor names --------------- */

static bool has(const char *lower, const char *needle)
{
	return strstr(lower, needle) != NULL;
}

enum { G_OTHER, G_EXPERTS, G_NORM, G_EMBEDDING, G_ATTENTION, G_MLP };

static int group_of(const char *name)
{
	char low[512];
	size_t i = 0;
	for (; name[i] && i < sizeof low - 1; i++)
		low[i] = (char)tolower((unsigned char)name[i]);
	low[i] = 0;
	if (has(low, ".experts.") || has(low, "block_sparse_moe") || has(low, ".moe.") ||
	    has(low, "mlp.gate.weight") || has(low, "router"))
		return G_EXPERTS;
	if (has(low, "norm") || has(low, "ln_") || has(low, "ln.") || has(low, "layernorm") ||
	    has(low, "layer_norm"))
		return G_NORM;
	if (has(low, "embed") || has(low, "lm_head") || has(low, "wte.") || has(low, "wpe.") ||
	    strcmp(low, "shared.weight") == 0 || strcmp(low, "output.weight") == 0 ||
	    has(low, "word_embeddings"))
		return G_EMBEDDING;
	if (has(low, "attn") || has(low, "attention") || has(low, "q_proj") ||
	    has(low, "k_proj") || has(low, "v_proj") || has(low, "o_proj") || has(low, "qkv") ||
	    has(low, ".to_q") || has(low, ".to_k") || has(low, ".to_v") || has(low, ".to_out"))
		return G_ATTENTION;
	if (has(low, "mlp") || has(low, "ffn") || has(low, "feed_forward") ||
	    has(low, "densereludense") || has(low, ".ff.") || has(low, "gate_proj") ||
	    has(low, "up_proj") || has(low, "down_proj") || has(low, "fc1") || has(low, "fc2") ||
	    has(low, "dense_h_to_4h") || has(low, "dense_4h_to_h"))
		return G_MLP;
	return G_OTHER;
}

static void group_add(struct vf_param_groups *g, int group, int64_t numel)
{
	int64_t *slot = group == G_EXPERTS	? &g->experts
			: group == G_NORM	? &g->norm
			: group == G_EMBEDDING	? &g->embedding
			: group == G_ATTENTION	? &g->attention
			: group == G_MLP	? &g->mlp
						: &g->other;
	*slot += numel;
	g->total += numel;
}

void vf_model_group_tensor(const char *name, int64_t numel, struct vf_param_groups *g)
{
	group_add(g, group_of(name), numel);
}

/* Is [p, p + n) one of the words a layer index follows? */
static bool layer_word(const char *p, size_t n)
{
	switch (n) {
	case 1: return p[0] == 'h';
	case 5: return memcmp(p, "layer", 5) == 0 || memcmp(p, "block", 5) == 0;
	case 6: return memcmp(p, "layers", 6) == 0 || memcmp(p, "blocks", 6) == 0;
	case 18: return memcmp(p, "transformer_blocks", 18) == 0;
	case 25: return memcmp(p, "single_transformer_blocks", 25) == 0;
	default: return false;
	}
}

/* Index of the first "<layers|h|blocks|transformer_blocks|block|layer|
 * single_transformer_blocks>.<N>." in a dotted name, or -1; *at / *len:
 * where its digits are. One pass over the name. */
static inline bool digit(char c)
{
	return (unsigned)(c - '0') < 10;
}

static long layer_span(const char *name, size_t *at, size_t *len)
{
	const char *p = name; /* the current part */
	for (const char *q = name; *q; q++) {
		if (*q != '.')
			continue;
		/* most parts are not followed by a digit: that test first */
		if (digit(q[1]) && layer_word(p, (size_t)(q - p))) {
			const char *end = q + 1; /* the digits, as strtol reads them */
			long v = 0;
			for (; digit(*end); end++)
				v = v < 1000000 ? v * 10 + (*end - '0') : v;
			if (*end == '.' && v >= 0 && v < 1000000) {
				*at = (size_t)(q + 1 - name);
				*len = (size_t)(end - (q + 1));
				return v;
			}
		}
		p = q + 1;
	}
	return -1;
}

static long layer_index(const char *name)
{
	size_t at, len;
	return layer_span(name, &at, &len);
}

/* ---- names seen before ---------------------------------------------------
 * A checkpoint repeats its names layer after layer, and what a name says
 * (its parameter group, what the inference reads from it) does not depend
 * on its layer index: no pattern here spans one (an index sits between
 * "<layers|h|blocks|...>." and ".", and the patterns with digits are
 * "fc1", "fc2", "4h", "wi_0", "experts.0."). So a name with its index
 * blanked ("model.layers.#.mlp.up_proj.weight") and its ndim make a
 * pattern, worked out once: first for each file, by the thread that read
 * it (file_names), then once per file's pattern over all files (memo).
 * Names of 500 bytes or more (group_of reads 511) make none. */
struct pattern {
	const char *first; /* the file's first tensor name with it */
	size_t key;        /* its key: offset in file_names.keys */
	size_t keylen;
	uint64_t hash;     /* of the key, seeded with ndim */
	int ndim;
	int group;         /* group_of */
	bool lora;         /* the name holds "lora" */
	bool wpe;          /* a learned position table (2-d "...wpe.weight") */
	bool dec;          /* a decoder's ("decoder.") */
	int64_t numel;     /* summed over the file's tensors */
};

struct file_names {
	int32_t *pat; /* per tensor: its pattern, -1 for none; NULL when not worked out */
	int32_t *li;  /* per tensor: its layer index, -1 for none */
	struct pattern *p;
	size_t np;
	char *keys;
	bool lora; /* a pattern holds "lora", or a name made none */
};

static void file_names_release(struct file_names *fn)
{
	free(fn->pat);
	free(fn->li);
	free(fn->p);
	free(fn->keys);
	memset(fn, 0, sizeof *fn);
}

/* name with its layer index blanked into key (room for 512); false when
 * the name is too long to keep. *li: the layer index; *kl: key's length. */
static bool name_key(const char *name, char *key, size_t *kl, long *li)
{
	size_t n = strlen(name), at = 0, len = 0;
	if (n >= 500)
		return false;
	*li = layer_span(name, &at, &len);
	if (*li < 0) {
		memcpy(key, name, n + 1);
		*kl = n;
		return true;
	}
	memcpy(key, name, at);
	key[at] = '#';
	memcpy(key + at + 1, name + at + len, n - at - len + 1);
	*kl = n - len + 1;
	return true;
}

static uint64_t key_hash(const char *key, size_t kl, int ndim)
{
	return vf_hash_bytes(key, kl, (uint64_t)(unsigned)ndim);
}

/* The patterns of one file's tensors; false (fn left empty) when memory
 * runs out: the callers then work each tensor out on its own. */
static bool file_names_make(const struct vf_safetensors *st, struct file_names *fn)
{
	memset(fn, 0, sizeof *fn);
	size_t n = st->ntensors, cap = 16, pcap = 0, kcap = 0, klen = 0;
	while (cap < 2 * n)
		cap *= 2;
	uint32_t *slot = calloc(cap, sizeof *slot); /* pattern + 1, 0 empty */
	fn->pat = malloc((n ? n : 1) * sizeof *fn->pat);
	fn->li = malloc((n ? n : 1) * sizeof *fn->li);
	if (!slot || !fn->pat || !fn->li || n > INT32_MAX)
		goto fail;
	char key[512];
	for (size_t i = 0; i < n; i++) {
		const struct vf_tensor *t = &st->tensors[i];
		size_t kl;
		long li;
		if (!name_key(t->name, key, &kl, &li)) {
			fn->pat[i] = fn->li[i] = -1;
			fn->lora = true;
			continue;
		}
		uint64_t h = key_hash(key, kl, t->ndim);
		size_t k = (size_t)h & (cap - 1);
		for (; slot[k]; k = (k + 1) & (cap - 1)) {
			const struct pattern *p = &fn->p[slot[k] - 1];
			if (p->hash == h && p->ndim == t->ndim && p->keylen == kl &&
			    memcmp(fn->keys + p->key, key, kl) == 0)
				break;
		}
		if (!slot[k]) {
			if (fn->np == pcap) {
				pcap = pcap ? 2 * pcap : 64;
				struct pattern *g = realloc(fn->p, pcap * sizeof *g);
				if (!g)
					goto fail;
				fn->p = g;
			}
			if (klen + kl + 1 > kcap) {
				kcap = 2 * (klen + kl + 1) > 4096 ? 2 * (klen + kl + 1) : 4096;
				char *g = realloc(fn->keys, kcap);
				if (!g)
					goto fail;
				fn->keys = g;
			}
			memcpy(fn->keys + klen, key, kl + 1);
			struct pattern *p = &fn->p[fn->np];
			*p = (struct pattern){
				.first = t->name,
				.key = klen,
				.keylen = kl,
				.hash = h,
				.ndim = t->ndim,
				.group = group_of(t->name),
				.lora = strstr(t->name, "lora") != NULL,
				.wpe = t->ndim == 2 && ends_with(t->name, "wpe.weight"),
				.dec = strncmp(t->name, "decoder.", 8) == 0,
			};
			klen += kl + 1;
			fn->lora = fn->lora || p->lora;
			slot[k] = (uint32_t)++fn->np;
		}
		fn->p[slot[k] - 1].numel += t->numel;
		fn->pat[i] = (int32_t)(slot[k] - 1);
		fn->li[i] = (int32_t)li;
	}
	free(slot);
	return true;
fail:
	free(slot);
	file_names_release(fn);
	return false;
}

/* The patterns of every file, merged: an entry per (key, ndim), in the
 * order first seen. The keys are the files' (not copied). */
struct memo_ent {
	const char *key;
	size_t keylen;
	uint64_t hash;
	int ndim;
	int value;
};

struct memo {
	struct memo_ent *e; /* n entries */
	size_t n, ecap;
	uint32_t *slot;     /* entry + 1, 0 empty */
	size_t cap;
};

static void memo_release(struct memo *m)
{
	free(m->e);
	free(m->slot);
	memset(m, 0, sizeof *m);
}

/* The entry of pattern p of file fn: *found says whether it was there; a
 * new one has value -1. SIZE_MAX when memory runs out (the caller works
 * the tensor out on its own). */
static size_t memo_get(struct memo *m, const struct file_names *fn, const struct pattern *p,
		       bool *found)
{
	if (2 * (m->n + 1) > m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 256;
		uint32_t *s = calloc(cap, sizeof *s);
		if (!s || cap > UINT32_MAX) {
			free(s);
			return SIZE_MAX;
		}
		for (size_t i = 0; i < m->n; i++) {
			size_t h = (size_t)m->e[i].hash & (cap - 1);
			while (s[h])
				h = (h + 1) & (cap - 1);
			s[h] = (uint32_t)(i + 1);
		}
		free(m->slot);
		m->slot = s;
		m->cap = cap;
	}
	const char *key = fn->keys + p->key;
	size_t h = (size_t)p->hash & (m->cap - 1);
	for (; m->slot[h]; h = (h + 1) & (m->cap - 1)) {
		const struct memo_ent *e = &m->e[m->slot[h] - 1];
		if (e->hash == p->hash && e->ndim == p->ndim && e->keylen == p->keylen &&
		    memcmp(e->key, key, p->keylen) == 0) {
			*found = true;
			return m->slot[h] - 1;
		}
	}
	*found = false;
	if (m->n == m->ecap) {
		size_t c = m->ecap ? 2 * m->ecap : 64;
		struct memo_ent *g = realloc(m->e, c * sizeof *g);
		if (!g)
			return SIZE_MAX;
		m->e = g;
		m->ecap = c;
	}
	m->e[m->n] = (struct memo_ent){key, p->keylen, p->hash, p->ndim, -1};
	m->slot[h] = (uint32_t)(m->n + 1);
	return m->n++;
}

static long index_after(const char *name, const char *word)
{
	const char *p = strstr(name, word);
	if (!p)
		return -1;
	p += strlen(word);
	if (!isdigit((unsigned char)*p))
		return -1;
	char *end;
	long v = strtol(p, &end, 10);
	return (*end == '.' && v < 1000000) ? v : -1;
}

#define SET(field, bit, v)                       \
	do {                                     \
		a->field = (v);                  \
		a->known |= (bit);               \
		a->inferred |= (bit);            \
	} while (0)

/* What the tensor names say, collected over every file: flags, the
 * largest layer / expert indices, and the tensors whose shapes give the
 * sizes. */
enum {
	SC_NEOX = 1u << 0,
	SC_GPT2 = 1u << 1,
	SC_FALCON = 1u << 2,
	SC_T5ENC = 1u << 3,
	SC_T5DEC = 1u << 4,
	SC_MIXTRAL = 1u << 5,
	SC_QNORM = 1u << 6,
	SC_PREFN = 1u << 7,
	SC_QKVPROJ = 1u << 8,
	SC_DIT = 1u << 9,
	SC_QPROJ = 1u << 10,
	SC_QBIAS = 1u << 11,
	SC_MLA = 1u << 12,
	SC_EXPERTS = 1u << 13,
	SC_SHARED1 = 1u << 14, /* qwen2_moe: one shared_expert */
	SC_SINKS = 1u << 15,
	SC_LMHEAD = 1u << 16,
};

/* Name fragments -> flags ('^': prefix, '$': suffix, else substring). */
static const struct {
	const char *pat;
	unsigned flag;
} name_flags[] = {
	{"^gpt_neox.", SC_NEOX},
	{".c_attn.", SC_GPT2},
	{"self_attention.query_key_value", SC_FALCON},
	{"^encoder.block.", SC_T5ENC},
	{"^decoder.block.", SC_T5DEC},
	{"block_sparse_moe", SC_MIXTRAL},
	{"q_norm.weight", SC_QNORM},
	{"pre_feedforward_layernorm", SC_PREFN},
	{"self_attn.qkv_proj", SC_QKVPROJ},
	{"^transformer_blocks.", SC_DIT},
	{".transformer_blocks.", SC_DIT},
	{"self_attn.q_proj.weight", SC_QPROJ},
	{"self_attn.q_proj.bias", SC_QBIAS},
	{"kv_a_proj_with_mqa", SC_MLA},
	{"mlp.experts.", SC_EXPERTS},
	{"mlp.shared_expert.", SC_SHARED1},
	{"self_attn.sinks", SC_SINKS},
	{"$lm_head.weight", SC_LMHEAD},
	{"$embed_out.weight", SC_LMHEAD},
};

/* Families by the flags their tensors raise: first row whose flags are
 * all present. */
static const struct {
	unsigned need;
	const char *family;
} family_rules[] = {
	{SC_NEOX, "gpt_neox"},
	{SC_FALCON, "falcon"},
	{SC_GPT2, "gpt2"},
	{SC_T5ENC | SC_T5DEC, "t5"},
	{SC_MLA, "deepseek_v3"},
	{SC_SINKS, "gpt_oss"},
	{SC_MIXTRAL, "mixtral"},
	{SC_EXPERTS | SC_SHARED1, "qwen2_moe"},
	{SC_EXPERTS | SC_QNORM, "qwen3_moe"},
	{SC_QKVPROJ, "phi3"},
	{SC_QPROJ | SC_PREFN | SC_QNORM, "gemma3"},
	{SC_QPROJ | SC_PREFN, "gemma2"},
	{SC_QPROJ | SC_QNORM, "qwen3"},
	{SC_QPROJ | SC_QBIAS, "qwen2"},
	{SC_QPROJ, "llama"},
	{SC_DIT, "dit"},
};

struct scan {
	unsigned flags;
	long max_layer, max_dec, max_expert;
	const struct vf_tensor *emb, *wpe, *ffn, *expert_ffn, *relb, *qn, *q, *k;
	const struct vf_tensor *q_a_norm, *kv_a_norm, *kv_a, *q_b, *kv_b, *o;
	bool ffn_conv1d, ffn_fused;
};

static bool name_matches(const char *n, const char *pat)
{
	if (pat[0] == '^')
		return strncmp(n, pat + 1, strlen(pat + 1)) == 0;
	if (pat[0] == '$')
		return ends_with(n, pat + 1) || strcmp(n, "output.weight") == 0;
	return strstr(n, pat) != NULL;
}

/* The first layer's MLP input matrix (dense) and an expert's. */
static void scan_ffn(struct scan *sc, const struct vf_tensor *t, long li)
{
	const char *n = t->name;
	if (t->ndim != 2)
		return;
	if (!sc->expert_ffn && (strstr(n, "experts.0.gate_proj.weight") ||
				strstr(n, "experts.0.w1.weight")))
		sc->expert_ffn = t;
	if (li != 0 || sc->ffn)
		return;
	if (ends_with(n, "mlp.c_fc.weight")) {
		sc->ffn = t;
		sc->ffn_conv1d = true;
	} else if (ends_with(n, "mlp.gate_up_proj.weight")) {
		sc->ffn = t;
		sc->ffn_fused = true;
	} else if (ends_with(n, "mlp.gate_proj.weight") || ends_with(n, "mlp.up_proj.weight") ||
		   ends_with(n, "mlp.dense_h_to_4h.weight") ||
		   ends_with(n, "DenseReluDense.wi.weight") ||
		   ends_with(n, "DenseReluDense.wi_0.weight") || ends_with(n, "mlp.fc1.weight") ||
		   ends_with(n, "feed_forward.w1.weight") || strstr(n, "experts.0.w1.weight") ||
		   strstr(n, "experts.0.gate_proj.weight")) {
		sc->ffn = t;
	}
}

/* The tensors of layer 0 whose shapes give heads and MLA ranks. */
static void scan_attention(struct scan *sc, const struct vf_tensor *t, long li, bool dec)
{
	const char *n = t->name;
	if (t->ndim == 2 && !sc->relb && strstr(n, "relative_attention_bias.weight"))
		sc->relb = t;
	if (li != 0 || dec)
		return;
	const struct vf_tensor **slot = NULL;
	if (t->ndim == 1 && strstr(n, "q_norm.weight"))
		slot = &sc->qn;
	else if (t->ndim == 1 && ends_with(n, "q_a_layernorm.weight"))
		slot = &sc->q_a_norm;
	else if (t->ndim == 1 && ends_with(n, "kv_a_layernorm.weight"))
		slot = &sc->kv_a_norm;
	else if (t->ndim == 2 && ends_with(n, "kv_a_proj_with_mqa.weight"))
		slot = &sc->kv_a;
	else if (t->ndim == 2 && ends_with(n, "q_b_proj.weight"))
		slot = &sc->q_b;
	else if (t->ndim == 2 && ends_with(n, "kv_b_proj.weight"))
		slot = &sc->kv_b;
	else if (t->ndim == 2 && ends_with(n, "self_attn.o_proj.weight"))
		slot = &sc->o;
	else if (t->ndim == 2 && (ends_with(n, "q_proj.weight") || ends_with(n, "SelfAttention.q.weight")))
		slot = &sc->q;
	else if (t->ndim == 2 && (ends_with(n, "k_proj.weight") || ends_with(n, "SelfAttention.k.weight")))
		slot = &sc->k;
	if (slot && !*slot)
		*slot = t;
}

static void scan_tensor(struct scan *sc, const struct vf_tensor *t)
{
	const char *n = t->name;
	long li = layer_index(n);
	bool dec = strncmp(n, "decoder.", 8) == 0;
	if (dec && li > sc->max_dec)
		sc->max_dec = li;
	else if (!dec && li > sc->max_layer)
		sc->max_layer = li;
	long ei = index_after(n, "experts.");
	if (ei > sc->max_expert)
		sc->max_expert = ei;
	for (size_t i = 0; i < sizeof name_flags / sizeof name_flags[0]; i++)
		if (name_matches(n, name_flags[i].pat))
			sc->flags |= name_flags[i].flag;
	if (t->ndim == 2 && !sc->emb &&
	    (ends_with(n, "embed_tokens.weight") || ends_with(n, "wte.weight") ||
	     ends_with(n, "embed_in.weight") || ends_with(n, "word_embeddings.weight") ||
	     strcmp(n, "shared.weight") == 0 || ends_with(n, "tok_embeddings.weight")))
		sc->emb = t;
	if (t->ndim == 2 && ends_with(n, "wpe.weight"))
		sc->wpe = t;
	scan_ffn(sc, t, li);
	scan_attention(sc, t, li, dec);
}

/* Heads from shapes: T5's relative bias table is [buckets, heads]; a
 * q_norm gives head_dim, then q and k rows give heads and kv heads. */
static void infer_heads(const struct scan *sc, struct vf_arch *a)
{
	const struct vf_tensor *relb = sc->relb, *qn = sc->qn, *q = sc->q, *k = sc->k;
	if (relb) {
		SET(heads, VF_ARCH_F_HEADS, relb->shape[1]);
		a->rel_attn_buckets = relb->shape[0];
		if (q && relb->shape[1] > 0 && q->shape[0] % relb->shape[1] == 0)
			SET(head_dim, VF_ARCH_F_HEAD_DIM, q->shape[0] / relb->shape[1]);
		SET(kv_heads, VF_ARCH_F_KV_HEADS, relb->shape[1]);
	} else if (qn && qn->shape[0] > 0) {
		int64_t hd = qn->shape[0];
		SET(head_dim, VF_ARCH_F_HEAD_DIM, hd);
		if (q && q->shape[0] % hd == 0)
			SET(heads, VF_ARCH_F_HEADS, q->shape[0] / hd);
		if (k && k->shape[0] % hd == 0)
			SET(kv_heads, VF_ARCH_F_KV_HEADS, k->shape[0] / hd);
	}
}

/* MLA from shapes: kv_a_layernorm = kv_lora_rank, kv_a rows = rank +
 * rope, q_a_layernorm = q_lora_rank; with A = kv_b rows = heads (nope + v),
 * B = q_b rows = heads (nope + rope), C = o columns = heads x v:
 * heads = (B - A + C) / rope. */
static void infer_mla(const struct scan *sc, struct vf_arch *a)
{
	const struct vf_tensor *qb = sc->q_b ? sc->q_b : sc->q; /* q_proj when no q rank */
	if (!sc->kv_a_norm || !sc->kv_a || !sc->kv_b || !qb || !sc->o)
		return;
	int64_t kvl = sc->kv_a_norm->shape[0], rope = sc->kv_a->shape[0] - kvl;
	int64_t A = sc->kv_b->shape[0], B = qb->shape[0], C = sc->o->shape[1];
	if (kvl <= 0 || rope <= 0 || (B - A + C) <= 0 || (B - A + C) % rope != 0)
		return;
	int64_t heads = (B - A + C) / rope;
	if (heads <= 0 || C % heads != 0 || (A - C) % heads != 0)
		return;
	a->kv_lora_rank = kvl;
	a->q_lora_rank = sc->q_a_norm ? sc->q_a_norm->shape[0] : 0;
	a->qk_rope_dim = rope;
	a->v_head_dim = C / heads;
	a->qk_nope_dim = (A - C) / heads;
	SET(heads, VF_ARCH_F_HEADS, heads);
	SET(kv_heads, VF_ARCH_F_KV_HEADS, heads);
	SET(head_dim, VF_ARCH_F_HEAD_DIM, a->qk_nope_dim + rope);
}

/* Sizes from the collected shapes. */
static void infer_sizes(const struct scan *sc, struct vf_arch *a, const char *fam)
{
	if (sc->max_layer >= 0)
		SET(layers, VF_ARCH_F_LAYERS, sc->max_layer + 1);
	if (sc->max_dec >= 0)
		a->decoder_layers = sc->max_dec + 1;
	if (sc->emb) {
		SET(vocab, VF_ARCH_F_VOCAB, sc->emb->shape[0]);
		SET(hidden, VF_ARCH_F_HIDDEN, sc->emb->shape[1]);
		SET(tied_embeddings, VF_ARCH_F_TIED, !(sc->flags & SC_LMHEAD));
	} else if (sc->q && sc->q->shape[1] > 0) {
		SET(hidden, VF_ARCH_F_HIDDEN, sc->q->shape[1]);
	}
	if (sc->wpe) {
		SET(max_positions, VF_ARCH_F_MAX_POSITIONS, sc->wpe->shape[0]);
		a->learned_positions = true;
	}
	if (sc->ffn) {
		int64_t v = sc->ffn_conv1d ? sc->ffn->shape[1] : sc->ffn->shape[0];
		if (sc->ffn_fused)
			v /= 2;
		SET(ffn, VF_ARCH_F_FFN, v);
	}
	if (sc->max_expert >= 0) {
		SET(experts, VF_ARCH_F_EXPERTS, sc->max_expert + 1);
		if (sc->expert_ffn)
			a->moe_ffn = sc->expert_ffn->shape[0];
	} else if (fam && strcmp(fam, "dit") != 0) {
		SET(experts, VF_ARCH_F_EXPERTS, 0);
	}
}

/* What the names of files say, with their patterns (names[f] of files[f],
 * each worked out or not; names NULL: none). */
static void infer_arch(const struct vf_safetensors *const *files,
		       const struct file_names *names, size_t nfiles, struct vf_arch *a)
{
	vf_arch_init(a);
	snprintf(a->source, sizeof a->source, "tensors");
	struct scan sc;
	memset(&sc, 0, sizeof sc);
	sc.max_layer = sc.max_dec = sc.max_expert = -1;
	/* a name seen before (index blanked, same ndim) past layer 0 changes
	 * only the largest layer index and, for a wpe, the last wpe: every
	 * other slot takes the first tensor that fits, and its first
	 * occurrence settled that */
	struct memo memo = {0};
	for (size_t f = 0; f < nfiles; f++) {
		const struct file_names *fn = names ? &names[f] : NULL;
		/* the file's patterns' entries + 1, 0 until met (NULL: each
		 * tensor on its own, as when memory runs out) */
		size_t *ent = fn && fn->pat ? calloc(fn->np ? fn->np : 1, sizeof *ent) : NULL;
		for (size_t i = 0; i < files[f]->ntensors; i++) {
			const struct vf_tensor *t = &files[f]->tensors[i];
			int32_t pi = ent ? fn->pat[i] : -1;
			if (pi < 0) {
				scan_tensor(&sc, t);
				continue;
			}
			const struct pattern *p = &fn->p[pi];
			bool found = true;
			if (!ent[pi]) {
				size_t e = memo_get(&memo, fn, p, &found);
				if (e == SIZE_MAX) {
					scan_tensor(&sc, t);
					continue;
				}
				ent[pi] = e + 1;
			}
			struct memo_ent *e = &memo.e[ent[pi] - 1];
			long li = fn->li[i];
			if (found && li > 0) {
				long *max = p->dec ? &sc.max_dec : &sc.max_layer;
				if (li > *max)
					*max = li;
				if (e->value)
					sc.wpe = t;
				continue;
			}
			scan_tensor(&sc, t);
			if (!found)
				e->value = p->wpe;
		}
		free(ent);
	}
	memo_release(&memo);
	const char *fam = NULL;
	for (size_t i = 0; i < sizeof family_rules / sizeof family_rules[0] && !fam; i++)
		if ((sc.flags & family_rules[i].need) == family_rules[i].need)
			fam = family_rules[i].family;
	if (fam) {
		snprintf(a->family, sizeof a->family, "%s", fam);
		a->known |= VF_ARCH_F_FAMILY;
		a->inferred |= VF_ARCH_F_FAMILY;
	}
	infer_sizes(&sc, a, fam);
	infer_heads(&sc, a);
	infer_mla(&sc, a);
}

void vf_model_infer_arch(const struct vf_safetensors *const *files, size_t nfiles,
			 struct vf_arch *a)
{
	struct file_names *names = calloc(nfiles ? nfiles : 1, sizeof *names);
	for (size_t f = 0; names && f < nfiles; f++)
		file_names_make(files[f], &names[f]);
	infer_arch(files, names, nfiles, a);
	for (size_t f = 0; names && f < nfiles; f++)
		file_names_release(&names[f]);
	free(names);
}

/* ---- reading safetensors files into a model ---------------------------- */

/* The slot of tensor name in a table of weight_map indices + 1 (open
 * addressing, cap a power of two) over the map's tensor names: its
 * entry, or the empty slot where it would go. */
static size_t map_slot(const uint32_t *table, size_t cap, const char *const *tensors,
		       const char *name)
{
	size_t k = (size_t)vf_hash_str(name) & (cap - 1);
	while (table[k] && strcmp(tensors[table[k] - 1], name) != 0)
		k = (k + 1) & (cap - 1);
	return k;
}

/* A sharded checkpoint's index, checked against each shard by the thread
 * that read it: its weight_map (tensor i in files[i]), the table by
 * tensor name, a mark per entry met, the shards' names in file order. */
struct shard_check {
	const uint32_t *table;
	size_t cap;
	const char *const *tensors, *const *files;
	bool *seen;
	char *const *shards;
};

/* What shard i's check found: every tensor in the map, on shard i (ok),
 * or the first that is not (at: its index). */
enum { SC_OK, SC_UNLISTED, SC_ELSEWHERE };

struct shard_result {
	int what;
	size_t at;
};

/* Every tensor of st in the map, pointing at shard i: marked seen (an
 * entry is marked only by the reader of the shard it names: no two
 * threads write one). */
static struct shard_result shard_check(const struct shard_check *c, size_t i,
				       const struct vf_safetensors *st)
{
	for (size_t t = 0; t < st->ntensors; t++) {
		size_t k = map_slot(c->table, c->cap, c->tensors, st->tensors[t].name);
		if (!c->table[k])
			return (struct shard_result){SC_UNLISTED, t};
		size_t e = c->table[k] - 1;
		/* the index's repeated file names are one string (a pointer test first) */
		if (c->files[e] != c->shards[i] && strcmp(c->files[e], c->shards[i]) != 0)
			return (struct shard_result){SC_ELSEWHERE, t};
		c->seen[e] = true;
	}
	return (struct shard_result){SC_OK, 0};
}

struct headers {
	struct vf_safetensors *st;
	struct file_names *names; /* of each file read, by its reader */
	const struct shard_check *check; /* NULL, or each file checked by its reader */
	struct shard_result *checked;    /* its results, with check */
	size_t n;
};

static void headers_release(struct headers *h)
{
	for (size_t i = 0; i < h->n; i++) {
		vf_safetensors_release(&h->st[i]);
		file_names_release(&h->names[i]);
	}
	free(h->st);
	free(h->names);
	free(h->checked);
	h->st = NULL;
	h->names = NULL;
	h->checked = NULL;
	h->n = 0;
}

/* Shards are read by up to READERS threads when there are at least
 * MIN_PARALLEL of them (each header is an open, one or two preads, a scan
 * and its names' patterns: independent work); the first error in file
 * order is the one reported, as when they were read one after the other. */
#define READERS 4
#define MIN_PARALLEL 4

struct reader_job {
	struct headers *h;
	char *const *paths;
	size_t n;
	atomic_size_t next;
	/* each reader's first failure (its files come in increasing order, so
	 * the first failure overall is the smallest of these) */
	struct {
		size_t first; /* n when none */
		vf_status rc;
		struct vf_error err;
	} fail[READERS];
};

struct reader_arg {
	struct reader_job *job;
	int k;
};

/* File i: its header, then its names' patterns (left out when memory
 * runs out: the callers then work each tensor out on its own), then the
 * index's check. */
static vf_status read_one(struct headers *h, const char *path, size_t i, struct vf_error *err)
{
	vf_status rc = vf_safetensors_read(path, &h->st[i], err);
	if (rc == VF_OK)
		file_names_make(&h->st[i], &h->names[i]);
	if (rc == VF_OK && h->check)
		h->checked[i] = shard_check(h->check, i, &h->st[i]);
	return rc;
}

static void *reader_main(void *arg)
{
	struct reader_job *j = ((struct reader_arg *)arg)->job;
	int k = ((struct reader_arg *)arg)->k;
	struct vf_error err;
	for (;;) {
		size_t i = atomic_fetch_add(&j->next, 1);
		if (i >= j->n)
			break;
		vf_status rc = read_one(j->h, j->paths[i], i, &err);
		if (rc != VF_OK && i < j->fail[k].first) {
			j->fail[k].first = i;
			j->fail[k].rc = rc;
			j->fail[k].err = err;
		}
	}
	return NULL;
}

static int readers(size_t n)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t r = cpus > 1 ? (size_t)cpus : 1;
	if (r > READERS)
		r = READERS;
	if (r > n)
		r = n;
	return n >= MIN_PARALLEL ? (int)r : 1;
}

/* check: NULL, or the index to check each file against (h->checked). */
static vf_status headers_read(struct headers *h, char *const *paths, size_t n,
			      const struct shard_check *check, struct vf_error *err)
{
	h->st = calloc(n ? n : 1, sizeof *h->st);
	h->names = calloc(n ? n : 1, sizeof *h->names);
	h->check = check;
	h->checked = check ? calloc(n ? n : 1, sizeof *h->checked) : NULL;
	h->n = 0;
	if (!h->st || !h->names || (check && !h->checked))
		return vf_error_set(err, VF_ENOMEM, "out of memory");
	int nt = readers(n);
	if (nt > 1) {
		struct reader_job *job = calloc(1, sizeof *job);
		if (!job)
			return vf_error_set(err, VF_ENOMEM, "out of memory");
		job->h = h;
		job->paths = paths;
		job->n = n;
		atomic_init(&job->next, 0);
		struct reader_arg args[READERS];
		pthread_t tid[READERS];
		int started = 0;
		for (int k = 0; k < nt; k++) {
			job->fail[k].first = n;
			args[k] = (struct reader_arg){job, k};
		}
		for (int k = 1; k < nt; k++)
			if (pthread_create(&tid[started], NULL, reader_main, &args[k]) == 0)
				started++;
		reader_main(&args[0]); /* this thread reads too (alone if none started) */
		for (int t = 0; t < started; t++)
			pthread_join(tid[t], NULL);
		h->n = n;
		int worst = 0;
		for (int k = 1; k < nt; k++)
			if (job->fail[k].first < job->fail[worst].first)
				worst = k;
		vf_status st = VF_OK;
		if (job->fail[worst].first < n) {
			st = job->fail[worst].rc;
			if (err)
				*err = job->fail[worst].err;
		}
		free(job);
		return st;
	}
	for (size_t i = 0; i < n; i++) {
		vf_status st = read_one(h, paths[i], i, err);
		h->n = i + 1;
		if (st != VF_OK)
			return st;
	}
	return VF_OK;
}

static bool add_target(struct vf_adapter *ad, const char *t, size_t len)
{
	for (size_t i = 0; i < ad->ntargets; i++)
		if (strlen(ad->targets[i]) == len && strncmp(ad->targets[i], t, len) == 0)
			return true;
	char **g = realloc(ad->targets, (ad->ntargets + 1) * sizeof *g);
	if (!g)
		return false;
	ad->targets = g;
	ad->targets[ad->ntargets] = strndup(t, len);
	if (!ad->targets[ad->ntargets])
		return false;
	ad->ntargets++;
	return true;
}

static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* LoRA tensors ("<module>.lora_A.weight"): rank from lora_A's first dim,
 * targets = the module names. */
static vf_status adapter_from_tensors(struct vf_model *m, const struct headers *h,
				      bool set_targets, struct vf_error *err)
{
	bool any = false;
	for (size_t f = 0; f < h->n; f++) {
		const struct file_names *fn = &h->names[f];
		if (fn->pat && !fn->lora)
			continue; /* no name of the file holds "lora" */
		for (size_t i = 0; i < h->st[f].ntensors; i++) {
			const struct vf_tensor *t = &h->st[f].tensors[i];
			/* "lora" is in each of the three below (and in a name iff in
			 * its pattern's key) */
			if (fn->pat && fn->pat[i] >= 0 ? !fn->p[fn->pat[i]].lora
						       : !strstr(t->name, "lora"))
				continue;
			const char *p = strstr(t->name, ".lora_A");
			if (!p && !strstr(t->name, ".lora_B") && !strstr(t->name, "lora_embedding"))
				continue;
			any = true;
			if (!p)
				continue;
			if (m->adapter.rank < 0 && t->ndim == 2)
				m->adapter.rank = t->shape[0];
			if (set_targets) {
				const char *s = p;
				while (s > t->name && s[-1] != '.')
					s--;
				if (!add_target(&m->adapter, s, (size_t)(p - s)))
					return vf_error_set(err, VF_ENOMEM, "out of memory");
			}
		}
	}
	if (any) {
		m->has_adapter = true;
		if (m->adapter.ntargets > 1)
			qsort(m->adapter.targets, m->adapter.ntargets, sizeof(char *), cmp_cstr);
		m->adapter.params = m->params;
	}
	return VF_OK;
}

/* Architecture from __metadata__: a value holding a JSON config (LTX-2
 * stores the model config as a JSON string; its transformer part, when
 * present, is the architecture). */
static bool arch_from_metadata(const cJSON *meta, struct vf_arch *a)
{
	const cJSON *v;
	cJSON_ArrayForEach(v, meta)
	{
		if (!cJSON_IsString(v) || v->valuestring[0] != '{')
			continue;
		cJSON *j = cJSON_Parse(v->valuestring);
		if (!cJSON_IsObject(j)) {
			cJSON_Delete(j);
			continue;
		}
		const cJSON *src = cJSON_GetObjectItemCaseSensitive(j, "transformer");
		if (!cJSON_IsObject(src))
			src = j;
		bool ok = vf_arch_from_config(src, "metadata", a, NULL) == VF_OK;
		cJSON_Delete(j);
		if (ok) {
			snprintf(a->source, sizeof a->source, "metadata");
			return true;
		}
	}
	return false;
}

/* Totals, dtypes, metadata and groups of a set of headers. */
static vf_status absorb(struct vf_model *m, struct headers *h)
{
	m->files = (int64_t)h->n;
	m->tensors = m->params = m->bytes = 0;
	memset(&m->groups, 0, sizeof m->groups);
	for (size_t f = 0; f < h->n; f++) {
		const struct vf_safetensors *s = &h->st[f];
		m->tensors += (int64_t)s->ntensors;
		m->params += s->params;
		m->bytes += (int64_t)s->data_bytes;
		for (int d = 0; d < VF_DT_COUNT; d++)
			m->dtype_params[d] += s->dtype_params[d];
		/* a group per pattern (sums: the order does not matter) */
		const struct file_names *fn = &h->names[f];
		for (size_t p = 0; fn->pat && p < fn->np; p++)
			group_add(&m->groups, fn->p[p].group, fn->p[p].numel);
		for (size_t i = 0; i < s->ntensors; i++)
			if (!fn->pat || fn->pat[i] < 0)
				group_add(&m->groups, group_of(s->tensors[i].name),
					  s->tensors[i].numel);
		if (!m->metadata && s->metadata)
			m->metadata = cJSON_Duplicate(s->metadata, 1);
	}
	m->has_groups = true;
	snprintf(m->groups_source, sizeof m->groups_source, "tensors");
	return VF_OK;
}

/* Is a tensor named key or "<...>.key"? (as ltx.c looks for one; key
 * holds no digit, so a name says so iff its pattern's first name does) */
static bool suffix_is(const char *name, const char *key, size_t kl)
{
	size_t nl = strlen(name);
	return nl == kl ? strcmp(name, key) == 0
			: nl > kl && name[nl - kl - 1] == '.' && strcmp(name + nl - kl, key) == 0;
}

static bool some_name_is(const struct headers *h, const char *key)
{
	size_t kl = strlen(key);
	for (size_t f = 0; f < h->n; f++) {
		const struct file_names *fn = &h->names[f];
		for (size_t p = 0; fn->pat && p < fn->np; p++)
			if (suffix_is(fn->p[p].first, key, kl))
				return true;
		for (size_t i = 0; i < h->st[f].ntensors; i++)
			if ((!fn->pat || fn->pat[i] < 0) && suffix_is(h->st[f].tensors[i].name, key, kl))
				return true;
	}
	return false;
}

/* An LTX DiT: the transformer config in __metadata__ (the streams present
 * from the tensors), else the tensors alone. No file names are read. */
static bool ltx_arch(struct vf_model *m, const struct headers *h)
{
	size_t n = h->n;
	const struct vf_safetensors **list = malloc((n ? n : 1) * sizeof *list);
	if (!list)
		return false;
	for (size_t i = 0; i < n; i++)
		list[i] = &h->st[i];
	/* its first test (a patchify_proj.weight) by the names' patterns first */
	bool tensors = n && some_name_is(h, "patchify_proj.weight") && vf_ltx_tensors_are(list, n);
	if (tensors)
		vf_ltx_parts_from_tensors(list, n, &m->ltx_parts);
	if (m->metadata && vf_ltx_from_metadata(m->metadata, &m->ltx)) {
		if (tensors) {
			struct vf_ltx_arch t;
			vf_ltx_from_tensors(list, n, &t);
			m->ltx.audio = t.audio;
			if (t.caption_projection && strstr(m->ltx.assumed, "caption_channels")) {
				/* the config leaves it out; the projection's shape says it */
				m->ltx.caption_channels = t.caption_channels;
				m->ltx.assumed[0] = 0;
			}
		}
		m->has_ltx = true;
	} else if (tensors) {
		vf_ltx_from_tensors(list, n, &m->ltx);
		m->has_ltx = true;
	}
	free(list);
	return m->has_ltx;
}

static vf_status infer_from_tensors(struct vf_model *m, struct headers *h, struct vf_error *err)
{
	const struct vf_safetensors **list = malloc((h->n ? h->n : 1) * sizeof *list);
	if (!list)
		return vf_error_set(err, VF_ENOMEM, "out of memory");
	for (size_t i = 0; i < h->n; i++)
		list[i] = &h->st[i];
	infer_arch(list, h->names, h->n, &m->arch);
	free(list);
	m->has_arch = m->arch.known != 0;
	m->arch.params_exact = m->params;
	return VF_OK;
}

/* A config whose model_type no reader knows (arch.c names it first). */
static bool unknown_family(const struct vf_arch *a)
{
	return strncmp(a->not_understood, "model_type ", 11) == 0;
}

/* The files hold parameters the architecture does not explain (or lack
 * some): name the difference; the count stays the files'. */
static void note_count_mismatch(struct vf_arch *a, int64_t files)
{
	struct vf_param_groups g;
	if (files < 0 || !vf_arch_param_groups(a, &g) || g.total == files)
		return;
	char note[96];
	snprintf(note, sizeof note, "the config counts %lld parameters, the files %lld",
		 (long long)g.total, (long long)files);
	if (a->mtp_layers > 0 && files > g.total)
		return; /* deepseek v3: the MTP modules (and fp8 scales) are in the files */
	vf_arch_not_understood(a, note);
}

/* An unknown model_type with files: the count is the headers'; the
 * architecture is the config's common keys (read llama-like) completed by
 * what the tensors say, the layout marked inferred (family), and what the
 * config said that was not understood stays named. */
static vf_status infer_unknown_family(struct vf_model *m, struct headers *h, struct vf_error *err)
{
	struct vf_arch cfg = m->arch;
	vf_status st = infer_from_tensors(m, h, err);
	if (st != VF_OK)
		return st;
	struct vf_arch t = m->arch;
	m->arch = cfg;
	static const unsigned bits[] = {VF_ARCH_F_HIDDEN, VF_ARCH_F_LAYERS, VF_ARCH_F_HEADS,
					VF_ARCH_F_KV_HEADS, VF_ARCH_F_HEAD_DIM, VF_ARCH_F_FFN,
					VF_ARCH_F_VOCAB, VF_ARCH_F_TIED};
	int64_t *cf[] = {&m->arch.hidden, &m->arch.layers, &m->arch.heads, &m->arch.kv_heads,
			 &m->arch.head_dim, &m->arch.ffn, &m->arch.vocab, NULL};
	const int64_t tf[] = {t.hidden, t.layers, t.heads, t.kv_heads, t.head_dim, t.ffn, t.vocab, 0};
	for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++) {
		if ((m->arch.known & bits[i]) || !(t.known & bits[i]))
			continue;
		if (cf[i])
			*cf[i] = tf[i];
		else
			m->arch.tied_embeddings = t.tied_embeddings;
		m->arch.known |= bits[i];
		m->arch.inferred |= bits[i];
	}
	m->arch.inferred |= VF_ARCH_F_FAMILY;
	m->arch.params_exact = m->params;
	m->has_arch = true;
	return VF_OK;
}

/* Architecture: config.json when given, else __metadata__, else inferred. */
/* Architecture: config.json when given (a vision or video config keeps
 * its own description), else an LTX DiT's own header, else __metadata__,
 * else inferred from the tensors. */
static vf_status settle_arch(struct vf_model *m, const char *config, struct headers *h,
			     struct vf_error *err)
{
	if (config) {
		/* a config.json that is not a transformer's (a VAE's, a
		 * scheduler's) leaves the architecture to the tensors */
		vf_status st = read_config(config, m, &m->arch, false, err);
		if (st == VF_OK && m->has_vision && strcmp(m->vision.kind, "unknown") != 0)
			return VF_OK;
		if (st == VF_OK && m->has_vision) {
			/* a diffusers class not understood: the weights' own
			 * description (LTX header, metadata, tensors) */
			m->has_vision = false;
			st = VF_ENOTFOUND;
		}
		if (st == VF_OK && !unknown_family(&m->arch)) {
			m->has_arch = true;
			m->arch.params_exact = m->params;
			note_count_mismatch(&m->arch, m->params);
			return VF_OK;
		}
		if (st == VF_OK)
			return infer_unknown_family(m, h, err);
		if (st != VF_ENOTFOUND)
			return st;
		vf_error_clear(err);
	}
	if (ltx_arch(m, h))
		return VF_OK;
	if (m->metadata && arch_from_metadata(m->metadata, &m->arch)) {
		m->has_arch = true;
		m->arch.params_exact = m->params;
		return VF_OK;
	}
	return infer_from_tensors(m, h, err);
}

/* A quantized checkpoint (qconfig.h): packed weights unpacked, storage
 * tensors out of the count and the groups. */
static void unpack_quantized(struct vf_model *m, const char *config, const struct headers *h)
{
	cJSON *cfg = NULL;
	if (vf_json_parse_file(config, MAX_CONFIG, &cfg, NULL) != VF_OK)
		return; /* settle_arch names a bad config */
	m->has_quant = vf_qconfig_read(cfg, &m->quant);
	cJSON_Delete(cfg);
	if (!m->has_quant || !m->quant.understood)
		return;
	vf_qconfig_count(&m->quant, h->st, h->n, &m->groups);
	m->params = m->quant.params;
}

static vf_status load_files(struct vf_model *m, char *const *paths, size_t n,
			    const char *config, const struct shard_check *check, struct headers *h,
			    struct vf_error *err)
{
	vf_status st = headers_read(h, paths, n, check, err);
	if (st == VF_OK)
		st = absorb(m, h);
	if (st == VF_OK && config)
		unpack_quantized(m, config, h);
	if (st == VF_OK)
		st = settle_arch(m, config, h, err);
	if (st == VF_OK && m->has_quant && !m->quant.understood && m->has_arch)
		quant_not_understood(m);
	if (st == VF_OK && !m->has_adapter)
		st = adapter_from_tensors(m, h, true, err);
	return st;
}

/* load_index: the index's shard file names (each a plain name in its
 * folder), sorted and unique, at least one and at most MAX_SHARDS. */
static vf_status index_shards(const struct vf_safetensors_index *ix, const char *index, char **shards,
			       size_t *nshards, struct vf_error *err)
{
	size_t n = 0;
	const char *checked = NULL; /* the last file name found good */
	for (size_t i = 0; i < ix->n; i++) {
		const char *tensor = ix->tensors[i];
		const char *f = ix->files[i];
		/* a name repeated in a row is one string (vf_safetensors_index): checked once */
		if (f != checked && (!*f || strchr(f, '/') || strcmp(f, "..") == 0 || strcmp(f, ".") == 0))
			return vf_error_set(err, VF_ERR,
					    "%s: weight_map['%.128s']: '%.128s' is not a file name in "
					    "the index's folder",
					    index, tensor, f);
		checked = f;
		/* maps list a shard's tensors together: skip repeats cheaply
		 * (a file name repeated is one string: a pointer test first) */
		if (n == 0 || (shards[n - 1] != f && strcmp(shards[n - 1], f) != 0))
			shards[n++] = (char *)f;
	}
	qsort(shards, n, sizeof *shards, cmp_cstr);
	size_t u = 0;
	for (size_t i = 0; i < n; i++)
		if (u == 0 || strcmp(shards[u - 1], shards[i]) != 0)
			shards[u++] = shards[i];
	*nshards = u;
	if (u == 0)
		return vf_error_set(err, VF_ERR, "%s: weight_map is empty", index);
	if (u > MAX_SHARDS)
		return vf_error_set(err, VF_ERR, "%s: %zu shards exceed the limit of %d", index, u, MAX_SHARDS);
	return VF_OK;
}

/* load_index: each shard's path in dir, which must exist. */
static vf_status shard_paths(const char *dir, const char *index, char **shards, size_t nshards, char **paths,
			      struct vf_error *err)
{
	for (size_t i = 0; i < nshards; i++) {
		paths[i] = path_join(dir, shards[i]);
		if (!paths[i])
			return vf_error_set(err, VF_ENOMEM, "%s: out of memory", index);
		struct stat sb;
		if (stat(paths[i], &sb) != 0) {
			int en = errno;
			if (en == ENOENT)
				return vf_error_set(err, VF_ERR, "%s: names shard %s, which does not exist", index,
						    shards[i]);
			return stat_error(paths[i], en, err);
		}
	}
	return VF_OK;
}

/* load_index after the shards were read: a tensor a shard holds that the
 * map lists elsewhere or not at all (first in file order), or a mapped
 * tensor no shard holds (first by name). */
static vf_status index_mismatch(const struct vf_safetensors_index *ix, const char *index, char **shards,
				 const struct headers *hp, const uint32_t *table, size_t tcap, const bool *seen,
				 struct vf_error *err)
{
	size_t nmap = ix->n;
	vf_status st = VF_OK;
	for (size_t f = 0; f < hp->n; f++) {
		if (hp->checked[f].what == SC_OK)
			continue;
		const char *name = hp->st[f].tensors[hp->checked[f].at].name;
		if (hp->checked[f].what == SC_UNLISTED) {
			st = vf_error_set(err, VF_ERR,
					  "%s: shard %s holds tensor '%.128s', which the index does "
					  "not list",
					  index, shards[f], name);
		} else {
			size_t e = table[map_slot(table, tcap, ix->tensors, name)] - 1;
			st = vf_error_set(err, VF_ERR, "%s: maps tensor '%.128s' to %s, but it is in %s",
					  index, name, ix->files[e], shards[f]);
		}
		return st;
	}
	size_t unseen = nmap;
	for (size_t i = 0; i < nmap; i++)
		if (!seen[i] && (unseen == nmap || strcmp(ix->tensors[i], ix->tensors[unseen]) < 0))
			unseen = i;
	if (unseen < nmap)
		st = vf_error_set(err, VF_ERR,
				  "%s: maps tensor '%.128s' to %s, which has no such tensor", index,
				  ix->tensors[unseen], ix->files[unseen]);
	return st;
}

static vf_status load_index(struct vf_model *m, const char *index, const char *dir,
			    const char *config, struct vf_error *err)
{
	struct vf_buf text;
	vf_buf_init(&text, 0);
	struct vf_safetensors_index ix;
	memset(&ix, 0, sizeof ix);
	vf_status st = vf_buf_read_file(&text, index, VF_JSON_MAX_FILE, err);
	if (st == VF_OK)
		st = vf_safetensors_index_parse(text.data, text.len, index, &ix, err);
	vf_buf_release(&text);
	if (st != VF_OK) {
		vf_safetensors_index_release(&ix);
		return st;
	}
	bool *seen = NULL;
	char **shards = NULL, **paths = NULL;
	size_t nmap = ix.n, nshards = 0, tcap = 0;
	uint32_t *table = NULL;
	struct headers h = {0};
	seen = calloc(nmap ? nmap : 1, sizeof *seen);
	shards = malloc((nmap ? nmap : 1) * sizeof *shards);
	/* nmap + 1 fits the table's 32 bits: an index is at most
	 * VF_JSON_MAX_FILE bytes, 6 or more an entry */
	if (!seen || !shards) {
		st = vf_error_set(err, VF_ENOMEM, "%s: out of memory", index);
		goto out;
	}
	if ((st = index_shards(&ix, index, shards, &nshards, err)))
		goto out;
	/* the map by tensor name: a hash table of its indices + 1 (the
	 * messages name the first tensor in name order, as a sorted scan did) */
	tcap = 16;
	while (tcap < 2 * nmap)
		tcap *= 2;
	table = calloc(tcap, sizeof *table);
	if (!table) {
		st = vf_error_set(err, VF_ENOMEM, "%s: out of memory", index);
		goto out;
	}
	const char *twice = NULL;
	for (size_t i = 0; i < nmap; i++) {
		size_t k = map_slot(table, tcap, ix.tensors, ix.tensors[i]);
		if (!table[k])
			table[k] = (uint32_t)(i + 1);
		else if (!twice || strcmp(ix.tensors[i], twice) < 0)
			twice = ix.tensors[i];
	}
	if (twice) {
		st = vf_error_set(err, VF_ERR, "%s: weight_map names tensor '%.128s' twice", index,
				  twice);
		goto out;
	}
	paths = calloc(nshards, sizeof *paths);
	if (!paths) {
		st = vf_error_set(err, VF_ENOMEM, "%s: out of memory", index);
		goto out;
	}
	if ((st = shard_paths(dir, index, shards, nshards, paths, err)))
		goto out;
	/* every tensor of every shard is in the map, pointing at that shard:
	 * checked by each shard's reader, the first failure in file order
	 * reported */
	struct shard_check check = {table, tcap, ix.tensors, ix.files, seen, shards};
	st = load_files(m, paths, nshards, config, &check, &h, err);
	if (st != VF_OK)
		goto out;
	st = index_mismatch(&ix, index, shards, &h, table, tcap, seen, err);
out:
	free(table);
	headers_release(&h);
	if (paths)
		for (size_t i = 0; i < nshards; i++)
			free(paths[i]);
	free(paths);
	free(shards);
	free(seen);
	vf_safetensors_index_release(&ix);
	return st;
}

/* ---- directories -------------------------------------------------------- */

struct listing {
	char **names; /* sorted */
	size_t n;
};

static void listing_release(struct listing *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->names[i]);
	free(l->names);
	l->names = NULL;
	l->n = 0;
}

#define MAX_DIR_ENTRIES 100000

static vf_status list_dir(const char *dir, struct listing *l, struct vf_error *err)
{
	l->names = NULL;
	l->n = 0;
	DIR *d = opendir(dir);
	if (!d)
		return stat_error(dir, errno, err);
	size_t alloc = 0;
	struct dirent *de;
	vf_status st = VF_OK;
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (l->n >= MAX_DIR_ENTRIES) {
			st = vf_error_set(err, VF_ERR, "%s: more than %d entries", dir,
					  MAX_DIR_ENTRIES);
			break;
		}
		if (l->n == alloc) {
			alloc = alloc ? alloc * 2 : 32;
			char **g = realloc(l->names, alloc * sizeof *g);
			if (!g) {
				st = vf_error_set(err, VF_ENOMEM, "%s: out of memory", dir);
				break;
			}
			l->names = g;
		}
		l->names[l->n] = strdup(de->d_name);
		if (!l->names[l->n]) {
			st = vf_error_set(err, VF_ENOMEM, "%s: out of memory", dir);
			break;
		}
		l->n++;
	}
	closedir(d);
	if (st == VF_OK && l->n > 1)
		qsort(l->names, l->n, sizeof *l->names, cmp_cstr);
	return st;
}

/* stat an entry; a symlink loop or other failure is an error naming it. */
static vf_status entry_stat(const char *dir, const char *name, struct stat *sb,
			    struct vf_error *err)
{
	char *p = path_join(dir, name);
	if (!p)
		return vf_error_set(err, VF_ENOMEM, "out of memory");
	vf_status st = VF_OK;
	if (stat(p, sb) != 0)
		st = stat_error(p, errno, err);
	free(p);
	return st;
}

static bool in_listing(const struct listing *l, const char *name)
{
	return l->n && bsearch(&name, l->names, l->n, sizeof *l->names, cmp_cstr) != NULL;
}

/* load_adapter: adapter_config.json's target_modules, a name or a list
 * (kept sorted); null or absent: none named. */
static vf_status adapter_targets(struct vf_model *m, const cJSON *cfg, const char *cfgp, struct vf_error *err)
{
	vf_status st = VF_OK;
	const cJSON *tm = cJSON_GetObjectItemCaseSensitive(cfg, "target_modules");
	if (cJSON_IsString(tm)) {
		if (!add_target(&m->adapter, tm->valuestring, strlen(tm->valuestring)))
			st = vf_error_set(err, VF_ENOMEM, "out of memory");
	} else if (cJSON_IsArray(tm)) {
		const cJSON *t;
		cJSON_ArrayForEach(t, tm)
		{
			if (!cJSON_IsString(t)) {
				st = vf_error_set(err, VF_ERR,
						  "%s: field target_modules: expected strings",
						  cfgp);
				break;
			}
			if (!add_target(&m->adapter, t->valuestring, strlen(t->valuestring))) {
				st = vf_error_set(err, VF_ENOMEM, "out of memory");
				break;
			}
		}
		if (m->adapter.ntargets > 1)
			qsort(m->adapter.targets, m->adapter.ntargets, sizeof(char *),
			      cmp_cstr);
	} else if (tm && !cJSON_IsNull(tm)) {
		st = vf_error_set(err, VF_ERR,
				  "%s: field target_modules: expected a list or a string",
				  cfgp);
	}
	return st;
}

static vf_status load_adapter(struct vf_model *m, const char *dir, struct vf_error *err)
{
	snprintf(m->format, sizeof m->format, "peft-adapter");
	char *cfgp = path_join(dir, "adapter_config.json");
	char *wp = path_join(dir, "adapter_model.safetensors");
	cJSON *cfg = NULL;
	struct headers h = {0};
	vf_status st = (cfgp && wp) ? VF_OK : vf_error_set(err, VF_ENOMEM, "out of memory");
	if (st == VF_OK)
		st = vf_json_parse_file(cfgp, MAX_CONFIG, &cfg, err);
	if (st == VF_OK && !cJSON_IsObject(cfg))
		st = vf_error_set(err, VF_ERR, "%s: expected a JSON object", cfgp);
	if (st == VF_OK) {
		m->has_adapter = true;
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(cfg, "r");
		if (r && (!vf_json_number_is_i64(r, &m->adapter.rank) || m->adapter.rank <= 0 ||
			  m->adapter.rank > (1 << 20)))
			st = vf_error_set(err, VF_ERR, "%s: field r: expected a positive integer rank",
					  cfgp);
		const cJSON *al = cJSON_GetObjectItemCaseSensitive(cfg, "lora_alpha");
		if (st == VF_OK && al) {
			if (cJSON_IsNumber(al))
				m->adapter.alpha = al->valuedouble;
			else
				st = vf_error_set(err, VF_ERR, "%s: field lora_alpha: expected a number",
						  cfgp);
		}
		if (st == VF_OK)
			st = adapter_targets(m, cfg, cfgp, err);
	}
	if (st == VF_OK) {
		struct stat sb;
		if (stat(wp, &sb) != 0)
			st = errno == ENOENT
				     ? vf_error_set(err, VF_ERR,
						    "%s: adapter_model.safetensors is missing "
						    "(adapter_model.bin is not read)",
						    dir)
				     : stat_error(wp, errno, err);
	}
	if (st == VF_OK)
		st = headers_read(&h, &wp, 1, NULL, err);
	if (st == VF_OK)
		st = absorb(m, &h);
	if (st == VF_OK) {
		m->adapter.params = m->params;
		if (m->adapter.rank < 0 || m->adapter.ntargets == 0)
			st = adapter_from_tensors(m, &h, m->adapter.ntargets == 0, err);
		m->adapter.params = m->params;
	}
	headers_release(&h);
	cJSON_Delete(cfg);
	free(cfgp);
	free(wp);
	return st;
}

static vf_status load_dir(struct vf_model *m, const char *dir, int depth, struct vf_error *err);
static vf_status load_gguf(struct vf_model *m, const char *path, struct vf_error *err);

/* A folder of components (diffusers): each subfolder with weights. */
static vf_status load_components(struct vf_model *m, const char *dir, const struct listing *l,
				 struct vf_error *err)
{
	snprintf(m->format, sizeof m->format, "diffusers");
	m->files = m->tensors = m->params = m->bytes = 0;
	m->components = calloc(MAX_COMPONENTS, sizeof *m->components);
	if (!m->components)
		return vf_error_set(err, VF_ENOMEM, "out of memory");
	memset(&m->groups, 0, sizeof m->groups);
	for (size_t i = 0; i < l->n; i++) {
		struct stat sb;
		vf_status st = entry_stat(dir, l->names[i], &sb, err);
		if (st != VF_OK)
			return st;
		if (!S_ISDIR(sb.st_mode) || l->names[i][0] == '.')
			continue;
		char *sub = path_join(dir, l->names[i]);
		if (!sub)
			return vf_error_set(err, VF_ENOMEM, "out of memory");
		struct listing sl;
		st = list_dir(sub, &sl, err);
		bool weights = false;
		for (size_t k = 0; st == VF_OK && k < sl.n; k++)
			weights = weights || ends_with(sl.names[k], ".safetensors") ||
				  ends_with(sl.names[k], ".safetensors.index.json") ||
				  strcmp(sl.names[k], "config.json") == 0; /* counted from its config */
		listing_release(&sl);
		if (st != VF_OK || !weights) {
			free(sub);
			if (st != VF_OK)
				return st;
			continue;
		}
		if (m->ncomponents == MAX_COMPONENTS) {
			free(sub);
			return vf_error_set(err, VF_ERR, "%s: more than %d components", dir,
					    MAX_COMPONENTS);
		}
		struct vf_model *c = model_new(sub, err);
		free(sub);
		if (!c)
			return VF_ENOMEM;
		m->components[m->ncomponents++] = c;
		snprintf(c->name, sizeof c->name, "%s", l->names[i]);
		st = load_dir(c, c->path, 1, err);
		if (st != VF_OK)
			return st;
		/* a component read from its config alone has no files; one not
		 * understood has no count (the total then leaves it out) */
		m->files += c->files > 0 ? c->files : 0;
		m->tensors += c->tensors > 0 ? c->tensors : 0;
		m->params += c->params > 0 ? c->params : 0;
		m->bytes += c->bytes > 0 ? c->bytes : 0;
		for (int d = 0; d < VF_DT_COUNT; d++)
			m->dtype_params[d] += c->dtype_params[d];
		m->groups.embedding += c->groups.embedding;
		m->groups.attention += c->groups.attention;
		m->groups.mlp += c->groups.mlp;
		m->groups.norm += c->groups.norm;
		m->groups.experts += c->groups.experts;
		m->groups.other += c->groups.other;
		m->groups.total += c->groups.total;
	}
	if (m->ncomponents == 0)
		return vf_error_set(err, VF_ERR, "%s: no component folder holds .safetensors weights",
				    dir);
	/* the groups add up only when every component has them (one read
	 * from a diffusers config alone has none) */
	m->has_groups = true;
	for (size_t i = 0; i < m->ncomponents; i++)
		m->has_groups = m->has_groups && m->components[i]->has_groups;
	snprintf(m->groups_source, sizeof m->groups_source, "tensors");
	if (m->files == 0) { /* every component read from its config alone */
		m->files = m->tensors = m->bytes = -1;
		snprintf(m->groups_source, sizeof m->groups_source, "architecture");
	}
	return VF_OK;
}

static vf_status load_dir(struct vf_model *m, const char *dir, int depth, struct vf_error *err)
{
	struct listing l;
	vf_status st = list_dir(dir, &l, err);
	if (st != VF_OK)
		return st;
	/* every entry must be reachable: a symlink loop is an error */
	for (size_t i = 0; i < l.n && st == VF_OK; i++) {
		struct stat sb;
		st = entry_stat(dir, l.names[i], &sb, err);
	}
	char *config = NULL, *index = NULL, *single = NULL, *gguf = NULL;
	size_t nsafe = 0, nindex = 0, ngguf = 0;
	if (st != VF_OK)
		goto out;
	if (in_listing(&l, "adapter_config.json")) {
		st = load_adapter(m, dir, err);
		goto out;
	}
	for (size_t i = 0; i < l.n; i++) {
		if (ends_with(l.names[i], ".safetensors.index.json")) {
			nindex++;
			if (!index || strcmp(l.names[i], "model.safetensors.index.json") == 0 ||
			    strcmp(l.names[i], "diffusion_pytorch_model.safetensors.index.json") == 0) {
				free(index);
				index = path_join(dir, l.names[i]);
			}
		} else if (ends_with(l.names[i], ".gguf") && !ngguf++) {
			gguf = path_join(dir, l.names[i]);
		} else if (ends_with(l.names[i], ".safetensors")) {
			nsafe++;
			if (!single || strcmp(l.names[i], "model.safetensors") == 0 ||
			    strcmp(l.names[i], "diffusion_pytorch_model.safetensors") == 0) {
				free(single);
				single = path_join(dir, l.names[i]);
			}
		}
	}
	if (in_listing(&l, "config.json"))
		config = path_join(dir, "config.json");
	if (index) {
		snprintf(m->format, sizeof m->format, "sharded");
		st = load_index(m, index, dir, config, err);
	} else if (nsafe == 1 || (nsafe > 1 && single &&
				    (ends_with(single, "/model.safetensors") ||
				     ends_with(single, "/diffusion_pytorch_model.safetensors")))) {
		snprintf(m->format, sizeof m->format, "%s", config ? "hf-dir" : "safetensors");
		struct headers h = {0};
		st = load_files(m, &single, 1, config, NULL, &h, err);
		headers_release(&h);
	} else if (nsafe == 0 && ngguf == 1 && !config) {
		st = load_gguf(m, gguf, err);
	} else if (nsafe > 1) {
		st = vf_error_set(err, VF_ERR,
				  "%s: %zu .safetensors files and no *.safetensors.index.json; name "
				  "one file",
				  dir, nsafe);
	} else if (depth == 0 && (in_listing(&l, "model_index.json") || !config)) {
		st = load_components(m, dir, &l, err);
		if (st != VF_OK && m->ncomponents == 0 && !in_listing(&l, "model_index.json") &&
		    strstr(err ? err->msg : "", "no component folder"))
			vf_error_set(err, VF_ERR,
				     "%s: no model files (expected config.json, *.safetensors, an "
				     "index, adapter_config.json or component folders)",
				     dir);
	} else if (config) {
		st = load_config_file(config, m, err);
	} else {
		st = vf_error_set(err, VF_ERR, "%s: no .safetensors weights", dir);
	}
	(void)nindex;
out:
	free(config);
	free(index);
	free(single);
	free(gguf);
	listing_release(&l);
	return st;
}

/* ---- GGUF files ----------------------------------------------------------- */

static vf_status load_gguf(struct vf_model *m, const char *path, struct vf_error *err)
{
	snprintf(m->format, sizeof m->format, "gguf");
	m->gguf = calloc(1, sizeof *m->gguf);
	if (!m->gguf)
		return vf_error_set(err, VF_ENOMEM, "%s: out of memory", path);
	vf_status st = vf_gguf_read(path, m->gguf, err);
	if (st != VF_OK)
		return st;
	const struct vf_gguf *g = m->gguf;
	snprintf(m->name, sizeof m->name, "%s", g->name);
	m->files = 1;
	m->tensors = (int64_t)g->ntensors;
	m->params = g->params;
	m->bytes = (int64_t)g->data_bytes;
	struct vf_error aerr;
	m->has_arch = vf_gguf_arch(g, &m->arch, &aerr);
	memset(&m->groups, 0, sizeof m->groups);
	for (size_t i = 0; i < g->ntensors; i++)
		vf_gguf_group_tensor(g->tensors[i].name, g->tensors[i].numel, &m->groups);
	m->has_groups = true;
	snprintf(m->groups_source, sizeof m->groups_source, "tensors");
	return VF_OK;
}

/* ---- Hub ids ------------------------------------------------------------ */

static vf_status load_place(struct vf_model *m, const struct vf_hub_ref *r,
			    const struct vf_hub_place *p, struct vf_error *err)
{
	snprintf(m->hub_revision, sizeof m->hub_revision, "%s", r->revision);
	snprintf(m->hub_commit, sizeof m->hub_commit, "%s", p->commit);
	snprintf(m->hub_source, sizeof m->hub_source, "%s", p->source);
	snprintf(m->hub_dir, sizeof m->hub_dir, "%s", p->dir);
	if (!r->tag[0])
		return load_dir(m, p->dir, 0, err);
	/* org/name:TAG: the one .gguf file whose name holds the tag */
	struct listing l;
	vf_status st = list_dir(p->dir, &l, err);
	char *hit = NULL;
	int n = 0;
	for (size_t i = 0; st == VF_OK && i < l.n; i++)
		if (ends_with(l.names[i], ".gguf") && strcasestr(l.names[i], r->tag) && !n++)
			hit = path_join(p->dir, l.names[i]);
	if (st == VF_OK)
		st = n == 1 ? load_gguf(m, hit, err)
			    : vf_error_set(err, VF_ERR, "%s: %s .gguf file has '%s' in its name", p->dir,
					   n ? "more than one" : "no", r->tag);
	free(hit);
	listing_release(&l);
	return st;
}

/* Whether the part before the '/' is a local folder or file: then "a/b"
 * is a path that does not exist, not a Hub id. */
static bool local_parent(const char *s)
{
	char first[128];
	const char *slash = strchr(s, '/');
	struct stat sb;
	snprintf(first, sizeof first, "%.*s", (int)(slash - s), s);
	return stat(first, &sb) == 0;
}

static vf_status load_hub(struct vf_model *m, const struct vf_hub_ref *r, struct vf_error *err)
{
	struct vf_hub_place hf, own;
	bool in_hf = vf_hfcache_find(r, &hf, NULL) == VF_OK;
	if (in_hf && hf.weights) {
		vf_status st = load_place(m, r, &hf, err);
		if (st == VF_OK || vf_hub_offline())
			return st;
		model_reset(m); /* a partial download (a shard missing): the Hub's headers */
		vf_error_clear(err);
	}
	if (vf_hub_cache_find(r, &own, NULL) == VF_OK)
		return load_place(m, r, &own, err);
	const struct vf_model_entry *ent = NULL;
	if (!r->has_revision && !r->tag[0] && vf_models_load(NULL) == VF_OK) {
		vf_status st = vf_models_lookup(r->repo, &ent, NULL, 0, err);
		if (st != VF_OK)
			return st; /* its catalog entry's config does not read */
	}
	if (ent) {
		load_catalog(ent, m);
		snprintf(m->hub_revision, sizeof m->hub_revision, "%s", r->revision);
		snprintf(m->hub_source, sizeof m->hub_source, "catalog");
		return VF_OK;
	}
	if (in_hf && vf_hub_offline())
		return load_place(m, r, &hf, err); /* configs only: what there is */
	if (vf_hub_offline()) {
		char dir[VF_HUB_PATH_MAX];
		vf_hfcache_dir(dir, sizeof dir);
		return vf_error_set(err, VF_ENOTFOUND,
				    "%s@%s: not in the Hugging Face cache (%s), vramfit's cache or "
				    "the catalog, and HF_HUB_OFFLINE is set",
				    r->repo, r->revision, dir);
	}
	struct vf_hub_place got;
	vf_status st = vf_hub_fetch(r, &got, err);
	return st == VF_OK ? load_place(m, r, &got, err) : st;
}

/* What is not a path: a Hub id, else a catalog model by any of its names. */
static vf_status load_missing(struct vf_model *m, const char *id, int e, struct vf_error *err)
{
	struct vf_hub_ref ref;
	if ((e == ENOENT || e == ENOTDIR) && strchr(id, '/') && vf_hub_ref_parse(id, &ref) &&
	    !local_parent(id))
		return load_hub(m, &ref, err);
	if (e != ENOENT || strchr(id, '/'))
		return stat_error(id, e, err);
	char hint[300];
	const struct vf_model_entry *ent = NULL;
	vf_status st = vf_models_lookup(id, &ent, hint, sizeof hint, err);
	if (st != VF_OK)
		return st;
	if (ent)
		return load_catalog(ent, m);
	return vf_error_set(err, VF_ENOTFOUND,
			    "%s: no such file, directory or catalog model%s (see 'vramfit models')", id,
			    hint);
}

vf_status vf_model_load(const char *id_or_path, struct vf_model **out, struct vf_error *err)
{
	*out = NULL;
	if (!id_or_path || !*id_or_path)
		return vf_error_set(err, VF_EUSAGE, "no model given (a catalog id, file or directory)");
	struct vf_model *m = model_new(id_or_path, err);
	if (!m)
		return VF_ENOMEM;
	vf_status st;
	struct stat sb;
	if (stat(id_or_path, &sb) != 0) {
		int e = errno;
		st = load_missing(m, id_or_path, e, err);
		if (st != VF_OK) {
			vf_model_free(m);
			return st;
		}
		*out = m;
		return VF_OK;
	}
	if (S_ISDIR(sb.st_mode)) {
		st = load_dir(m, id_or_path, 0, err);
	} else if (!S_ISREG(sb.st_mode)) {
		st = vf_error_set(err, VF_ERR, "%s: not a regular file or directory", id_or_path);
	} else if (ends_with(id_or_path, ".index.json")) {
		snprintf(m->format, sizeof m->format, "sharded");
		char *dir = strdup(id_or_path);
		char *slash = dir ? strrchr(dir, '/') : NULL;
		const char *d = dir ? (slash ? (*slash = 0, dir[0] ? dir : "/") : ".") : NULL;
		char *config = d ? path_join(d, "config.json") : NULL;
		struct stat cs;
		bool has_cfg = config && stat(config, &cs) == 0 && S_ISREG(cs.st_mode);
		st = d ? load_index(m, id_or_path, d, has_cfg ? config : NULL, err)
		       : vf_error_set(err, VF_ENOMEM, "out of memory");
		free(config);
		free(dir);
	} else if (ends_with(id_or_path, ".json")) {
		st = load_config_file(id_or_path, m, err);
	} else if (ends_with(id_or_path, ".gguf")) {
		st = load_gguf(m, id_or_path, err);
	} else if (ends_with(id_or_path, ".bin") || ends_with(id_or_path, ".pt") ||
		   ends_with(id_or_path, ".pth") || ends_with(id_or_path, ".ckpt")) {
		st = vf_error_set(err, VF_ERR,
				  "%s: not a safetensors file (pickle checkpoints are not read; give "
				  "its config.json or a catalog id)",
				  id_or_path);
	} else {
		snprintf(m->format, sizeof m->format, "safetensors");
		struct headers h = {0};
		char *p = m->path;
		st = load_files(m, &p, 1, NULL, NULL, &h, err);
		headers_release(&h);
		if (!vf_model_shard_name(id_or_path, &m->shard_index, &m->shard_count))
			m->shard_index = m->shard_count = 0;
	}
	if (st != VF_OK) {
		vf_model_free(m);
		return st;
	}
	*out = m;
	return VF_OK;
}

/* ---- JSON -------------------------------------------------------------- */

static cJSON *groups_json(const struct vf_param_groups *g)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "embedding", (double)g->embedding);
	cJSON_AddNumberToObject(o, "attention", (double)g->attention);
	cJSON_AddNumberToObject(o, "mlp", (double)g->mlp);
	cJSON_AddNumberToObject(o, "norm", (double)g->norm);
	cJSON_AddNumberToObject(o, "experts", (double)g->experts);
	cJSON_AddNumberToObject(o, "other", (double)g->other);
	return o;
}

/* Where a Hub id's files came from: "hub" {repo, revision, commit, source, dir}. */
static void hub_json(const struct vf_model *m, cJSON *o)
{
	cJSON *h = cJSON_AddObjectToObject(o, "hub");
	const char *at = strpbrk(m->path, "@:");
	char repo[160];
	snprintf(repo, sizeof repo, "%.*s", at ? (int)(at - m->path) : (int)strlen(m->path), m->path);
	cJSON_AddStringToObject(h, "repo", repo);
	cJSON_AddStringToObject(h, "revision", m->hub_revision);
	if (m->hub_commit[0])
		cJSON_AddStringToObject(h, "commit", m->hub_commit);
	cJSON_AddStringToObject(h, "source", m->hub_source);
	if (m->hub_dir[0])
		cJSON_AddStringToObject(h, "dir", m->hub_dir);
}

/* A GGUF file: "ggml_types" {type: {params, bytes}} and "gguf" {version, ...}. */
static void gguf_json(const struct vf_gguf *g, cJSON *o)
{
	cJSON *t = cJSON_AddObjectToObject(o, "ggml_types");
	for (int i = 0; i < VF_GGML_TYPES; i++) {
		if (!g->type_params[i])
			continue;
		cJSON *e = cJSON_AddObjectToObject(t, vf_ggml_type_name(i));
		cJSON_AddNumberToObject(e, "params", (double)g->type_params[i]);
		cJSON_AddNumberToObject(e, "bytes", (double)g->type_bytes[i]);
	}
	cJSON *h = cJSON_AddObjectToObject(o, "gguf");
	cJSON_AddNumberToObject(h, "version", g->version);
	cJSON_AddStringToObject(h, "architecture", g->architecture);
	cJSON_AddNumberToObject(h, "alignment", g->alignment);
	cJSON_AddNumberToObject(h, "header_bytes", (double)g->header_bytes);
	vf_json_add_i64_or_null(h, "vocab", g->vocab, g->vocab >= 0);
}

/* vf_model_to_json: the kind and "architecture" of a vision model, an
 * LTX DiT (with its components) or a language model; null when none. */
static void arch_json(const struct vf_model *m, cJSON *o)
{
	if (m->has_vision) {
		cJSON_AddStringToObject(o, "kind", m->vision.kind);
		cJSON *va = vf_vision_to_json(&m->vision);
		if (va && m->vision.has_lm && m->vision.lm.experts > 0 &&
		    vf_arch_active_params(&m->vision.lm) >= 0) /* MoE language model, per text token */
			cJSON_AddNumberToObject(va, "active_params",
						(double)vf_arch_active_params(&m->vision.lm));
		cJSON_AddItemToObject(o, "architecture", va);
	} else if (m->has_ltx) {
		cJSON_AddStringToObject(o, "kind", "dit");
		cJSON_AddItemToObject(o, "architecture", vf_ltx_to_json(&m->ltx));
		if (m->files > 0)
			cJSON_AddItemToObject(o, "components", vf_ltx_parts_to_json(&m->ltx_parts));
	} else if (m->has_arch)
		cJSON_AddItemToObject(o, "architecture", vf_arch_to_json(&m->arch));
	else
		cJSON_AddNullToObject(o, "architecture");
}

/* vf_model_to_json: a PEFT adapter's rank, alpha, targets and size. */
static void adapter_json(const struct vf_model *m, cJSON *o)
{
	cJSON *a = cJSON_AddObjectToObject(o, "adapter");
	vf_json_add_i64_or_null(a, "rank", m->adapter.rank, m->adapter.rank >= 0);
	if (m->adapter.alpha >= 0)
		cJSON_AddNumberToObject(a, "alpha", m->adapter.alpha);
	else
		cJSON_AddNullToObject(a, "alpha");
	cJSON *t = cJSON_AddArrayToObject(a, "targets");
	for (size_t i = 0; i < m->adapter.ntargets; i++)
		cJSON_AddItemToArray(t, cJSON_CreateString(m->adapter.targets[i]));
	cJSON_AddNumberToObject(a, "params", (double)m->adapter.params);
}

bool vf_model_shard_name(const char *path, int *k, int *n)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const char *of = NULL;
	for (const char *p = strstr(base, "-of-"); p; p = strstr(p + 1, "-of-"))
		of = p; /* the last one */
	if (!of || !ends_with(base, ".safetensors"))
		return false;
	const char *d = of; /* the digits before "-of-", after a '-' */
	while (d > base && d[-1] >= '0' && d[-1] <= '9')
		d--;
	if (d == of || d == base || d[-1] != '-')
		return false;
	long a = 0, b = 0;
	const char *e = of + 4, *q = e;
	for (const char *p = d; p < of && a < 1000000; p++)
		a = a * 10 + (*p - '0');
	while (*q >= '0' && *q <= '9' && b < 1000000)
		b = b * 10 + (*q++ - '0');
	if (q == e || strcmp(q, ".safetensors") != 0 || b < 2 || a < 1 || a > b)
		return false;
	*k = (int)a;
	*n = (int)b;
	return true;
}

vf_status vf_model_need_whole(const struct vf_model *m, struct vf_error *err)
{
	if (m->shard_count < 2)
		return VF_OK;
	char *dir = strdup(m->path);
	char *slash = dir ? strrchr(dir, '/') : NULL;
	if (slash)
		*slash = '\0';
	vf_status st = vf_error_set(err, VF_ERR,
				    "%s: shard %d of %d of a sharded checkpoint, not the whole model: give its "
				    "folder (%s) or its *.safetensors.index.json",
				    m->path, m->shard_index, m->shard_count,
				    slash ? (dir[0] ? dir : "/") : ".");
	free(dir);
	return st;
}

cJSON *vf_model_to_json(const struct vf_model *m)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	if (m->name[0])
		cJSON_AddStringToObject(o, m->entry ? "id" : "name", m->name);
	cJSON_AddStringToObject(o, "path", m->path);
	cJSON_AddStringToObject(o, "format", m->format);
	if (m->hub_source[0])
		hub_json(m, o);
	vf_json_add_i64_or_null(o, "files", m->files, m->files >= 0);
	if (m->shard_count > 1) {
		cJSON *sh = cJSON_AddObjectToObject(o, "shard");
		cJSON_AddNumberToObject(sh, "index", m->shard_index);
		cJSON_AddNumberToObject(sh, "of", m->shard_count);
	}
	vf_json_add_i64_or_null(o, "tensors", m->tensors, m->tensors >= 0);
	vf_json_add_i64_or_null(o, "params", m->params, m->params >= 0);
	vf_json_add_i64_or_null(o, "bytes", m->bytes, m->bytes >= 0);
	if (m->has_quant)
		cJSON_AddItemToObject(o, "quantization", vf_qconfig_to_json(&m->quant));
	if (m->gguf)
		gguf_json(m->gguf, o);
	if (m->files >= 0) {
		cJSON *d = cJSON_AddObjectToObject(o, "dtypes");
		for (int i = 0; i < VF_DT_COUNT; i++)
			if (m->dtype_params[i])
				cJSON_AddNumberToObject(d, vf_dtype_name((enum vf_dtype)i),
							(double)m->dtype_params[i]);
		const cJSON *meta = m->gguf ? m->gguf->metadata : m->metadata;
		if (meta)
			cJSON_AddItemToObject(o, "metadata", cJSON_Duplicate(meta, 1));
		else
			cJSON_AddObjectToObject(o, "metadata");
	}
	/* the count is exact from files (or a catalog entry); from a config it
	 * is as exact as the architecture was understood */
	int64_t ltx_tr = m->ltx_parts.transformer > 0 ? m->ltx_parts.transformer : m->params;
	bool approx = (m->has_vision && m->vision.unknown[0]) || (m->has_ltx && m->ltx.unknown[0]) ||
		      /* an LTX file whose layout counts other than its tensors (inspect's
		       * "approximate layout") */
		      (m->has_ltx && m->files > 0 && vf_ltx_params(&m->ltx) != ltx_tr) ||
		      (!m->has_vision && !m->has_ltx && m->has_arch && m->arch.approximate);
	/* a pipeline: as approximate as its least understood component */
	for (size_t i = 0; i < m->ncomponents; i++) {
		cJSON *cj = vf_model_to_json(m->components[i]);
		approx = approx || cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cj, "approximate")) ||
			 m->components[i]->params < 0;
		cJSON_Delete(cj);
	}
	/* a config whose quantization_config alone is not understood: the
	 * count is the config's (exact), only the weights' bytes unknown */
	bool from_arch = m->files < 0 && !m->entry && !m->count_exact;
	cJSON_AddBoolToObject(o, "params_approximate", from_arch && approx);
	cJSON_AddBoolToObject(o, "approximate", approx);
	arch_json(m, o);
	if (m->has_groups) {
		cJSON *g = groups_json(&m->groups);
		cJSON_AddStringToObject(g, "source", m->groups_source);
		cJSON_AddItemToObject(o, "param_groups", g);
	} else {
		cJSON_AddNullToObject(o, "param_groups");
	}
	if (m->ncomponents || strcmp(m->format, "diffusers") == 0) {
		cJSON *c = cJSON_AddArrayToObject(o, "components");
		for (size_t i = 0; i < m->ncomponents; i++)
			cJSON_AddItemToArray(c, vf_model_to_json(m->components[i]));
	}
	if (m->has_adapter)
		adapter_json(m, o);
	return o;
}
