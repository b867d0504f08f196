/* setup.c - the setup of a run (setup.h): defaults, the name tables of each
 * enum, the flag parser shared by estimate/fit/plan, and the JSON form. */
#include "vramfit/estimate/setup.h"
#include "vramfit/estimate/loratargets.h"
#include "vramfit/estimate/stack.h"

#include "mechanisms.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const mode_names[] = {"full", "lora", "infer"};
static const char *const precision_names[] = {"amp", "bf16", "fp16", "fp32"};
static const char *const optimizer_names[] = {"adamw", "adamw8bit", "adafactor",
					      "sgd",   "lion",      "none"};
static const char *const impl_names[] = {"foreach", "fused", "for"};
static const char *const clip_names[] = {"none", "foreach", "for"};
static const char *const quant_names[] = {"none", "int8", "int4", "nf4", "fp8"};
static const char *const shard_names[] = {"none", "ddp", "zero1", "zero2", "zero3", "fsdp"};
static const char *const attention_names[] = {"sdpa", "eager", "flash"};
static const char *const te_names[] = {"none", "bf16", "int8"};

#define NAME(tab, v) ((unsigned)(v) < sizeof(tab) / sizeof(tab[0]) ? tab[v] : "?")

const char *vf_mode_name(enum vf_mode v) { return NAME(mode_names, v); }
const char *vf_precision_name(enum vf_precision v) { return NAME(precision_names, v); }

static const char *const tf32_from_names[] = {"pytorch-default", "option", "stack"};
const char *vf_tf32_from_name(unsigned v) { return NAME(tf32_from_names, v); }
const char *vf_optimizer_name(enum vf_optimizer v) { return NAME(optimizer_names, v); }
const char *vf_optimizer_impl_name(enum vf_optimizer_impl v) { return NAME(impl_names, v); }
const char *vf_grad_clip_name(enum vf_grad_clip v) { return NAME(clip_names, v); }
const char *vf_quant_name(enum vf_quant v) { return NAME(quant_names, v); }
const char *vf_shard_name(enum vf_shard v) { return NAME(shard_names, v); }
const char *vf_attention_name(enum vf_attention v) { return NAME(attention_names, v); }
const char *vf_text_encoder_name(enum vf_text_encoder v) { return NAME(te_names, v); }
static const char *const loss_names[] = {"full", "chunked", "fused-linear"};
const char *vf_loss_name(enum vf_loss v) { return NAME(loss_names, v); }

static int lookup(const char *s, const char *const *tab, int n)
{
	if (!s)
		return -1;
	for (int i = 0; i < n; i++)
		if (strcmp(s, tab[i]) == 0)
			return i;
	return -1;
}

#define LOOKUP(s, tab) lookup(s, tab, (int)(sizeof(tab) / sizeof(tab[0])))

bool vf_mode_parse(const char *s, enum vf_mode *out)
{
	int i = LOOKUP(s, mode_names);
	if (i < 0 && s && (strcmp(s, "inference") == 0 || strcmp(s, "eval") == 0))
		i = VF_MODE_INFER;
	if (i < 0)
		return false;
	*out = (enum vf_mode)i;
	return true;
}

bool vf_precision_parse(const char *s, enum vf_precision *out)
{
	int i = LOOKUP(s, precision_names);
	if (i < 0 && s) {
		if (strcmp(s, "fp16amp") == 0 || strcmp(s, "fp16-amp") == 0)
			i = VF_PREC_FP16;
		else if (strcmp(s, "bf16amp") == 0 || strcmp(s, "bf16-amp") == 0 ||
			 strcmp(s, "mixed") == 0)
			i = VF_PREC_AMP;
		else if (strcmp(s, "no") == 0)
			i = VF_PREC_FP32;
	}
	if (i < 0)
		return false;
	*out = (enum vf_precision)i;
	return true;
}

bool vf_optimizer_parse(const char *s, enum vf_optimizer *out, enum vf_optimizer_impl *impl)
{
	if (!s)
		return false;
	int i = LOOKUP(s, optimizer_names);
	if (i >= 0) {
		*out = (enum vf_optimizer)i;
		return true;
	}
	/* Aliases: the ground truth's "adamw-fused"/"adamw-for", bitsandbytes and
	 * transformers spellings. */
	static const struct {
		const char *name;
		enum vf_optimizer opt;
		int impl; /* -1: unchanged */
	} alias[] = {
		{"adamw-fused", VF_OPT_ADAMW, VF_OPTIMPL_FUSED},
		{"adamw-foreach", VF_OPT_ADAMW, VF_OPTIMPL_FOREACH},
		{"adamw-for", VF_OPT_ADAMW, VF_OPTIMPL_FOR},
		{"adamw_torch", VF_OPT_ADAMW, -1},
		{"adamw_torch_fused", VF_OPT_ADAMW, VF_OPTIMPL_FUSED},
		{"adam", VF_OPT_ADAMW, -1},
		{"adamw-8bit", VF_OPT_ADAMW8BIT, -1},
		{"adamw_8bit", VF_OPT_ADAMW8BIT, -1},
		{"adamw_bnb_8bit", VF_OPT_ADAMW8BIT, -1},
		{"paged_adamw_8bit", VF_OPT_ADAMW8BIT, -1},
		{"sgd-momentum", VF_OPT_SGD, -1},
	};
	for (size_t k = 0; k < sizeof(alias) / sizeof(alias[0]); k++)
		if (strcmp(s, alias[k].name) == 0) {
			*out = alias[k].opt;
			if (impl && alias[k].impl >= 0)
				*impl = (enum vf_optimizer_impl)alias[k].impl;
			return true;
		}
	return false;
}

bool vf_grad_clip_parse(const char *s, enum vf_grad_clip *out)
{
	int i = LOOKUP(s, clip_names);
	if (i < 0)
		return false;
	*out = (enum vf_grad_clip)i;
	return true;
}

bool vf_optimizer_impl_parse(const char *s, enum vf_optimizer_impl *out)
{
	int i = LOOKUP(s, impl_names);
	if (i < 0 && s && strcmp(s, "foreach=false") == 0)
		i = VF_OPTIMPL_FOR;
	if (i < 0)
		return false;
	*out = (enum vf_optimizer_impl)i;
	return true;
}

bool vf_quant_parse(const char *s, enum vf_quant *out)
{
	int i = LOOKUP(s, quant_names);
	if (i < 0 && s) {
		/* The LTX-2 trainer's spellings (acceleration.quantization). */
		if (strcmp(s, "null") == 0 || strcmp(s, "no") == 0)
			i = VF_QUANT_NONE;
		else if (strcmp(s, "int8-quanto") == 0 || strcmp(s, "8bit") == 0 ||
			 strcmp(s, "llm.int8") == 0)
			i = VF_QUANT_INT8;
		else if (strcmp(s, "int4-quanto") == 0 || strcmp(s, "4bit") == 0)
			i = VF_QUANT_INT4;
		else if (strcmp(s, "gptq") == 0 || strcmp(s, "awq") == 0) /* 4-bit, groups of 128 */
			i = VF_QUANT_INT4;
		else if (strcmp(s, "fp8-quanto") == 0 || strcmp(s, "fp8uz-quanto") == 0)
			i = VF_QUANT_FP8;
	}
	if (i < 0)
		return false;
	*out = (enum vf_quant)i;
	return true;
}

bool vf_shard_parse(const char *s, enum vf_shard *out)
{
	int i = LOOKUP(s, shard_names);
	if (i < 0)
		return false;
	*out = (enum vf_shard)i;
	return true;
}

bool vf_attention_parse(const char *s, enum vf_attention *out)
{
	int i = LOOKUP(s, attention_names);
	if (i < 0 && s && (strcmp(s, "flash_attention_2") == 0 || strcmp(s, "fa2") == 0 ||
			   strcmp(s, "fa3") == 0))
		i = VF_ATTN_FLASH;
	if (i < 0)
		return false;
	*out = (enum vf_attention)i;
	return true;
}

bool vf_text_encoder_parse(const char *s, enum vf_text_encoder *out)
{
	int i = LOOKUP(s, te_names);
	if (i < 0 && s && (strcmp(s, "8bit") == 0 || strcmp(s, "int8-quanto") == 0))
		i = VF_TE_INT8;
	if (i < 0)
		return false;
	*out = (enum vf_text_encoder)i;
	return true;
}

/* Module names -> roles. */
static const struct {
	const char *name;
	unsigned bits;
} lora_names[] = {
	{"q_proj", VF_LORA_Q},       {"k_proj", VF_LORA_K},     {"v_proj", VF_LORA_V},
	{"o_proj", VF_LORA_O},       {"gate_proj", VF_LORA_GATE}, {"up_proj", VF_LORA_UP},
	{"down_proj", VF_LORA_DOWN}, {"q", VF_LORA_Q},          {"k", VF_LORA_K},
	{"v", VF_LORA_V},            {"o", VF_LORA_O},          {"gate", VF_LORA_GATE},
	{"up", VF_LORA_UP},          {"down", VF_LORA_DOWN},    {"to_q", VF_LORA_Q},
	{"to_k", VF_LORA_K},         {"to_v", VF_LORA_V},       {"to_out.0", VF_LORA_O},
	{"to_out", VF_LORA_O},       {"query", VF_LORA_Q},      {"key", VF_LORA_K},
	{"value", VF_LORA_V},        {"out_proj", VF_LORA_O},   {"dense", VF_LORA_O},
	{"w1", VF_LORA_GATE},        {"w3", VF_LORA_UP},        {"w2", VF_LORA_DOWN},
	{"fc1", VF_LORA_UP},         {"fc2", VF_LORA_DOWN},     {"c_fc", VF_LORA_UP},
	{"c_attn", VF_LORA_Q | VF_LORA_K | VF_LORA_V},
	{"query_key_value", VF_LORA_Q | VF_LORA_K | VF_LORA_V},
	{"dense_h_to_4h", VF_LORA_UP}, {"dense_4h_to_h", VF_LORA_DOWN},
	{"wi", VF_LORA_UP},          {"wo", VF_LORA_DOWN},      {"all-linear", VF_LORA_ALL},
	{"all_linear", VF_LORA_ALL}, {"all", VF_LORA_ALL},         {"lm_head", VF_LORA_HEAD},
	{"output", VF_LORA_HEAD},    {"embed_out", VF_LORA_HEAD},
	/* t5's gated MLP, gpt2's c_proj (the attention's and the MLP's; the
	 * model's table in loratargets.c says which it has) */
	{"wi_0", VF_LORA_GATE},      {"wi_1", VF_LORA_UP},
	{"c_proj", VF_LORA_O | VF_LORA_DOWN},
	/* a Mamba mixer's (out_proj is O here; vf_lora_targets_resolve
	 * makes it the mixer's on a state-space model) */
	{"in_proj", VF_LORA_SSM_IN}, {"x_proj", VF_LORA_SSM_X}, {"dt_proj", VF_LORA_SSM_DT},
	/* phi3's fused projections; deepseek_v3's latent attention (the
	 * model's table in loratargets.c checks it has them; mixtral's and
	 * qwen3_moe's `gate` is their router there) */
	{"qkv_proj", VF_LORA_Q | VF_LORA_K | VF_LORA_V}, {"gate_up_proj", VF_LORA_GATE | VF_LORA_UP},
	{"q_a_proj", VF_LORA_MLA_QA}, {"q_b_proj", VF_LORA_MLA_QB},
	{"kv_a_proj_with_mqa", VF_LORA_MLA_KVA}, {"kv_b_proj", VF_LORA_MLA_KVB},
};

vf_status vf_lora_targets_parse(const char *s, unsigned *out, struct vf_error *err)
{
	unsigned bits = 0;
	if (!s || !*s)
		return vf_error_set(err, VF_EUSAGE, "--lora-targets: expected a module list");
	const char *p = s;
	while (*p) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		while (n && (*p == ' ' || *p == '[' || *p == '"' || *p == '\'')) {
			p++;
			n--;
		}
		while (n && (p[n - 1] == ' ' || p[n - 1] == ']' || p[n - 1] == '"' ||
			     p[n - 1] == '\''))
			n--;
		if (n) {
			bool found = false;
			for (size_t k = 0; k < sizeof(lora_names) / sizeof(lora_names[0]); k++)
				if (strlen(lora_names[k].name) == n &&
				    memcmp(lora_names[k].name, p, n) == 0) {
					bits |= lora_names[k].bits;
					found = true;
					break;
				}
			if (!found)
				return vf_error_set(err, VF_EUSAGE,
						    "--lora-targets: unknown module '%.*s' (expected "
						    "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,"
						    "down_proj, to_q/to_k/to_v/to_out.0, Mamba's in_proj/x_proj/"
						    "dt_proj/out_proj, lm_head or all-linear)",
						    (int)n, p);
		}
		if (!e)
			break;
		p = e + 1;
	}
	if (!bits)
		return vf_error_set(err, VF_EUSAGE, "--lora-targets: expected a module list");
	*out = bits;
	return VF_OK;
}

const char *vf_setup_lora_targets_text(const struct vf_setup *s, char *out, size_t n)
{
	if (s->lora_targets_shown[0] && out && n) {
		snprintf(out, n, "%s", s->lora_targets_shown);
		return out;
	}
	return vf_lora_targets_format(s->lora_targets, out, n);
}

const char *vf_lora_targets_format(unsigned t, char *out, size_t n)
{
	static const char *const role[] = {"q_proj",    "k_proj",   "v_proj",   "o_proj",
					   "gate_proj", "up_proj",  "down_proj", "lm_head",
					   "in_proj",   "x_proj",   "dt_proj",   "out_proj",
					   "gate",      "q_a_proj", "q_b_proj",  "kv_a_proj_with_mqa",
					   "kv_b_proj"};
	if (!out || !n)
		return "";
	out[0] = 0;
	if ((t & VF_LORA_ALL) == VF_LORA_ALL) {
		snprintf(out, n, "all-linear%s", t & VF_LORA_HEAD ? ",lm_head" : "");
		return out;
	}
	size_t len = 0;
	for (int i = 0; i < (int)(sizeof role / sizeof role[0]); i++)
		if (t & (1u << i)) {
			int w = snprintf(out + len, n - len, "%s%s", len ? "," : "", role[i]);
			if (w < 0 || (size_t)w >= n - len)
				break;
			len += (size_t)w;
		}
	return out;
}

/* --validation off | WxHxF[:STEPS[:PASSES]]. */
static vf_status parse_validation(struct vf_setup *s, const char *v, struct vf_error *err)
{
	if (v && strcmp(v, "off") == 0) {
		s->validation_off = true;
		return VF_OK;
	}
	int w = 0, h = 0, f = 0, steps = 0, passes = 0, n = 0;
	char tail = 0;
	if (v)
		n = sscanf(v, "%dx%dx%d:%d:%d%c", &w, &h, &f, &steps, &passes, &tail);
	bool ok = n == 3 || n == 4 || n == 5;
	if (ok && n == 3)
		ok = sscanf(v, "%*dx%*dx%*d%c", &tail) != 1;
	if (ok && n == 4)
		ok = sscanf(v, "%*dx%*dx%*d:%*d%c", &tail) != 1;
	if (!ok || w < 32 || h < 32 || f < 1 || w > 16384 || h > 16384 || f > 100000 ||
	    (n >= 4 && (steps < 1 || steps > 10000)) || (n == 5 && (passes < 1 || passes > 16)))
		return vf_error_set(err, VF_EUSAGE,
				    "--validation: expected off or WIDTHxHEIGHTxFRAMES[:STEPS[:PASSES]] "
				    "(e.g. 576x576x49:30:4), got '%s'", v ? v : "");
	s->validation_off = false;
	s->val_width = w;
	s->val_height = h;
	s->val_frames = f;
	if (n >= 4)
		s->val_steps = steps;
	if (n == 5)
		s->val_passes = passes;
	return VF_OK;
}

void vf_setup_defaults(struct vf_setup *s)
{
	memset(s, 0, sizeof(*s));
	s->mode = VF_MODE_FULL;
	s->precision = VF_PREC_AMP;
	s->optimizer = VF_OPT_ADAMW;
	s->optimizer_impl = VF_OPTIMPL_FOREACH;
	s->batch = 1;
	s->seq = 2048;
	s->target_seq = 0;
	s->grad_accum = 1;
	s->grad_ckpt = false;
	s->lora_rank = 16;
	s->lora_alpha = 16;
	s->lora_targets = VF_LORA_Q | VF_LORA_V;
	s->quant = VF_QUANT_NONE;
	s->gpus = 1;
	s->shard = VF_SHARD_NONE;
	s->attention = VF_ATTN_SDPA;
	s->context_bytes = -1;
	s->audio = true;
	s->text_encoder = VF_TE_BF16;
	s->given = 0;
	s->tp = 1;
	s->pp = 1;
	snprintf(s->stack, sizeof s->stack, "hf");
	s->adapter_bf16 = false;
	s->loss = VF_LOSS_FULL;
	s->loss_chunks = 8;
	s->compile = s->activation_offload = s->optimizer_in_backward = false;
	s->paged_optimizer = s->kbit_fp32_rest = s->kbit_prep_unsharded = s->nf4_double_quant = false;
	s->stack_given = 0;
	s->peak_scope = VF_PEAK_STEP;
	s->peak_report = VF_TOOL_UNKNOWN;
	s->load_full_per_rank = s->kbit_saves_input = s->fsdp_mixed_precision = false;
	s->quant_load = VF_QLOAD_BITSANDBYTES;
	s->quant_format = VF_QFMT_GENERIC;
	s->ckpt_every = 0;
	s->ckpt_selective_op = s->ckpt_reentrant = false;
	s->offload = VF_OFFLOAD_NONE;
	s->float8 = s->gelu_native = false;
	s->tf32 = false; /* PyTorch's default: fp32 matmuls in IEEE fp32 */
	s->tf32_from = VF_TF32_PYTORCH;
	s->autocast = true; /* --precision bf16 under torch.autocast (HF bf16=True) */
	s->kbit_head = s->graph_held = s->loss_in_compute_dtype = s->lora_dropout = false;
	s->fsdp_no_sync = s->fsdp_lora_flat = false;
	s->modules_to_save = 0;
	s->head_labels = 0;
}

static vf_status parse_i64(const char *flag, const char *v, int64_t lo, int64_t hi, int64_t *out,
			   struct vf_error *err)
{
	if (!v || !*v)
		return vf_error_set(err, VF_EUSAGE, "--%s: expected a number", flag);
	errno = 0;
	char *end = NULL;
	long long x = strtoll(v, &end, 10);
	/* Accept k/K suffixes for sequence lengths ("4k" = 4096). */
	if (end && (*end == 'k' || *end == 'K') && end[1] == 0 && x < (1ll << 40)) {
		x *= 1024;
		end++;
	}
	if (errno || !end || *end || x < lo || x > hi)
		return vf_error_set(err, VF_EUSAGE, "--%s: expected a whole number in %lld..%lld, got '%s'",
				    flag, (long long)lo, (long long)hi, v);
	*out = x;
	return VF_OK;
}

static vf_status parse_bool(const char *flag, const char *v, bool *out, struct vf_error *err)
{
	if (!v || strcmp(v, "true") == 0 || strcmp(v, "1") == 0 || strcmp(v, "yes") == 0 ||
	    strcmp(v, "on") == 0) {
		*out = true;
		return VF_OK;
	}
	if (strcmp(v, "false") == 0 || strcmp(v, "0") == 0 || strcmp(v, "no") == 0 ||
	    strcmp(v, "off") == 0) {
		*out = false;
		return VF_OK;
	}
	return vf_error_set(err, VF_EUSAGE, "--%s: expected true or false, got '%s'", flag, v);
}

#define BAD_ENUM(flag, v, list) \
	vf_error_set(err, VF_EUSAGE, "--%s: expected %s, got '%s'", flag, list, v ? v : "")

/* ---- one model across several GPUs (split.h, lib/estimate/split.c) ---- */

static const char *const split_names[] = {"none", "layers"};

const char *vf_split_kind_name(enum vf_split_kind v)
{
	return (unsigned)v < VF_SPLIT_COUNT ? split_names[v] : "?";
}

int64_t vf_setup_max_memory_bytes(const struct vf_setup *s, int g)
{
	if (g < 0 || g >= VF_SETUP_MAX_MEMORY)
		return 0;
	return (int64_t)s->max_memory_cgib[g] * 1073741824LL / 100;
}

/* "0=20,1=22.5" (GPU index = GiB) into s->max_memory_cgib. */
static vf_status max_memory_parse(struct vf_setup *s, const char *v, struct vf_error *err)
{
	const char *p = v ? v : "";
	do {
		char *end = NULL;
		long g = strtol(p, &end, 10);
		double gib = 0;
		if (end == p || *end != '=' || g < 0 || g >= VF_SETUP_MAX_MEMORY)
			goto bad;
		p = end + 1;
		gib = strtod(p, &end);
		if (end == p || !(gib >= 0.01) || gib > 655.35)
			goto bad;
		if (*end == 'G' || *end == 'g') { /* "20G", "20GB", "20GiB" read as GiB */
			end++;
			if (*end == 'i' || *end == 'I')
				end++;
			if (*end == 'B' || *end == 'b')
				end++;
		}
		if (*end && *end != ',')
			goto bad;
		s->max_memory_cgib[g] = (uint16_t)(gib * 100 + 0.5);
		p = *end ? end + 1 : end;
	} while (*p);
	s->split_given |= VF_SPLIT_G_MAX_MEMORY;
	return VF_OK;
bad:
	return vf_error_set(err, VF_EUSAGE,
			    "--max-memory: expected GPU=GiB[,GPU=GiB...] with GPU 0..%d and 0.01..655 GiB "
			    "(0=20,1=22), got '%s'",
			    VF_SETUP_MAX_MEMORY - 1, v ? v : "");
}

static vf_status split_set(struct vf_setup *s, const char *name, const char *v, struct vf_error *err)
{
	int64_t x = 0;
	vf_status st;
	if (strcmp(name, "split") == 0) {
		int k = lookup(v, split_names, VF_SPLIT_COUNT);
		if (k < 0)
			return BAD_ENUM(name, v, "none or layers");
		s->split = (enum vf_split_kind)k;
		s->split_given |= VF_SPLIT_G_SPLIT;
	} else if (strcmp(name, "tp") == 0 || strcmp(name, "pp") == 0) {
		if ((st = parse_i64(name, v, 1, 1024, &x, err)))
			return st;
		*(name[0] == 't' ? &s->tp : &s->pp) = (int16_t)x;
		s->split_given |= name[0] == 't' ? VF_SPLIT_G_TP : VF_SPLIT_G_PP;
	} else if (strcmp(name, "micro-batches") == 0) {
		if ((st = parse_i64(name, v, 1, 1 << 20, &x, err)))
			return st;
		s->micro_batches = (int32_t)x;
		s->split_given |= VF_SPLIT_G_MICRO;
	} else if (strcmp(name, "sequence-parallel") == 0) {
		if ((st = parse_bool(name, v, &s->sequence_parallel, err)))
			return st;
		s->split_given |= VF_SPLIT_G_SEQ_PAR;
	} else if (strcmp(name, "max-memory") == 0) {
		return max_memory_parse(s, v, err);
	} else {
		return vf_error_set(err, VF_EUSAGE, "unknown setup flag --%s", name);
	}
	return VF_OK;
}

/* gpus = dp x tp x pp (tp x pp when --gpus is not given); the pipeline's
 * micro-batches are its gradient accumulation (default: --grad-accum when
 * given, else one per stage). */
static vf_status split_finish(struct vf_setup *s, struct vf_error *err)
{
	if (s->tp < 1) /* a setup built without vf_setup_defaults: no split */
		s->tp = 1;
	if (s->pp < 1)
		s->pp = 1;
	int64_t mp = (int64_t)s->tp * s->pp;
	if (s->split == VF_SPLIT_LAYERS && mp > 1)
		return vf_error_set(err, VF_EUSAGE,
				    "--split layers places whole layers (accelerate); --tp/--pp are Megatron-style: "
				    "use one or the other");
	if (s->sequence_parallel && s->tp < 2)
		return vf_error_set(err, VF_EUSAGE, "--sequence-parallel needs --tp N (N >= 2)");
	if ((s->split_given & VF_SPLIT_G_MICRO) && s->pp < 2)
		return vf_error_set(err, VF_EUSAGE, "--micro-batches needs --pp N (N >= 2)");
	if ((s->split_given & VF_SPLIT_G_MAX_MEMORY) && s->split != VF_SPLIT_LAYERS)
		return vf_error_set(err, VF_EUSAGE, "--max-memory applies to --split layers");
	if (mp > 1) {
		if (!(s->given & VF_SETUP_G_GPUS))
			s->gpus = (int)(mp < 4096 ? mp : 4096);
		if (s->gpus % mp)
			return vf_error_set(err, VF_EUSAGE,
					    "--gpus %d: must be data parallel x tp x pp, a multiple of %lld",
					    s->gpus, (long long)mp);
		if (s->gpus == mp && !(s->given & VF_SETUP_G_SHARD))
			s->shard = VF_SHARD_NONE; /* one replica: nothing data parallel */
	}
	if (s->split == VF_SPLIT_LAYERS && !(s->given & VF_SETUP_G_SHARD))
		s->shard = VF_SHARD_NONE;
	if (s->pp > 1) {
		if (!(s->split_given & VF_SPLIT_G_MICRO))
			s->micro_batches = (s->given & VF_SETUP_G_GRAD_ACCUM)
						   ? (int32_t)(s->grad_accum < (1 << 20) ? s->grad_accum : 1 << 20)
						   : s->pp;
		if ((s->given & VF_SETUP_G_GRAD_ACCUM) && s->grad_accum != s->micro_batches)
			return vf_error_set(err, VF_EUSAGE,
					    "--micro-batches %lld and --grad-accum %lld: with --pp the micro-batches "
					    "are the accumulation; give one",
					    (long long)s->micro_batches, (long long)s->grad_accum);
		s->grad_accum = s->micro_batches;
	}
	return VF_OK;
}

static void split_to_json(const struct vf_setup *s, cJSON *o)
{
	if (s->split == VF_SPLIT_NONE && s->tp == 1 && s->pp == 1)
		return;
	cJSON_AddStringToObject(o, "split", vf_split_kind_name(s->split));
	cJSON_AddNumberToObject(o, "tp", s->tp);
	cJSON_AddNumberToObject(o, "pp", s->pp);
	cJSON_AddNumberToObject(o, "dp", s->split == VF_SPLIT_LAYERS ? 1 : s->gpus / (s->tp * s->pp));
	cJSON_AddNumberToObject(o, "micro_batches", (double)(s->pp > 1 ? s->micro_batches : 0));
	cJSON_AddBoolToObject(o, "sequence_parallel", s->sequence_parallel);
	if (s->split_given & VF_SPLIT_G_MAX_MEMORY) {
		cJSON *m = cJSON_AddObjectToObject(o, "max_memory_gib");
		for (int i = 0; i < VF_SETUP_MAX_MEMORY; i++)
			if (s->max_memory_cgib[i]) {
				char k[16];
				snprintf(k, sizeof k, "%d", i);
				cJSON_AddNumberToObject(m, k, s->max_memory_cgib[i] / 100.0);
			}
	}
}

/* vf_setup_set for the head, saved modules, validation and the training stack. */
static vf_status mechanism_set(struct vf_setup *s, const char *name, const char *v, struct vf_error *err)
{
	vf_status st;
	if (strcmp(name, "head") == 0) {
		if (!vf__mech_head_parse(v, &s->head_labels))
			return BAD_ENUM(name, v, "lm or classify:N (N 1..1000000)");
	} else if (strcmp(name, "modules-to-save") == 0) {
		if (!vf__mech_modules_to_save_parse(v, &s->modules_to_save))
			return BAD_ENUM(name, v, "a list of lm_head and embed_tokens");
	} else if (strcmp(name, "validation") == 0) {
		if ((st = parse_validation(s, v, err)))
			return st;
		s->given |= VF_SETUP_G_VALIDATION;
	} else if (strcmp(name, "stack") == 0 || strcmp(name, "loss") == 0 ||
		   strcmp(name, "adapter-dtype") == 0 || strcmp(name, "compile") == 0 ||
		   strcmp(name, "no-compile") == 0 || strcmp(name, "activation-offload") == 0 ||
		   strcmp(name, "no-activation-offload") == 0 ||
		   strcmp(name, "optimizer-in-backward") == 0 || strcmp(name, "peak-scope") == 0 ||
		   strcmp(name, "float8") == 0 || strcmp(name, "no-float8") == 0 ||
		   strcmp(name, "tf32") == 0 || strcmp(name, "no-tf32") == 0 ||
		   strcmp(name, "autocast") == 0 || strcmp(name, "no-autocast") == 0 ||
		   strcmp(name, "lora-dropout") == 0 || strcmp(name, "no-lora-dropout") == 0) {
		return vf_stack_set(s, name, v, err);
	} else {
		return split_set(s, name, v, err);
	}
	return VF_OK;
}

/* vf_setup_set for video, audio and the text encoder (LTX-2). */
static vf_status media_set(struct vf_setup *s, const char *name, const char *v, struct vf_error *err)
{
	vf_status st;
	if (strcmp(name, "video") == 0) {
		int w = 0, h = 0, f = 0;
		char tail = 0;
		if (!v || sscanf(v, "%dx%dx%d%c", &w, &h, &f, &tail) != 3 || w < 32 || h < 32 ||
		    f < 1 || w > 16384 || h > 16384 || f > 100000)
			return vf_error_set(err, VF_EUSAGE,
					    "--video: expected WIDTHxHEIGHTxFRAMES (e.g. 960x544x89), got '%s'",
					    v ? v : "");
		s->video_width = w;
		s->video_height = h;
		s->video_frames = f;
		s->given |= VF_SETUP_G_VIDEO;
	} else if (strcmp(name, "audio") == 0) {
		if ((st = parse_bool(name, v, &s->audio, err)))
			return st;
		s->given |= VF_SETUP_G_AUDIO;
	} else if (strcmp(name, "no-audio") == 0) {
		s->audio = false;
		s->given |= VF_SETUP_G_AUDIO;
	} else if (strcmp(name, "text-encoder") == 0) {
		if (!vf_text_encoder_parse(v, &s->text_encoder))
			return BAD_ENUM(name, v, "none, bf16 or int8");
		s->given |= VF_SETUP_G_TEXT_ENCODER;
	} else {
		return mechanism_set(s, name, v, err);
	}
	return VF_OK;
}

/* vf_setup_set for GPUs, sharding, attention kernel, CUDA context and offload. */
static vf_status placement_set(struct vf_setup *s, const char *name, const char *v, struct vf_error *err)
{
	int64_t x = 0;
	vf_status st;
	if (strcmp(name, "gpus") == 0) {
		if ((st = parse_i64(name, v, 1, 4096, &x, err)))
			return st;
		s->gpus = (int)x;
		s->given |= VF_SETUP_G_GPUS;
	} else if (strcmp(name, "shard") == 0) {
		if (!vf_shard_parse(v, &s->shard))
			return BAD_ENUM(name, v, "none, ddp, zero1, zero2, zero3 or fsdp");
		s->given |= VF_SETUP_G_SHARD;
	} else if (strcmp(name, "attention") == 0) {
		if (!vf_attention_parse(v, &s->attention))
			return BAD_ENUM(name, v, "sdpa, eager or flash");
		s->given |= VF_SETUP_G_ATTENTION;
	} else if (strcmp(name, "context-mib") == 0) {
		if ((st = parse_i64(name, v, 0, 1 << 20, &x, err)))
			return st;
		s->context_bytes = x << 20;
		s->given |= VF_SETUP_G_CONTEXT;
	} else if (strcmp(name, "offload") == 0) {
		if (!vf__mech_offload_parse(v, &s->offload))
			return BAD_ENUM(name, v, "none, optimizer or params");
	} else if (strcmp(name, "offload-optimizer") == 0) {
		if ((st = parse_bool(name, v, &s->offload_optimizer, err)))
			return st;
		s->given |= VF_SETUP_G_OFFLOAD;
	} else if (strcmp(name, "no-offload-optimizer") == 0) {
		s->offload_optimizer = false;
		s->given |= VF_SETUP_G_OFFLOAD;
	} else {
		return media_set(s, name, v, err);
	}
	return VF_OK;
}

/* vf_setup_set for the adapter (LoRA) and the base weights' quantization. */
static vf_status adapter_set(struct vf_setup *s, const char *name, const char *v, struct vf_error *err)
{
	int64_t x = 0;
	vf_status st;
	if (strcmp(name, "lora-rank") == 0) {
		if ((st = parse_i64(name, v, 1, 65536, &x, err)))
			return st;
		s->lora_rank = (int)x;
		s->given |= VF_SETUP_G_LORA_RANK;
	} else if (strcmp(name, "lora-alpha") == 0) {
		char *end = NULL;
		double a = v ? strtod(v, &end) : 0;
		if (!v || !*v || !end || *end || !(a > 0) || a > 1e6)
			return vf_error_set(err, VF_EUSAGE, "--lora-alpha: expected a positive number, got '%s'",
					    v ? v : "");
		s->lora_alpha = a;
		s->given |= VF_SETUP_G_LORA_ALPHA;
	} else if (strcmp(name, "lora-targets") == 0) {
		if ((st = vf_lora_targets_parse(v, &s->lora_targets, err)))
			return st;
		if (strlen(v) >= sizeof s->lora_target_names)
			return vf_error_set(err, VF_EUSAGE, "--lora-targets: a list of %zu characters (at most %zu)",
					    strlen(v), sizeof s->lora_target_names - 1);
		snprintf(s->lora_target_names, sizeof s->lora_target_names, "%s", v);
		s->given |= VF_SETUP_G_LORA_TARGETS;
	} else if (strcmp(name, "quant") == 0) {
		if (!vf_quant_parse(v, &s->quant))
			return BAD_ENUM(name, v, "none, int8, int4, nf4 or fp8");
		s->quant_format = strcmp(v, "gptq") == 0  ? VF_QFMT_GPTQ
				  : strcmp(v, "awq") == 0 ? VF_QFMT_AWQ
							  : VF_QFMT_GENERIC;
		s->given |= VF_SETUP_G_QUANT;
	} else {
		return placement_set(s, name, v, err);
	}
	return VF_OK;
}

/* Each VF_SETUP_G_* bit's flag, in the order the setup's words name them. */
static const struct {
	unsigned bit;
	const char *flag;
} setup_flags[] = {
	{VF_SETUP_G_MODE, "--mode"},           {VF_SETUP_G_PRECISION, "--precision"},
	{VF_SETUP_G_OPTIMIZER, "--optimizer"}, {VF_SETUP_G_OPTIMIZER_IMPL, "--optimizer-impl"},
	{VF_SETUP_G_BATCH, "--batch"},         {VF_SETUP_G_SEQ, "--seq"},
	{VF_SETUP_G_TARGET_SEQ, "--target-seq"}, {VF_SETUP_G_GRAD_ACCUM, "--grad-accum"},
	{VF_SETUP_G_GRAD_CKPT, "--grad-ckpt"}, {VF_SETUP_G_LORA_RANK, "--lora-rank"},
	{VF_SETUP_G_LORA_ALPHA, "--lora-alpha"}, {VF_SETUP_G_LORA_TARGETS, "--lora-targets"},
	{VF_SETUP_G_QUANT, "--quant"},         {VF_SETUP_G_GPUS, "--gpus"},
	{VF_SETUP_G_SHARD, "--shard"},         {VF_SETUP_G_ATTENTION, "--attention"},
	{VF_SETUP_G_CONTEXT, "--context-mib"}, {VF_SETUP_G_VIDEO, "--video"},
	{VF_SETUP_G_AUDIO, "--audio"},         {VF_SETUP_G_TEXT_ENCODER, "--text-encoder"},
	{VF_SETUP_G_OFFLOAD, "--offload-optimizer"}, {VF_SETUP_G_VALIDATION, "--validation"},
	{VF_SETUP_G_GRAD_CLIP, "--grad-clip"}, {VF_SETUP_G_ZERO_GRAD, "--zero-grad"},
	{VF_SETUP_G_STACK, "--stack"},
};

const char *vf_setup_flag(unsigned bit)
{
	for (size_t i = 0; i < sizeof setup_flags / sizeof setup_flags[0]; i++)
		if (setup_flags[i].bit == bit)
			return setup_flags[i].flag;
	return NULL;
}

void vf_setup_flags_words(unsigned given, char *out, size_t n)
{
	size_t k = 0;
	if (n)
		out[0] = 0;
	for (size_t i = 0; i < sizeof setup_flags / sizeof setup_flags[0] && k < n; i++)
		if (given & setup_flags[i].bit)
			k += (size_t)snprintf(out + k, n - k, "%s%s", k ? ", " : "", setup_flags[i].flag);
}

bool vf_setup_none_means_ddp(const struct vf_setup *s)
{
	int per = s->tp * s->pp > 0 ? s->tp * s->pp : 1;
	return s->gpus > 1 && s->shard == VF_SHARD_NONE && s->mode != VF_MODE_INFER &&
	       s->split != VF_SPLIT_LAYERS && s->gpus / per > 1;
}

/* vf_setup_set for batch, sequence, accumulation and checkpointing. */
static vf_status shape_set(struct vf_setup *s, const char *name, const char *v, struct vf_error *err)
{
	vf_status st;
	if (strcmp(name, "batch") == 0) {
		if ((st = parse_i64(name, v, 1, 1 << 20, &s->batch, err)))
			return st;
		s->given |= VF_SETUP_G_BATCH;
	} else if (strcmp(name, "seq") == 0) {
		if ((st = parse_i64(name, v, 1, 1 << 24, &s->seq, err)))
			return st;
		s->given |= VF_SETUP_G_SEQ;
	} else if (strcmp(name, "target-seq") == 0) {
		if ((st = parse_i64(name, v, 1, 1 << 24, &s->target_seq, err)))
			return st;
		s->given |= VF_SETUP_G_TARGET_SEQ;
	} else if (strcmp(name, "grad-accum") == 0) {
		if ((st = parse_i64(name, v, 1, 1 << 20, &s->grad_accum, err)))
			return st;
		s->given |= VF_SETUP_G_GRAD_ACCUM;
	} else if (strcmp(name, "grad-ckpt") == 0) {
		s->ckpt_every = 0;
		s->ckpt_selective_op = s->ckpt_reentrant = false;
		if (v && (strncmp(v, "selective:", 10) == 0 || strncmp(v, "every:", 6) == 0 ||
			  strcmp(v, "reentrant") == 0)) {
			if ((st = vf__mech_ckpt_parse(v, s, err)))
				return st;
		} else if ((st = parse_bool(name, v, &s->grad_ckpt, err))) {
			return st;
		}
		s->given |= VF_SETUP_G_GRAD_CKPT;
	} else if (strcmp(name, "no-grad-ckpt") == 0) {
		s->grad_ckpt = false;
		s->ckpt_every = 0;
		s->ckpt_selective_op = s->ckpt_reentrant = false;
		s->given |= VF_SETUP_G_GRAD_CKPT;
	} else {
		return adapter_set(s, name, v, err);
	}
	return VF_OK;
}

vf_status vf_setup_set(struct vf_setup *s, const char *name, const char *v, struct vf_error *err)
{
	if (strcmp(name, "mode") == 0) {
		if (!vf_mode_parse(v, &s->mode)) {
			if (v && (strcasecmp(v, "qlora") == 0 || strcasecmp(v, "q-lora") == 0))
				return vf_error_set(err, VF_EUSAGE,
						    "--mode: expected full, lora or infer, got '%s' (QLoRA is "
						    "--mode lora --quant nf4: LoRA over a 4-bit NF4 base)",
						    v);
			return BAD_ENUM(name, v, "full, lora or infer");
		}
		s->given |= VF_SETUP_G_MODE;
	} else if (strcmp(name, "precision") == 0) {
		if (!vf_precision_parse(v, &s->precision))
			return BAD_ENUM(name, v, "amp, bf16, fp16 or fp32");
		s->given |= VF_SETUP_G_PRECISION;
	} else if (strcmp(name, "optimizer") == 0) {
		enum vf_optimizer_impl impl = s->optimizer_impl;
		if (v && strncmp(v, "paged", 5) == 0 && (v[5] == '-' || v[5] == '_')) {
			v += 6; /* bitsandbytes paged states: paged-adamw, paged-adamw8bit */
			s->paged_optimizer = true;
			s->stack_given |= VF_STACK_G_PAGED;
			if (strcmp(v, "adamw") != 0 && strcmp(v, "adamw8bit") != 0 &&
			    strcmp(v, "adamw_8bit") != 0 && strcmp(v, "adamw-8bit") != 0)
				return BAD_ENUM(name, v, "paged-adamw or paged-adamw8bit");
			impl = VF_OPTIMPL_FUSED; /* bitsandbytes updates each tensor in one kernel */
		}
		if (!vf_optimizer_parse(v, &s->optimizer, &impl))
			return BAD_ENUM(name, v, "adamw, adamw8bit, adafactor, sgd or lion");
		if (impl != s->optimizer_impl) {
			s->optimizer_impl = impl;
			s->given |= VF_SETUP_G_OPTIMIZER_IMPL;
		}
		s->given |= VF_SETUP_G_OPTIMIZER;
	} else if (strcmp(name, "optimizer-impl") == 0) {
		if (!vf_optimizer_impl_parse(v, &s->optimizer_impl))
			return BAD_ENUM(name, v, "foreach, fused or for");
		s->given |= VF_SETUP_G_OPTIMIZER_IMPL;
	} else if (strcmp(name, "grad-clip") == 0) {
		if (!vf_grad_clip_parse(v, &s->grad_clip))
			return BAD_ENUM(name, v, "none, foreach or for");
		s->given |= VF_SETUP_G_GRAD_CLIP;
	} else if (strcmp(name, "zero-grad") == 0) {
		if (!v || (strcmp(v, "none") != 0 && strcmp(v, "zeros") != 0))
			return BAD_ENUM(name, v, "none or zeros");
		s->grads_zeroed = strcmp(v, "zeros") == 0;
		s->given |= VF_SETUP_G_ZERO_GRAD;
	} else {
		return shape_set(s, name, v, err);
	}
	return VF_OK;
}

vf_status vf_setup_finish(struct vf_setup *s, struct vf_error *err)
{
	if (s->mode == VF_MODE_INFER) {
		if ((s->given & VF_SETUP_G_OPTIMIZER) && s->optimizer != VF_OPT_NONE)
			return vf_error_set(err, VF_EUSAGE,
					    "--optimizer: --mode infer takes no optimizer");
		s->optimizer = VF_OPT_NONE;
		s->grad_ckpt = false;
		if (!(s->given & VF_SETUP_G_PRECISION))
			s->precision = VF_PREC_BF16;
	} else if (s->optimizer == VF_OPT_NONE) {
		return vf_error_set(err, VF_EUSAGE, "--optimizer: training needs an optimizer");
	}
	if (s->gpus > 1 && s->shard == VF_SHARD_NONE && !(s->given & VF_SETUP_G_SHARD)) {
		s->shard = VF_SHARD_DDP;
	} else if ((s->given & VF_SETUP_G_SHARD) && vf_setup_none_means_ddp(s)) {
		s->shard_none_ddp = true;
		s->shard = VF_SHARD_DDP;
	}
	if (!(s->given & VF_SETUP_G_LORA_ALPHA))
		s->lora_alpha = s->lora_rank;
	if (s->quant != VF_QUANT_NONE && s->mode == VF_MODE_FULL)
		return vf_error_set(err, VF_EUSAGE,
				    "--quant %s: quantized base weights need --mode lora or infer",
				    vf_quant_name(s->quant));
	if (s->target_seq < 0 || s->batch < 1 || s->seq < 1 || s->grad_accum < 1 || s->gpus < 1)
		return vf_error_set(err, VF_EUSAGE, "setup: batch, seq, grad-accum and gpus must be >= 1");
	/* the stack's defaults (data/stacks/<stack>.json): precision of LoRA
	 * and full fine-tuning, adapter dtype, loss, compile, offload... */
	vf_status st = vf_stack_apply(s, err);
	if (st != VF_OK)
		return st;
	return split_finish(s, err);
}

bool vf_setup_kbit_prep(const struct vf_setup *s)
{
	bool sharded = s->gpus > 1 && (s->shard == VF_SHARD_FSDP || s->shard == VF_SHARD_ZERO3);
	return s->quant != VF_QUANT_NONE && s->kbit_fp32_rest && !(sharded && s->kbit_prep_unsharded);
}

bool vf_setup_autocast(const struct vf_setup *s)
{
	return s->precision != VF_PREC_FP32 && (s->precision != VF_PREC_BF16 || s->autocast);
}

bool vf_setup_fp32_adapter_gemms(const struct vf_setup *s)
{
	return s->mode == VF_MODE_LORA && !s->adapter_bf16 && s->precision == VF_PREC_BF16 && !s->autocast;
}

cJSON *vf_setup_to_json(const struct vf_setup *s)
{
	char targets[128];
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "mode", vf_mode_name(s->mode));
	cJSON_AddStringToObject(o, "precision", vf_precision_name(s->precision));
	cJSON_AddStringToObject(o, "optimizer", vf_optimizer_name(s->optimizer));
	cJSON_AddStringToObject(o, "optimizer_impl", vf_optimizer_impl_name(s->optimizer_impl));
	cJSON_AddNumberToObject(o, "batch", (double)s->batch);
	cJSON_AddNumberToObject(o, "seq", (double)s->seq);
	cJSON_AddNumberToObject(o, "target_seq", (double)(s->target_seq ? s->target_seq : s->seq));
	cJSON_AddNumberToObject(o, "grad_accum", (double)s->grad_accum);
	cJSON_AddBoolToObject(o, "grad_ckpt", s->grad_ckpt);
	if (s->grad_ckpt && (s->ckpt_every > 1 || s->ckpt_selective_op || s->ckpt_reentrant)) {
		char c[32];
		cJSON_AddStringToObject(o, "grad_ckpt_policy", vf__mech_ckpt_name(s, c, sizeof c));
	}
	if (s->mode == VF_MODE_LORA) {
		cJSON_AddNumberToObject(o, "lora_rank", s->lora_rank);
		cJSON_AddNumberToObject(o, "lora_alpha", s->lora_alpha);
		cJSON_AddStringToObject(o, "lora_targets",
					vf_setup_lora_targets_text(s, targets, sizeof(targets)));
		if (vf_lora_targets_stack_list(s)) /* the stack's own list: its source whole */
			cJSON_AddStringToObject(o, "lora_targets_source", s->lora_targets_source);
	} else {
		cJSON_AddNullToObject(o, "lora_rank");
		cJSON_AddNullToObject(o, "lora_alpha");
		cJSON_AddNullToObject(o, "lora_targets");
	}
	cJSON_AddStringToObject(o, "quant", vf_quant_name(s->quant));
	if (s->quant == VF_QUANT_INT4 && s->quant_format != VF_QFMT_GENERIC)
		cJSON_AddStringToObject(o, "quant_format", s->quant_format == VF_QFMT_GPTQ ? "gptq" : "awq");
	cJSON_AddNumberToObject(o, "gpus", s->gpus);
	cJSON_AddStringToObject(o, "shard", vf_shard_name(s->shard));
	cJSON_AddStringToObject(o, "attention", vf_attention_name(s->attention));
	cJSON_AddNumberToObject(o, "context_mib", s->context_bytes < 0 ? -1.0 : (double)((s->context_bytes + (1 << 19)) >> 20));
	if (s->video_width > 0) {
		char v[64];
		snprintf(v, sizeof(v), "%dx%dx%d", s->video_width, s->video_height, s->video_frames);
		cJSON_AddStringToObject(o, "video", v);
		cJSON_AddBoolToObject(o, "audio", s->audio);
		cJSON_AddStringToObject(o, "text_encoder", vf_text_encoder_name(s->text_encoder));
		cJSON_AddBoolToObject(o, "offload_optimizer", s->offload_optimizer);
		if (s->validation_off) {
			cJSON_AddStringToObject(o, "validation", "off");
		} else {
			snprintf(v, sizeof(v), "%dx%dx%d",
				 s->val_width > 0 ? s->val_width : s->video_width,
				 s->val_height > 0 ? s->val_height : s->video_height,
				 s->val_frames > 0 ? s->val_frames : s->video_frames);
			cJSON_AddStringToObject(o, "validation", v);
			cJSON_AddNumberToObject(o, "validation_steps", s->val_steps > 0 ? s->val_steps : 30);
			cJSON_AddNumberToObject(o, "validation_passes", s->val_passes > 0 ? s->val_passes : 4);
		}
	}
	split_to_json(s, o);
	vf_stack_to_json(s, o);
	cJSON_AddStringToObject(o, "offload", vf__mech_offload_name(s->offload));
	if (s->grad_clip != VF_CLIP_NONE)
		cJSON_AddStringToObject(o, "grad_clip", vf_grad_clip_name(s->grad_clip));
	if (s->grads_zeroed)
		cJSON_AddStringToObject(o, "zero_grad", "zeros");
	if (s->head_labels > 0)
		cJSON_AddNumberToObject(o, "head_labels", s->head_labels);
	if (s->modules_to_save) {
		char m[64];
		cJSON_AddStringToObject(o, "modules_to_save",
					vf__mech_modules_to_save_format(s->modules_to_save, m, sizeof m));
	}
	return o;
}

