/* loratargets.c - LoRA targets matched against a model's own modules
 * (loratargets.h).
 *
 * The modules of a state-space model or hybrid, as transformers names
 * them: a Mamba-1 mixer (MambaMixer) has in_proj (hidden -> 2 x inner),
 * x_proj (inner -> dt_rank + 2 x state), dt_proj (dt_rank -> inner) and
 * out_proj (inner -> hidden); a Mamba-2 mixer (Mamba2Mixer) in_proj and
 * out_proj only. A hybrid's attention layers have q_proj, k_proj, v_proj,
 * o_proj and its feed-forwards gate_proj, up_proj, down_proj (the
 * Llama-style names these families use). peft has no default targets for
 * any of these model types: its TRANSFORMERS_MODELS_TO_LORA_TARGET_
 * MODULES_MAPPING (peft/utils/constants.py) lists none of them, so
 * LoraConfig without target_modules stops with "Please specify
 * target_modules". */
#include "vramfit/estimate/loratargets.h"
#include "vramfit/estimate/stack.h"

#include <stdio.h>
#include <string.h>

struct lmod {
	const char *name;
	unsigned bit;
};

/* The linear modules of a model with Mamba layers; returns their count. */
static int ssm_modules(const struct vf_arch *a, struct lmod *m)
{
	int n = 0;
	bool rglru = strcmp(a->family, "recurrent_gemma") == 0; /* not a Mamba mixer */
	if (!rglru) {
		m[n++] = (struct lmod){"in_proj", VF_LORA_SSM_IN};
		if (a->ssm_heads <= 0) {
			m[n++] = (struct lmod){"x_proj", VF_LORA_SSM_X};
			m[n++] = (struct lmod){"dt_proj", VF_LORA_SSM_DT};
		}
		m[n++] = (struct lmod){"out_proj", VF_LORA_SSM_OUT};
	}
	if (a->attn_layers > 0) {
		m[n++] = (struct lmod){"q_proj", VF_LORA_Q};
		m[n++] = (struct lmod){"k_proj", VF_LORA_K};
		m[n++] = (struct lmod){"v_proj", VF_LORA_V};
		m[n++] = (struct lmod){"o_proj", VF_LORA_O};
	}
	if (a->ffn > 0) {
		m[n++] = (struct lmod){"gate_proj", VF_LORA_GATE};
		m[n++] = (struct lmod){"up_proj", VF_LORA_UP};
		m[n++] = (struct lmod){"down_proj", VF_LORA_DOWN};
	}
	m[n++] = (struct lmod){"lm_head", VF_LORA_HEAD};
	return n;
}

/* "in_proj, x_proj, ..., lm_head" */
static void module_list(const struct lmod *m, int n, char *out, size_t size)
{
	size_t len = 0;
	out[0] = 0;
	for (int i = 0; i < n && len < size; i++) {
		int w = snprintf(out + len, size - len, "%s%s", i ? ", " : "", m[i].name);
		if (w < 0)
			break;
		len += (size_t)w;
	}
}

/* Append one name the model lacks to missing ("q_proj, v_proj"). */
static void add_missing(char *missing, size_t size, const char *p, size_t n)
{
	size_t len = strlen(missing);
	if (len < size)
		snprintf(missing + len, size - len, "%s%.*s", len ? ", " : "", (int)n, p);
}

/* The roles of names (a --lora-targets list) among the model's modules m;
 * the names it lacks go to missing. */
static unsigned match_names(const char *names, const struct lmod *m, int nm, char *missing,
			    size_t msize)
{
	unsigned bits = 0;
	const char *p = names;
	while (*p) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		while (n && strchr(" [\"'", *p)) {
			p++;
			n--;
		}
		while (n && strchr(" ]\"'", p[n - 1]))
			n--;
		bool all = (n == 10 && (memcmp(p, "all-linear", 10) == 0 || memcmp(p, "all_linear", 10) == 0)) ||
			   (n == 3 && memcmp(p, "all", 3) == 0);
		bool found = all;
		for (int k = 0; k < nm; k++) {
			bool named = strlen(m[k].name) == n && memcmp(m[k].name, p, n) == 0;
			if (named || (all && m[k].bit != VF_LORA_HEAD)) /* peft's all-linear leaves the head out */
				bits |= m[k].bit;
			found |= named;
		}
		if (n && !found)
			add_missing(missing, msize, p, n);
		if (!e)
			break;
		p = e + 1;
	}
	return bits;
}

/* peft's default targets by model type (TRANSFORMERS_MODELS_TO_LORA_
 * TARGET_MODULES_MAPPING, peft/utils/constants.py) as roles: q/v
 * projections under each family's names (q, v; query, value;
 * query_proj, value_proj); one fused q/k/v matrix (c_attn,
 * query_key_value, Wqkv, qkv_proj, in_proj), which the estimate counts
 * whole for any of Q, K, V; phi adds fc1 and fc2; btlm c_attn and c_proj
 * (the attention's and the MLP's). */
static const struct {
	const char *type;
	unsigned bits;
} peft_defaults[] = {
	{"t5", VF_LORA_Q | VF_LORA_V},          {"mt5", VF_LORA_Q | VF_LORA_V},
	{"bart", VF_LORA_Q | VF_LORA_V},        {"gpt2", VF_LORA_Q | VF_LORA_V},
	{"bloom", VF_LORA_Q | VF_LORA_V},       {"blip-2", VF_LORA_Q | VF_LORA_V},
	{"opt", VF_LORA_Q | VF_LORA_V},         {"gptj", VF_LORA_Q | VF_LORA_V},
	{"gpt_neox", VF_LORA_Q | VF_LORA_V},    {"gpt_neo", VF_LORA_Q | VF_LORA_V},
	{"bert", VF_LORA_Q | VF_LORA_V},        {"roberta", VF_LORA_Q | VF_LORA_V},
	{"xlm-roberta", VF_LORA_Q | VF_LORA_V}, {"electra", VF_LORA_Q | VF_LORA_V},
	{"deberta-v2", VF_LORA_Q | VF_LORA_V},  {"deberta", VF_LORA_Q | VF_LORA_V},
	{"layoutlm", VF_LORA_Q | VF_LORA_V},    {"llama", VF_LORA_Q | VF_LORA_V},
	{"llama4", VF_LORA_Q | VF_LORA_V},      {"chatglm", VF_LORA_Q | VF_LORA_V},
	{"gpt_bigcode", VF_LORA_Q | VF_LORA_V}, {"mpt", VF_LORA_Q | VF_LORA_V},
	{"RefinedWebModel", VF_LORA_Q | VF_LORA_V}, {"RefinedWeb", VF_LORA_Q | VF_LORA_V},
	{"falcon", VF_LORA_Q | VF_LORA_V},      {"btlm", VF_LORA_Q | VF_LORA_V | VF_LORA_O | VF_LORA_DOWN},
	{"codegen", VF_LORA_Q | VF_LORA_V},     {"mistral", VF_LORA_Q | VF_LORA_V},
	{"mixtral", VF_LORA_Q | VF_LORA_V},     {"stablelm", VF_LORA_Q | VF_LORA_V},
	{"phi", VF_LORA_Q | VF_LORA_V | VF_LORA_UP | VF_LORA_DOWN},
	{"gemma", VF_LORA_Q | VF_LORA_V},       {"gemma2", VF_LORA_Q | VF_LORA_V},
	{"gemma3_text", VF_LORA_Q | VF_LORA_V}, {"qwen2", VF_LORA_Q | VF_LORA_V},
	{"qwen3", VF_LORA_Q | VF_LORA_V},
};

/* A model without Mamba layers: no --lora-targets is peft's default for
 * its model type, or an error where peft has none; a mixer's module
 * named is one it lacks. */
static vf_status plain_model(const struct vf_arch *a, struct vf_setup *s, struct vf_error *err)
{
	if (!(s->given & VF_SETUP_G_LORA_TARGETS) && vf_lora_targets_stack_list(s))
		return VF_OK; /* the stack's own list, set by its profile */
	if (!(s->given & VF_SETUP_G_LORA_TARGETS)) {
		for (size_t i = 0; i < sizeof peft_defaults / sizeof peft_defaults[0]; i++)
			if (strcmp(a->family, peft_defaults[i].type) == 0) {
				s->lora_targets = peft_defaults[i].bits;
				return VF_OK;
			}
		return vf_error_set(err, VF_EUSAGE,
				    "--lora-targets: peft has no default LoRA targets for model type %s "
				    "(LoraConfig asks for target_modules): give them, e.g. --lora-targets "
				    "q_proj,v_proj or all-linear",
				    a->family[0] ? a->family : "(none in the config)");
	}
	unsigned mixer = s->lora_targets & (VF_LORA_SSM_IN | VF_LORA_SSM_X | VF_LORA_SSM_DT);
	if (!mixer)
		return VF_OK;
	return vf_error_set(err, VF_EUSAGE,
			    "--lora-targets: %s has no %s (a Mamba mixer's module; peft would stop: target "
			    "modules not found)",
			    a->family[0] ? a->family : "this model",
			    mixer & VF_LORA_SSM_IN ? "in_proj" : mixer & VF_LORA_SSM_X ? "x_proj" : "dt_proj");
}

bool vf_lora_targets_stack_list(const struct vf_setup *s)
{
	const char *t = s->lora_targets_stack;
	return !(s->given & VF_SETUP_G_LORA_TARGETS) && t[0] && strcmp(t, "peft") != 0 && strcmp(t, "none") != 0;
}

/* A stack profile whose trainer has no LoRA recipe (lora_targets "none"). */
static vf_status no_recipe(const struct vf_setup *s, struct vf_error *err)
{
	return vf_error_set(err, VF_EUSAGE,
			    "--lora-targets: stack %s has no LoRA recipe (%s); give the targets, e.g. "
			    "--lora-targets q_proj,v_proj, or choose another --stack",
			    s->stack, s->lora_targets_source);
}

vf_status vf_lora_targets_resolve(const struct vf_arch *a, struct vf_setup *s, struct vf_error *err)
{
	if (s->mode != VF_MODE_LORA)
		return VF_OK;
	vf_status st = vf_stack_apply_lora_targets(s, err); /* the stack's own, unless given */
	if (st != VF_OK)
		return st;
	if (!(s->given & VF_SETUP_G_LORA_TARGETS) && strcmp(s->lora_targets_stack, "none") == 0)
		return no_recipe(s, err);
	if (a->ssm_layers <= 0)
		return plain_model(a, s, err);
	struct lmod m[16];
	int nm = ssm_modules(a, m);
	char have[160];
	module_list(m, nm, have, sizeof have);
	const char *type = a->family[0] ? a->family : "this state-space model";
	const char *names = s->lora_target_names;
	if (vf_lora_targets_stack_list(s))
		names = s->lora_targets_stack; /* the stack's own list, matched as if given */
	else if (!(s->given & VF_SETUP_G_LORA_TARGETS) || !s->lora_target_names[0])
		return vf_error_set(err, VF_EUSAGE,
				    "--lora-targets: peft has no default LoRA targets for model type %s "
				    "(LoraConfig asks for target_modules): give them, e.g. --lora-targets "
				    "all-linear (its linear modules: %s)",
				    type, have);
	char missing[96] = "";
	unsigned bits = match_names(names, m, nm, missing, sizeof missing);
	if (missing[0] && names != s->lora_target_names)
		return vf_error_set(err, VF_EUSAGE,
				    "--lora-targets: stack %s's default targets %s are not modules of %s (its "
				    "linear modules: %s): give them",
				    s->stack, names, type, have);
	if (missing[0])
		return vf_error_set(err, VF_EUSAGE,
				    "--lora-targets: %s has no %s (its linear modules: %s; peft would stop: "
				    "target modules not found)",
				    type, missing, have);
	if (!bits)
		return vf_error_set(err, VF_EUSAGE, "--lora-targets: expected a module list");
	s->lora_targets = bits;
	return VF_OK;
}

/* The linear modules of the vision and speech towers, as transformers'
 * modeling code names them (ViTSelfAttention and Dinov2SelfAttention:
 * query, key, value, then attention.output.dense, intermediate.dense,
 * output.dense; CLIP/SigLIP attention and MLP, Whisper and SpeechT5:
 * q_proj, k_proj, v_proj, out_proj, fc1, fc2; Wav2Vec2/HuBERT/WavLM
 * feed_forward.intermediate_dense and output_dense). None of these model
 * types is in peft's TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING. */
static const struct {
	const char *family;
	const char *modules;
	const char *example;
} tower_modules[] = {
	{"vit", "query, key, value, dense", "query,value"},
	{"dinov2", "query, key, value, dense, fc1, fc2", "query,value"},
	{"clip", "q_proj, k_proj, v_proj, out_proj, fc1, fc2", "q_proj,v_proj"},
	{"siglip", "q_proj, k_proj, v_proj, out_proj, fc1, fc2", "q_proj,v_proj"},
	{"whisper", "q_proj, k_proj, v_proj, out_proj, fc1, fc2", "q_proj,v_proj"},
	{"speecht5-tts", "q_proj, k_proj, v_proj, out_proj, intermediate_dense, output_dense", "q_proj,v_proj"},
	{"wav2vec2", "q_proj, k_proj, v_proj, out_proj, intermediate_dense, output_dense", "q_proj,v_proj"},
	{"hubert", "q_proj, k_proj, v_proj, out_proj, intermediate_dense, output_dense", "q_proj,v_proj"},
	{"wavlm", "q_proj, k_proj, v_proj, out_proj, intermediate_dense, output_dense", "q_proj,v_proj"},
};

vf_status vf_lora_targets_resolve_tower(const char *family, struct vf_setup *s, struct vf_error *err)
{
	if (s->mode != VF_MODE_LORA)
		return VF_OK;
	vf_status st = vf_stack_apply_lora_targets(s, err); /* the stack's own, unless given */
	if (st != VF_OK)
		return st;
	if (s->given & VF_SETUP_G_LORA_TARGETS || vf_lora_targets_stack_list(s))
		return VF_OK;
	if (strcmp(s->lora_targets_stack, "none") == 0)
		return no_recipe(s, err);
	const char *modules = NULL, *example = "q_proj,v_proj";
	for (size_t i = 0; i < sizeof tower_modules / sizeof tower_modules[0]; i++)
		if (strcmp(family, tower_modules[i].family) == 0) {
			modules = tower_modules[i].modules;
			example = tower_modules[i].example;
		}
	return vf_error_set(err, VF_EUSAGE,
			    "--lora-targets: peft has no default LoRA targets for model type %s (LoraConfig asks "
			    "for target_modules): give them, e.g. --lora-targets %s%s%s%s",
			    family[0] ? family : "(none in the config)", example, modules ? " (its linear modules: " : "",
			    modules ? modules : "", modules ? ")" : "");
}
