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

#include "vramfit/base/data.h"
#include "vramfit/base/json.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define PEFT_FILE "estimate/lora-targets.json"

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

#define QKV (VF_LORA_Q | VF_LORA_K | VF_LORA_V)

/* peft's module names in its default mapping as roles
 * (data/estimate/lora-targets.json, whose "about" says the same): one
 * fused q/k/v matrix counts whole for any of Q, K, V and is kept as Q|V;
 * btlm's c_proj is the attention's and the MLP's output. */
static const struct {
	const char *name;
	unsigned bits;
} peft_names[] = {
	{"q", VF_LORA_Q},          {"q_proj", VF_LORA_Q},           {"query", VF_LORA_Q},
	{"query_proj", VF_LORA_Q}, {"k", VF_LORA_K},                {"k_proj", VF_LORA_K},
	{"key", VF_LORA_K},        {"v", VF_LORA_V},                {"v_proj", VF_LORA_V},
	{"value", VF_LORA_V},      {"value_proj", VF_LORA_V},       {"o_proj", VF_LORA_O},
	{"c_attn", VF_LORA_Q | VF_LORA_V}, {"query_key_value", VF_LORA_Q | VF_LORA_V},
	{"Wqkv", VF_LORA_Q | VF_LORA_V},   {"qkv_proj", VF_LORA_Q | VF_LORA_V},
	{"in_proj", VF_LORA_Q | VF_LORA_V}, {"fc1", VF_LORA_UP},     {"fc2", VF_LORA_DOWN},
	{"c_proj", VF_LORA_O | VF_LORA_DOWN},
};

/* A name safe to quote in a one-line message. */
static bool plain_name(const char *p)
{
	return p[0] && strlen(p) < 48 &&
	       strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == strlen(p);
}

/* One entry of "mapping": its module names as roles into *bits. */
static vf_status peft_entry(const cJSON *it, const char *what, unsigned *bits, struct vf_error *err)
{
	const char *type = it->string;
	if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) < 1)
		return vf_error_set(err, VF_ERR, "%s: mapping.%s: expected a list of module names", what, type);
	const cJSON *m;
	*bits = 0;
	cJSON_ArrayForEach(m, it)
	{
		const char *name = cJSON_GetStringValue(m);
		unsigned b = 0;
		for (size_t k = 0; name && k < sizeof peft_names / sizeof peft_names[0]; k++)
			if (strcmp(name, peft_names[k].name) == 0)
				b = peft_names[k].bits;
		if (!b && name && plain_name(name))
			return vf_error_set(err, VF_ERR, "%s: mapping.%s: module '%s' is not one vramfit counts",
					    what, type, name);
		if (!b)
			return vf_error_set(err, VF_ERR, "%s: mapping.%s: expected module names (strings)", what,
					    type);
		*bits |= b;
	}
	return VF_OK;
}

vf_status vf_lora_targets_peft_read(const cJSON *root, const char *what, struct vf_lora_peft *out,
				    struct vf_error *err)
{
	static const char *const cite[] = {"repo", "file", "constant", "commit"};
	const cJSON *src = cJSON_GetObjectItemCaseSensitive(root, "source");
	const cJSON *map = cJSON_GetObjectItemCaseSensitive(root, "mapping");
	out->n = 0;
	if (!cJSON_IsObject(root))
		return vf_error_set(err, VF_ERR, "%s: expected a JSON object", what);
	for (int i = 0; i < 4; i++)
		if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(src, cite[i])))
			return vf_error_set(err, VF_ERR, "%s: source.%s: expected the peft %s it was read from",
					    what, cite[i], cite[i]);
	if (!cJSON_IsObject(map) || !map->child)
		return vf_error_set(err, VF_ERR, "%s: mapping: expected an object of model types", what);
	const cJSON *it;
	cJSON_ArrayForEach(it, map)
	{
		if (!plain_name(it->string) || strlen(it->string) >= sizeof out->e[0].type)
			return vf_error_set(err, VF_ERR, "%s: mapping: a model type that is not a plain name", what);
		for (int i = 0; i < out->n; i++)
			if (strcmp(out->e[i].type, it->string) == 0)
				return vf_error_set(err, VF_ERR, "%s: mapping.%s: given twice", what, it->string);
		if (out->n == VF_LORA_PEFT_MAX)
			return vf_error_set(err, VF_ERR, "%s: mapping: more than %d model types", what,
					    VF_LORA_PEFT_MAX);
		vf_status st = peft_entry(it, what, &out->e[out->n].bits, err);
		if (st != VF_OK)
			return st;
		snprintf(out->e[out->n].type, sizeof out->e[0].type, "%s", it->string);
		out->n++;
	}
	return VF_OK;
}

/* data/estimate/lora-targets.json read once for the process; a file
 * refused is the error of every LoRA estimate that needs a default. */
static struct {
	struct vf_lora_peft t;
	struct vf_error err;
	bool bad;
} P;
static pthread_once_t peft_once = PTHREAD_ONCE_INIT;

static void peft_load(void)
{
	char src[256];
	struct vf_json_doc *doc = NULL;
	if (vf_data_load_doc(PEFT_FILE, &doc, src, sizeof src, &P.err) != VF_OK ||
	    vf_lora_targets_peft_read(vf_json_doc_root(doc), src, &P.t, &P.err) != VF_OK)
		P.bad = true;
	vf_json_doc_free(doc);
}

/* peft's default roles for model type `type` into *bits: 1 found, 0
 * none, -1 the file refused (err set). */
static int peft_default(const char *type, unsigned *bits, struct vf_error *err)
{
	pthread_once(&peft_once, peft_load);
	if (P.bad) {
		*err = P.err;
		return -1;
	}
	for (int i = 0; i < P.t.n; i++)
		if (strcmp(type, P.t.e[i].type) == 0) {
			*bits = P.t.e[i].bits;
			return 1;
		}
	return 0;
}

#define NAMES_MAX 12
#define GATE_UP (VF_LORA_GATE | VF_LORA_UP)
#define LLAMA_NAMES                                                                        \
	{"q_proj", VF_LORA_Q}, {"k_proj", VF_LORA_K}, {"v_proj", VF_LORA_V}, {"o_proj", VF_LORA_O}, \
		{"gate_proj", VF_LORA_GATE}, {"up_proj", VF_LORA_UP}, {"down_proj", VF_LORA_DOWN}

/* A transformer family's linear modules (nn.Linear, or gpt2's Conv1D) as
 * transformers' modeling code names them, with the roles the estimate
 * counts (the head, lm_head, is added after): gpt2 (c_attn = q, k and v
 * fused, c_proj in the attention and the MLP, c_fc); bloom, gpt_neox,
 * falcon (query_key_value, dense, dense_h_to_4h, dense_4h_to_h); phi
 * (q_proj, k_proj, v_proj, dense, fc1, fc2); bert, roberta (query, key,
 * value, and dense in the attention output, the intermediate and the
 * output); the Llama-style families (q_proj ... down_proj). MoE and fused
 * families, read from src/transformers/models/<family>/modeling_<family>.py
 * (huggingface/transformers at commit 00d4b3d2): mixtral
 * (MixtralBlockSparseTop2MLP w1, w3 hidden -> ffn, w2 back, per expert;
 * MixtralSparseMoeBlock's router gate, nn.Linear hidden -> experts);
 * qwen3_moe (Qwen3MoeMLP gate_proj, up_proj, down_proj per expert at
 * moe_intermediate_size; Qwen3MoeSparseMoeBlock's gate, nn.Linear hidden
 * -> experts); gpt_oss (GptOssAttention q/k/v/o_proj only: GptOssExperts
 * holds gate_up_proj and down_proj as nn.Parameter and GptOssTopKRouter
 * its weight, none a module peft's target_modules can name); phi3
 * (Phi3Attention qkv_proj hidden -> (heads + 2 kv heads) x head dim,
 * o_proj; Phi3MLP gate_up_proj hidden -> 2 x ffn, down_proj). peft
 * matches a target by the module's name, so a name the model lacks stops
 * it. */
static const struct {
	const char *families; /* " a b c " */
	struct lmod m[NAMES_MAX - 1];
} tables[] = {
	{" gpt2 ", {{"c_attn", QKV}, {"c_proj", VF_LORA_O | VF_LORA_DOWN}, {"c_fc", VF_LORA_UP}}},
	{" bloom gpt_neox falcon ",
	 {{"query_key_value", QKV}, {"dense", VF_LORA_O}, {"dense_h_to_4h", VF_LORA_UP},
	  {"dense_4h_to_h", VF_LORA_DOWN}}},
	{" phi ",
	 {{"q_proj", VF_LORA_Q}, {"k_proj", VF_LORA_K}, {"v_proj", VF_LORA_V}, {"dense", VF_LORA_O},
	  {"fc1", VF_LORA_UP}, {"fc2", VF_LORA_DOWN}}},
	{" bert roberta ",
	 {{"query", VF_LORA_Q}, {"key", VF_LORA_K}, {"value", VF_LORA_V},
	  {"dense", VF_LORA_O | VF_LORA_UP | VF_LORA_DOWN}}},
	{" llama mistral qwen2 qwen3 gemma gemma2 gemma3 gemma3_text stablelm ", {LLAMA_NAMES}},
	{" mixtral ",
	 {{"q_proj", VF_LORA_Q}, {"k_proj", VF_LORA_K}, {"v_proj", VF_LORA_V}, {"o_proj", VF_LORA_O},
	  {"w1", VF_LORA_GATE}, {"w3", VF_LORA_UP}, {"w2", VF_LORA_DOWN}, {"gate", VF_LORA_ROUTER}}},
	{" qwen3_moe ", {LLAMA_NAMES, {"gate", VF_LORA_ROUTER}}},
	{" gpt_oss ", {{"q_proj", VF_LORA_Q}, {"k_proj", VF_LORA_K}, {"v_proj", VF_LORA_V}, {"o_proj", VF_LORA_O}}},
	{" phi3 ", {{"qkv_proj", QKV}, {"o_proj", VF_LORA_O}, {"gate_up_proj", GATE_UP}, {"down_proj", VF_LORA_DOWN}}},
};

/* t5 (T5Attention q, k, v, o; T5DenseActDense wi, wo, or
 * T5DenseGatedActDense wi_0, wi_1, wo) and deepseek_v3
 * (DeepseekV3Attention: q_proj without a q rank, else q_a_proj and
 * q_b_proj; kv_a_proj_with_mqa, kv_b_proj, o_proj; DeepseekV3MLP
 * gate_proj, up_proj, down_proj in the dense layers, each routed expert
 * and the shared experts; its router, DeepseekV3TopkRouter, holds an
 * nn.Parameter, not a Linear). Returns the count, 0 for another family. */
static int layout_modules(const struct vf_arch *a, struct lmod *m)
{
	int n = 0;
	if (!strcmp(a->family, "t5") || !strcmp(a->family, "mt5")) {
		m[n++] = (struct lmod){"q", VF_LORA_Q};
		m[n++] = (struct lmod){"k", VF_LORA_K};
		m[n++] = (struct lmod){"v", VF_LORA_V};
		m[n++] = (struct lmod){"o", VF_LORA_O};
		if (a->gated_mlp) {
			m[n++] = (struct lmod){"wi_0", VF_LORA_GATE};
			m[n++] = (struct lmod){"wi_1", VF_LORA_UP};
		} else {
			m[n++] = (struct lmod){"wi", VF_LORA_UP};
		}
		m[n++] = (struct lmod){"wo", VF_LORA_DOWN};
	} else if (!strcmp(a->family, "deepseek_v3")) {
		if (a->q_lora_rank > 0) {
			m[n++] = (struct lmod){"q_a_proj", VF_LORA_MLA_QA};
			m[n++] = (struct lmod){"q_b_proj", VF_LORA_MLA_QB};
		} else {
			m[n++] = (struct lmod){"q_proj", VF_LORA_Q};
		}
		m[n++] = (struct lmod){"kv_a_proj_with_mqa", VF_LORA_MLA_KVA};
		m[n++] = (struct lmod){"kv_b_proj", VF_LORA_MLA_KVB};
		m[n++] = (struct lmod){"o_proj", VF_LORA_O};
		m[n++] = (struct lmod){"gate_proj", VF_LORA_GATE};
		m[n++] = (struct lmod){"up_proj", VF_LORA_UP};
		m[n++] = (struct lmod){"down_proj", VF_LORA_DOWN};
	}
	return n;
}

/* The family's modules into m (the head last: gpt_neox's embed_out,
 * lm_head otherwise); 0 for a family without a table, whose list is left
 * as parsed. */
static int family_modules(const struct vf_arch *a, struct lmod *m)
{
	const char *f = a->family;
	int n = layout_modules(a, m);
	char key[64];
	snprintf(key, sizeof key, " %s ", f);
	for (size_t i = 0; !n && f[0] && i < sizeof tables / sizeof tables[0]; i++)
		if (strstr(tables[i].families, key))
			for (int k = 0; k < NAMES_MAX - 1 && tables[i].m[k].name; k++)
				m[n++] = tables[i].m[k];
	if (!n)
		return 0;
	m[n++] = (struct lmod){strcmp(f, "gpt_neox") == 0 ? "embed_out" : "lm_head", VF_LORA_HEAD};
	return n;
}

/* The roles of the layers' modules (all-linear: peft leaves the head out). */
static unsigned every_role(const struct lmod *m, int nm)
{
	unsigned every = 0;
	for (int i = 0; i < nm; i++)
		every |= m[i].bit & ~(unsigned)VF_LORA_HEAD;
	return every;
}

/* The roles bits under the model's own names ("q,v" for t5's Q and V). */
static void shown_names(const struct lmod *m, int nm, unsigned bits, char *out, size_t size)
{
	size_t len = 0;
	unsigned left = bits, every = every_role(m, nm);
	out[0] = 0;
	if (every && (bits & every) == every) {
		snprintf(out, size, "all-linear%s", bits & VF_LORA_HEAD ? "," : "");
		len = strlen(out);
		left &= ~(every | VF_LORA_ALL);
	}
	for (int i = 0; i < nm && len < size; i++)
		if (m[i].bit & left) {
			int w = snprintf(out + len, size - len, "%s%s", len && out[len - 1] != ',' ? "," : "",
					 m[i].name);
			if (w < 0)
				break;
			len += (size_t)w;
			left &= ~m[i].bit;
		}
}

/* A transformer with a table of its modules: a --lora-targets name it
 * lacks is an error naming it and listing the modules; the targets are
 * shown under its own names. */
static vf_status family_names(const struct vf_arch *a, struct vf_setup *s, struct vf_error *err)
{
	struct lmod m[NAMES_MAX];
	int nm = family_modules(a, m);
	if (!nm)
		return VF_OK;
	if ((s->given & VF_SETUP_G_LORA_TARGETS) && s->lora_target_names[0]) {
		char have[200], missing[96] = "";
		module_list(m, nm, have, sizeof have);
		unsigned bits = match_names(s->lora_target_names, m, nm, missing, sizeof missing);
		if (missing[0])
			return vf_error_set(err, VF_EUSAGE,
					    "--lora-targets: %s has no %s (its linear modules: %s; peft would "
					    "stop: target modules not found)",
					    a->family, missing, have);
		if (!bits)
			return vf_error_set(err, VF_EUSAGE, "--lora-targets: expected a module list");
		/* the layers' modules, all of them: all-linear (the roles a
		 * family lacks do not count; one without an MLP module, gpt_oss,
		 * keeps its own) */
		unsigned every = every_role(m, nm);
		bool mlp = every & (VF_LORA_GATE | VF_LORA_UP | VF_LORA_DOWN);
		s->lora_targets = (bits & every) == every && mlp ? bits | VF_LORA_ALL : bits;
	}
	shown_names(m, nm, s->lora_targets, s->lora_targets_shown, sizeof s->lora_targets_shown);
	return VF_OK;
}

/* A model without Mamba layers: no --lora-targets is peft's default for
 * its model type, or an error where peft has none; a mixer's module
 * named is one it lacks. */
static vf_status plain_model(const struct vf_arch *a, struct vf_setup *s, struct vf_error *err)
{
	if (!(s->given & VF_SETUP_G_LORA_TARGETS) && vf_lora_targets_stack_list(s))
		return family_names(a, s, err); /* the stack's own list, set by its profile */
	if (!(s->given & VF_SETUP_G_LORA_TARGETS)) {
		int found = peft_default(a->family, &s->lora_targets, err);
		if (found < 0)
			return VF_ERR;
		if (found)
			return family_names(a, s, err);
		return vf_error_set(err, VF_EUSAGE,
				    "--lora-targets: peft has no default LoRA targets for model type %s "
				    "(LoraConfig asks for target_modules): give them, e.g. --lora-targets "
				    "q_proj,v_proj or all-linear",
				    a->family[0] ? a->family : "(none in the config)");
	}
	unsigned mixer = s->lora_targets & (VF_LORA_SSM_IN | VF_LORA_SSM_X | VF_LORA_SSM_DT);
	if (!mixer)
		return family_names(a, s, err);
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
	else if (!(s->given & VF_SETUP_G_LORA_TARGETS) || !s->lora_target_names[0]) {
		unsigned bits = 0; /* peft's default: nemotron_h's attention projections */
		int found = peft_default(a->family, &bits, err);
		if (found < 0)
			return VF_ERR;
		if (found && !(bits & ~every_role(m, nm))) {
			s->lora_targets = bits;
			return VF_OK;
		}
		return vf_error_set(err, VF_EUSAGE,
				    "--lora-targets: peft has no default LoRA targets for model type %s "
				    "(LoraConfig asks for target_modules): give them, e.g. --lora-targets "
				    "all-linear (its linear modules: %s)",
				    type, have);
	}
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
