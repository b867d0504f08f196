/* split.c - one model across several GPUs (split.h): layer split
 * (accelerate's device_map="auto"), tensor parallelism, pipeline
 * parallelism; per-GPU memory from the estimator run on the part of the
 * model each GPU holds, and the step time of the whole.
 *
 * What each GPU runs, as a model the estimator knows:
 *  - a tensor-parallel rank (Megatron column/row parallel layers) is the
 *    model with heads/N query heads, ceil(kv_heads/N) KV heads (a KV head
 *    is replicated when there are fewer than N), ceil(ffn/N) MLP width and
 *    ceil(vocab/N) rows of the embedding and lm_head (vocab-parallel
 *    embedding and cross-entropy); hidden size, norms and the residual
 *    stream stay whole (replicated) - so its weights, gradients, states,
 *    KV cache, logits and the activations inside attention and the MLP are
 *    1/N, the norms' and the residual's are not; with sequence parallelism
 *    those are split over the sequence too and every activation is 1/N
 *    (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
 *    Transformer Models", sec. 4.2.2);
 *  - a stage (pipeline stage, or the layers one GPU of a layer split holds)
 *    is the model with its layers; without the embedding (a vocabulary of
 *    one: nothing) unless it is the first, without the head unless it is
 *    the last. A tied lm_head is counted on the last stage of a pipeline
 *    too (Megatron keeps a copy there; its gradient is all-reduced with the
 *    first's); a layer split holds it once, with the embedding on the first
 *    GPU (accelerate's infer_auto_device_map puts tied modules on one
 *    device: the weight is one tensor).
 *    Stage 0 holds the activations of min(pp, M) micro-batches on 1F1B,
 *    stage i min(pp - i, M) (Narayanan et al. 2021, "Efficient Large-Scale
 *    Language Model Training on GPU Clusters Using Megatron-LM", sec. 2.2).
 *
 * Time: the stages' estimates (their FLOPs at the GPU's rate), plus
 *  - tensor parallel: a ring all-reduce of the hidden state (tokens x
 *    hidden x 2 bytes) after attention and after the MLP of every layer,
 *    in the forward; again in the backward (and the recomputed forward),
 *    2 (N-1)/N of the message over the link, not overlapped;
 *  - pipeline: the hidden state handed to the next stage per micro-batch
 *    (its gradient back in training); 1F1B: (M + pp - 1) micro-batch slots
 *    of the slowest stage, the pp - 1 extra ones being the bubble;
 *  - layer split: one GPU works at a time (no overlap): the sum of the
 *    stages plus the hand-overs.
 * Links: the catalog's interconnect (NVLink, or PCIe for cards without it;
 * the catalog figure is bidirectional, one direction is half); between
 * nodes of 8 GPUs (HGX/DGX) NETWORK_GBS. Tensor-parallel all-reduces run
 * as NCCL runs them on the GPU's link class (nccl.c: bus bandwidth and
 * latency; GeForce cards without peer-to-peer through host memory). */
#include "vramfit/estimate/split.h"

#include "nccl.h"

#include "vramfit/estimate/search.h"

#include "mechanisms.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One direction per GPU between nodes: one 400 Gb/s InfiniBand NDR /
 * ConnectX-7 port per GPU as DGX H100 and HGX H100/H200 systems ship
 * (NVIDIA DGX H100 user guide: 8 x single-port ConnectX-7, 400 Gb/s). */
#define NETWORK_GBS 50.0
/* GPUs per node when a tensor- or pipeline-parallel group spans nodes. */
#define NODE_GPUS 8

bool vf_split_active(const struct vf_setup *s)
{
	return s->split == VF_SPLIT_LAYERS || s->tp > 1 || s->pp > 1;
}

struct vf_split *vf_split_new(void)
{
	struct vf_split *sp = malloc(sizeof *sp);
	if (sp)
		memset(&sp->cache, 0, sizeof sp->cache);
	return sp;
}

/* Bytes per stored parameter outside the linear matrices (embeddings,
 * norms): what estimate.c stores (bf16 when --precision bf16, else fp32). */
static double param_bytes(const struct vf_setup *s)
{
	return s->precision == VF_PREC_BF16 ? 2 : 4;
}

/* Bytes per element of the hidden state between layers and GPUs. */
static double hidden_bytes(const struct vf_setup *s)
{
	return s->precision == VF_PREC_FP32 ? 4 : 2;
}

/* n of a layer count (ssm_layers, attn_layers, ...) of the whole model
 * on a slice of f of its layers, rounded; negative (unknown, "all") kept. */
static int64_t layer_share(int64_t n, double f)
{
	return n > 0 ? (int64_t)llround((double)n * f) : n;
}

/* A family that counts its own layout (lib/model/ssm.c: Mamba, the
 * hybrids, ChatGLM, InternLM2): the slice's groups from the whole's. The
 * embedding group (token table and an untied head) with the vocabulary
 * only, by the slice's rows; every other group (the layers' and the final
 * norm) by the slice's share of the layers, so that the slices of a split
 * sum to the whole; attention, MLP and experts 1/tp (split.c never runs
 * an SSM mixer at tp > 1: split_check). The layer counts follow. */
static void slice_layout(const struct vf_arch *a, int tp, bool vocab, struct vf_arch *o)
{
	double f = a->layers > 0 ? (double)o->layers / (double)a->layers : 1;
	double t = tp > 1 ? tp : 1;
	o->layout[0] = vocab && a->vocab > 0
			       ? (int64_t)llround((double)a->layout[0] * (double)o->vocab / (double)a->vocab)
			       : 0;
	for (int i = 1; i < 6; i++) {
		bool split = i == 1 || i == 2 || i == 4; /* attention, mlp, experts */
		o->layout[i] = (int64_t)llround((double)a->layout[i] * f / (split ? t : 1));
	}
	o->ssm_layers = layer_share(a->ssm_layers, f);
	o->attn_layers = layer_share(a->attn_layers, f);
	o->ffn_layers = layer_share(a->ffn_layers, f);
	o->moe_layers = layer_share(a->moe_layers, f);
	o->sliding_layers = layer_share(a->sliding_layers, f);
}

/* The safetensors header count of a slice (estimate.c takes the header's
 * count as the count, what the layout does not explain as linear
 * weights): the slice's own count plus its share (of the layers, 1/tp) of
 * what the whole's layout does not explain; -1 (the layout's count) when
 * either is not counted. */
static int64_t exact_share(const struct vf_arch *a, const struct vf_arch *o, int tp)
{
	struct vf_param_groups ga, go;
	if (!vf_arch_param_groups(a, &ga) || !vf_arch_param_groups(o, &go) || a->layers <= 0)
		return -1;
	double f = (double)o->layers / (double)a->layers / (tp > 1 ? tp : 1);
	return (int64_t)llround((double)go.total + (double)(a->params_exact - ga.total) * f);
}

/* The part of the model one GPU runs: 1/tp of each layer, `layers`
 * layers, with the vocabulary (embedding and head) or without (1 row). */
static void slice_arch(const struct vf_arch *a, int tp, int layers, bool vocab, struct vf_arch *o)
{
	*o = *a;
	o->layers = layers > 0 ? layers : 1;
	if (o->head_dim <= 0 && a->heads > 0)
		o->head_dim = a->hidden / a->heads;
	if (tp > 1) {
		o->heads = a->heads / tp;
		o->kv_heads = a->kv_heads < tp ? 1 : (a->kv_heads + tp - 1) / tp;
		o->ffn = (a->ffn + tp - 1) / tp;
		o->vocab = (a->vocab + tp - 1) / tp;
	}
	if (!vocab) {
		o->vocab = 1;
		o->learned_positions = false;
		o->tied_embeddings = true;
	}
	if (a->layout_counted)
		slice_layout(a, tp, vocab, o);
	if (a->params_exact > 0)
		o->params_exact = exact_share(a, o, tp);
}

/* Token embedding (and learned positions) elements on one TP rank. */
static double embedding_elems(const struct vf_arch *a, int tp)
{
	double v = (double)((a->vocab + tp - 1) / tp);
	double e = v * (double)a->hidden;
	if (a->learned_positions && a->max_positions > 0)
		e += (double)a->max_positions * (double)a->hidden;
	return e;
}

/* Bytes as an integer, clamped to [0, 1e18] (an unknown GPU's budget is
 * unbounded). */
static int64_t i64(double x)
{
	if (!(x > 0))
		return 0;
	return x < 1e18 ? (int64_t)(x + 0.5) : (int64_t)1e18;
}

/* Add (sign +1) or remove (-1) the embedding's weights and, when it
 * trains, its share of gradients, optimizer states and temporaries (a
 * share of the trainable parameters) to the live and full terms. */
static void adjust_embedding(struct vf_estimate *e, const struct vf_setup *s, double elems,
			     double sign, int dp)
{
	double shard_w = (dp > 1 && (s->shard == VF_SHARD_ZERO3 || s->shard == VF_SHARD_FSDP)) ? dp : 1;
	double w = elems * param_bytes(s) / shard_w;
	e->weights_bytes = i64((double)e->weights_bytes + sign * w);
	e->weights_full = i64((double)e->weights_full + sign * w);
	double frac = 0;
	if (s->mode == VF_MODE_FULL && e->trainable_params > 0)
		frac = sign * elems / (double)e->trainable_params;
	int64_t *t[] = {&e->gradients_bytes, &e->gradients_full, &e->optimizer_bytes,
			&e->optimizer_full, &e->optimizer_temp_bytes, &e->optimizer_temp_full};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		*t[i] = i64((double)*t[i] * (1 + frac));
	/* a paged optimizer's states (outside the allocator) are the same
	 * share of the stage's states */
	e->paged_bytes = i64((double)e->paged_bytes * (1 + frac));
	e->evictable_bytes = e->paged_bytes;
	e->params = i64((double)e->params + sign * elems);
	if (s->mode == VF_MODE_FULL)
		e->trainable_params = i64((double)e->trainable_params + sign * elems);
}

/* Sum the live terms again after an adjustment; the allocator reserve
 * (reserved - allocated) is kept. */
static void resum(struct vf_estimate *e, const struct vf_setup *su)
{
	e->peak_allocated_bytes = e->weights_bytes + e->gradients_bytes + e->optimizer_bytes +
				  e->optimizer_temp_bytes + e->autocast_cache_bytes +
				  e->activations_bytes + e->logits_bytes + e->kv_cache_bytes;
	e->peak_reserved_bytes = e->peak_allocated_bytes + e->allocator_bytes;
	e->peak_bytes = e->context_bytes + e->peak_reserved_bytes;
	/* the paged states, the load and the scope (mechanisms.c) */
	vf__mech_finish_peaks(e, su, (double)e->paged_bytes, (double)e->load_peak_allocated_bytes);
	enum vf_term best = VF_TERM_WEIGHTS;
	for (int t = VF_TERM_WEIGHTS; t <= VF_TERM_KV_CACHE; t++)
		if (vf_estimate_term(e, (enum vf_term)t) > vf_estimate_term(e, best))
			best = (enum vf_term)t;
	e->dominant = best;
}

/* The estimate of one GPU before its micro-batches in flight: `layers`
 * layers at 1/tp, with or without the embedding and the head. su is the
 * per-replica setup (gpus = dp). */
static void stage_base(const struct vf_arch *a, const struct vf_setup *su, const struct vf_gpu_spec *gpu,
		       const struct vf_split_gpu *g, int dp, bool layer_split, struct vf_estimate *e)
{
	struct vf_arch sl;
	int layers = g->last_layer - g->first_layer + 1;
	slice_arch(a, g->tp, layers, g->head, &sl);
	vf_estimate_run(&sl, su, gpu, e);
	double emb = embedding_elems(a, g->tp);
	if (g->embedding && !g->head)
		adjust_embedding(e, su, emb, +1, dp);
	else if (!g->embedding && g->head && (!a->tied_embeddings || layer_split))
		adjust_embedding(e, su, emb, -1, dp);
	if (su->sequence_parallel && g->tp > 1) {
		/* every activation 1/tp: the whole stage's, split */
		struct vf_arch whole;
		struct vf_estimate ew;
		slice_arch(a, 1, layers, g->head, &whole);
		vf_estimate_run(&whole, su, gpu, &ew);
		if (ew.activations_bytes / g->tp < e->activations_bytes)
			e->activations_bytes = ew.activations_bytes / g->tp;
		if (ew.activations_full / g->tp < e->activations_full)
			e->activations_full = ew.activations_full / g->tp;
		if (ew.layer_activations / g->tp < e->layer_activations)
			e->layer_activations = ew.layer_activations / g->tp;
	}
}

/* 1F1B: the saved activations of in_flight micro-batches (each: its
 * layers' saved tensors, or their inputs when checkpointed, and the
 * stage's input); then the peak summed again. */
static void stage_in_flight(const struct vf_arch *a, const struct vf_setup *su,
			    const struct vf_split_gpu *g, struct vf_estimate *e)
{
	if (g->in_flight > 1 && su->mode != VF_MODE_INFER) {
		double N = (double)su->batch * (double)su->seq;
		double R = param_bytes(su) / (su->sequence_parallel && g->tp > 1 ? g->tp : 1);
		int layers = g->last_layer - g->first_layer + 1;
		double per_layer = su->grad_ckpt ? N * R * (double)a->hidden : (double)e->layer_activations;
		double held = layers * per_layer + N * R * (double)a->hidden;
		double extra = (g->in_flight - 1) * held;
		e->activations_bytes = i64((double)e->activations_bytes + extra);
		e->activations_full = i64((double)e->activations_full + extra);
	}
	resum(e, su);
}

static bool all_under(const struct vf_split *sp, int64_t limit);

/* One direction of the link between the GPUs of a group of `span` GPUs:
 * the catalog's interconnect inside a node, the network across nodes. */
static double link_bytes_per_s(const struct vf_gpu_spec *gpu, int span)
{
	if (span > NODE_GPUS)
		return NETWORK_GBS * 1e9;
	if (gpu && gpu->interconnect_gbs > 0)
		return gpu->interconnect_gbs * 1e9 / 2;
	return 16e9; /* PCIe 4.0 x16, one direction, when the catalog has nothing */
}

/* The budget each GPU of a layer split is filled under, as accelerate's
 * get_balanced_memory sets it for device_map="auto" (transformers uses
 * it for "auto" and "balanced"): the model's size over the GPUs plus a
 * buffer of 1.25 x the largest block that is never split (a decoder
 * layer), for every GPU but the last; each at most its free memory (the
 * GPU's memory less the CUDA context: its reserve) and its --max-memory. */
static double layer_budget(const struct vf_setup *s, const struct vf_gpu_spec *gpu, int g, int n,
			   double total, double layer_w)
{
	double free_b = 1e30;
	int64_t mem = vf_estimate_gpu_bytes(gpu);
	if (mem > 0)
		free_b = (double)mem - (double)(s->context_bytes >= 0 ? s->context_bytes
								      : vf_estimate_default_context(gpu));
	double b = free_b;
	if (g < n - 1 && total / n + 1.25 * layer_w < b)
		b = total / n + 1.25 * layer_w;
	int64_t mm = vf_setup_max_memory_bytes(s, g);
	if (mm > 0 && (double)mm < b)
		b = (double)mm;
	return b;
}

/* What a layer's weights depend on: the layer's shape and the numerics. */
static void layer_key(const struct vf_arch *a, const struct vf_setup *su, int64_t key[12])
{
	key[0] = a->hidden;
	key[1] = a->ffn;
	key[2] = a->heads;
	key[3] = a->kv_heads;
	key[4] = a->head_dim;
	key[5] = a->experts;
	key[6] = (int64_t)a->gated_mlp | a->linear_bias << 1 | a->layer_norm << 2 | a->mlp_bias << 3 |
		 a->qkv_bias << 4 | a->o_bias << 5 | a->qk_norm << 6 | (int64_t)a->family[0] << 8;
	key[7] = a->norms_per_layer;
	key[8] = su->precision | su->quant << 4 | su->mode << 8 | (int64_t)su->offload << 12 |
		 (int64_t)su->adapter_bf16 << 16 | (int64_t)su->nf4_double_quant << 17 |
		 (int64_t)su->kbit_fp32_rest << 18;
	key[9] = su->lora_rank;
	key[10] = su->lora_targets;
	key[11] = 1; /* set */
}

/* One decoder layer's weights as stored: the estimator's weights with two
 * layers less those with one (quantization, LoRA adapters included); kept
 * in sp for the next call with the same key. */
static double layer_weights(const struct vf_arch *a, const struct vf_setup *su,
			    const struct vf_gpu_spec *gpu, struct vf_split *sp)
{
	int64_t key[12];
	layer_key(a, su, key);
	if (memcmp(key, sp->cache.key, sizeof key) == 0)
		return sp->cache.layer_weights;
	struct vf_arch one, two;
	struct vf_estimate e1, e2;
	slice_arch(a, 1, 1, false, &one);
	slice_arch(a, 1, 2, false, &two);
	vf_estimate_run(&one, su, gpu, &e1);
	vf_estimate_run(&two, su, gpu, &e2);
	memcpy(sp->cache.key, key, sizeof key);
	return sp->cache.layer_weights = (double)(e2.weights_full - e1.weights_full);
}

/* Place the embedding, the layers in order and the head on n GPUs, each
 * filled with whole layers (by their weights, as accelerate counts module
 * sizes) until the next one would pass its budget. GPUs past the last one
 * used hold nothing. Returns the GPUs used. */
static int place_layers(const struct vf_arch *a, const struct vf_setup *su,
			const struct vf_gpu_spec *gpu, int n, struct vf_split *sp)
{
	double wl = layer_weights(a, su, gpu, sp);
	double we = embedding_elems(a, 1) * param_bytes(su);
	double wh = ((a->tied_embeddings ? 0 : (double)a->vocab) + (a->layer_norm ? 2 : 1)) *
		    (double)a->hidden * param_bytes(su); /* lm_head and the final norm */
	double total = we + (double)a->layers * wl + wh;
	int g = 0;
	double used = we;
	sp->gpu[0].first_layer = 0;
	sp->gpu[0].budget_bytes = i64(layer_budget(su, gpu, 0, n, total, wl));
	for (int l = 0; l < (int)a->layers; l++) {
		struct vf_split_gpu *cur = &sp->gpu[g];
		int held = l - cur->first_layer;
		if (held > 0 && g < n - 1 && used + wl > (double)cur->budget_bytes) {
			g++;
			used = 0;
			sp->gpu[g].first_layer = l;
			sp->gpu[g].budget_bytes = i64(layer_budget(su, gpu, g, n, total, wl));
		}
		used += wl;
		sp->gpu[g].last_layer = l;
	}
	for (int i = 0; i < n; i++) {
		struct vf_split_gpu *x = &sp->gpu[i];
		x->index = x->stage = i;
		x->tp = 1;
		x->in_flight = 1;
		x->embedding = i == 0;
		x->head = i == g; /* kept with the last layers even past its budget */
		if (i > g) {
			x->first_layer = 0;
			x->last_layer = -1;
			x->budget_bytes = i64(layer_budget(su, gpu, i, n, total, wl));
		}
	}
	return g + 1;
}

/* Pipeline stages: pp stages of whole layers (the remainder one more
 * layer on the last stages, away from the first, which holds the most
 * micro-batches),
 * tp ranks each, 1F1B in-flight counts. */
static void place_stages(const struct vf_arch *a, const struct vf_setup *s, struct vf_split *sp)
{
	int L = (int)a->layers, pp = s->pp, tp = s->tp;
	int base = L / pp, extra = L % pp, next = 0;
	for (int st = 0; st < pp; st++) {
		int k = base + (st >= pp - extra ? 1 : 0);
		for (int r = 0; r < tp; r++) {
			struct vf_split_gpu *x = &sp->gpu[st * tp + r];
			x->index = st * tp + r;
			x->stage = st;
			x->first_layer = next;
			x->last_layer = next + k - 1;
			x->embedding = st == 0;
			x->head = st == pp - 1;
			x->tp = tp;
			int64_t inflight = pp - st;
			if (inflight > s->micro_batches && s->micro_batches > 0)
				inflight = s->micro_batches;
			x->in_flight = pp > 1 ? (int)inflight : 1;
		}
		next += k;
	}
}

static vf_status split_check(const struct vf_arch *a, const struct vf_setup *s, struct vf_error *err)
{
	if (strcmp(a->family, "t5") == 0 || a->decoder_layers > 0)
		return vf_error_set(err, VF_EUSAGE, "--split/--tp/--pp: %s is an encoder-decoder; vramfit "
				    "splits decoder-only models", a->family);
	if (a->layers < 1 || a->heads < 1)
		return vf_error_set(err, VF_EUSAGE, "--split/--tp/--pp: the model's layers and heads are unknown");
	if (s->tp > 1 && a->ssm_layers > 0)
		return vf_error_set(err, VF_EUSAGE, "--tp %d: %s has state-space (Mamba) mixers on %lld of its "
				    "%lld layers; vramfit's tensor parallelism splits attention heads and MLP "
				    "widths, not a Mamba mixer's channels: split it by layers (--pp, --split layers)",
				    s->tp, a->family[0] ? a->family : "the model", (long long)a->ssm_layers,
				    (long long)a->layers);
	if (s->tp > 1 && a->heads % s->tp)
		return vf_error_set(err, VF_EUSAGE, "--tp %d: %lld attention heads do not split %d ways",
				    s->tp, (long long)a->heads, s->tp);
	int n = s->split == VF_SPLIT_LAYERS ? s->gpus : s->tp * s->pp;
	if (n > VF_SPLIT_MAX_GPUS)
		return vf_error_set(err, VF_EUSAGE, "--split/--tp/--pp: %d GPUs per model replica; at most %d",
				    n, VF_SPLIT_MAX_GPUS);
	int stages = s->split == VF_SPLIT_LAYERS ? s->gpus : s->pp;
	if (a->layers < stages)
		return vf_error_set(err, VF_EUSAGE, "%d layers do not fill %d %s", (int)a->layers, stages,
				    s->split == VF_SPLIT_LAYERS ? "GPUs" : "pipeline stages");
	return VF_OK;
}

/* The step time of the whole (see the top of the file). */
static void split_time(const struct vf_arch *a, const struct vf_setup *su,
		       const struct vf_gpu_spec *gpu, int used, struct vf_split *sp)
{
	bool train = su->mode != VF_MODE_INFER;
	double msg = (double)su->batch * (double)su->seq * (double)a->hidden * hidden_bytes(su);
	double hand = msg * (train ? 2 : 1); /* activations forward, their gradient back */
	double ga = (double)su->grad_accum;
	sp->link_gbs = link_bytes_per_s(gpu, sp->kind == VF_SPLIT_LAYERS ? used : sp->tp) / 1e9;
	for (int i = 0; i < used; i++)
		if (sp->gpu[i].est.step_seconds < 0) {
			sp->step_seconds = -1;
			return;
		}
	if (sp->kind == VF_SPLIT_LAYERS) {
		/* one GPU at a time: the sum of the stages plus the hand-overs */
		for (int i = 0; i < used; i++)
			sp->compute_seconds += sp->gpu[i].stage_seconds = sp->gpu[i].est.step_seconds;
		sp->p2p_seconds = (used - 1) * ga * hand / (sp->link_gbs * 1e9);
		sp->step_seconds = sp->compute_seconds + sp->p2p_seconds;
		return;
	}
	/* per micro-batch of the slowest stage: compute, all-reduces, hand-over */
	double ar = train ? (su->grad_ckpt ? 6 : 4) : 2; /* all-reduces per layer */
	double ring = 2.0 * (sp->tp - 1) / sp->tp;
	double t_mb = 0, tpc_mb = 0, p_mb = 0, opt = 0;
	struct vf__link tpl; /* tensor-parallel all-reduces: on the critical path, not hidden */
	vf__nccl_link(gpu, sp->tp, &tpl);
	for (int st = 0; st < sp->pp; st++) {
		struct vf_split_gpu *g = &sp->gpu[st * sp->tp];
		const struct vf_estimate *e = &g->est;
		double k = g->last_layer - g->first_layer + 1;
		double tpc = sp->tp > 1 ? k * ar * ring * msg / (sp->link_gbs * 1e9) : 0;
		if (sp->tp > 1 && tpl.known) /* as NCCL runs them: the link class's bus bandwidth, latency */
			tpc = vf__nccl_seconds(&tpl, VF__ALL_REDUCE, sp->tp, msg, k * ar);
		double c = (e->step_seconds - e->optimizer_seconds) / ga;
		for (int r = 0; r < sp->tp; r++)
			sp->gpu[st * sp->tp + r].stage_seconds = e->step_seconds + tpc * ga;
		if (c + tpc > t_mb + tpc_mb) {
			t_mb = c;
			tpc_mb = tpc;
		}
		if (e->optimizer_seconds > opt)
			opt = e->optimizer_seconds;
		if (st < sp->pp - 1) {
			bool cross = (st * sp->tp) / NODE_GPUS != ((st + 1) * sp->tp) / NODE_GPUS;
			double link = cross ? NETWORK_GBS * 1e9 : sp->link_gbs * 1e9;
			if (cross)
				sp->network_gbs = NETWORK_GBS;
			if (hand / link > p_mb)
				p_mb = hand / link;
		}
	}
	sp->compute_seconds = ga * t_mb + opt;
	sp->tp_comm_seconds = ga * tpc_mb;
	sp->p2p_seconds = ga * p_mb;
	sp->bubble_seconds = (sp->pp - 1) * (t_mb + tpc_mb + p_mb);
	sp->step_seconds = sp->compute_seconds + sp->tp_comm_seconds + sp->p2p_seconds + sp->bubble_seconds;
}

/* The limiting GPU's memory with the whole step's time. With `whole`, the
 * whole model's counts, FLOPs and MFU from the unsplit model on gpus = dp
 * (one more estimate; the search goes without). */
static void split_total(const struct vf_arch *a, const struct vf_setup *su,
			const struct vf_gpu_spec *gpu, bool whole, struct vf_split *sp)
{
	struct vf_estimate *t = &sp->total;
	*t = sp->gpu[sp->limiting].est;
	t->tokens_per_step = i64((double)su->batch * (double)su->seq * (double)su->grad_accum * sp->dp);
	t->step_seconds = t->tokens_per_second = t->mfu = -1;
	if (sp->step_seconds > 0) {
		t->step_seconds = sp->step_seconds;
		t->tokens_per_second = (double)t->tokens_per_step / sp->step_seconds;
	}
	if (!whole)
		return;
	struct vf_estimate w;
	vf_estimate_run(a, su, gpu, &w);
	t->params = w.params;
	t->trainable_params = w.trainable_params;
	t->flops_per_step = w.flops_per_step / sp->ngpus;
	if (sp->step_seconds > 0 && w.step_seconds > 0)
		t->mfu = w.mfu * w.step_seconds / (sp->step_seconds * sp->ngpus);
}

vf_status vf__split_run(const struct vf_arch *arch, const struct vf_setup *s,
			const struct vf_gpu_spec *gpu, bool whole, struct vf_split *sp, struct vf_error *err)
{
	vf_status st = split_check(arch, s, err);
	if (st)
		return st;
	bool layers = s->split == VF_SPLIT_LAYERS;
	int n = layers ? s->gpus : s->tp * s->pp;
	memset(sp, 0, offsetof(struct vf_split, gpu));
	memset(sp->gpu, 0, (size_t)n * sizeof sp->gpu[0]);
	sp->kind = s->split;
	sp->tp = layers ? 1 : s->tp;
	sp->pp = layers ? 1 : s->pp;
	sp->dp = layers ? 1 : s->gpus / n;
	sp->ngpus = n;
	sp->micro_batches = s->grad_accum;
	sp->link = gpu ? gpu->interconnect : "";
	struct vf_setup su = *s; /* what each GPU's estimate sees: gpus = dp */
	su.gpus = sp->dp;
	su.split = VF_SPLIT_NONE;
	su.tp = su.pp = 1;
	int used = n;
	if (layers)
		used = place_layers(arch, &su, gpu, n, sp);
	else
		place_stages(arch, s, sp);
	int64_t worst = INT64_MAX;
	sp->fits = true;
	struct vf_estimate base; /* stages of the same shape share it (TP ranks, middle stages) */
	int base_layers = -1;
	bool base_emb = false, base_head = false;
	for (int i = 0; i < n; i++) {
		struct vf_split_gpu *g = &sp->gpu[i];
		int k = g->last_layer - g->first_layer + 1;
		if (k <= 0) {
			g->fits = true; /* holds nothing */
			g->headroom = vf_estimate_gpu_bytes(gpu);
			continue;
		}
		if (k != base_layers || g->embedding != base_emb || g->head != base_head) {
			stage_base(arch, &su, gpu, g, sp->dp, layers, &base);
			base_layers = k;
			base_emb = g->embedding;
			base_head = g->head;
		}
		g->est = base;
		stage_in_flight(arch, &su, g, &g->est);
		g->send_bytes = g->head ? 0 : i64((double)s->batch * (double)s->seq * (double)arch->hidden *
						  hidden_bytes(s));
		g->fits = vf_estimate_fits(&g->est, gpu, &g->headroom);
		sp->fits = sp->fits && g->fits;
		sp->weights_total += g->est.weights_full;
		if (g->headroom < worst) {
			worst = g->headroom;
			sp->limiting = i;
		}
	}
	split_time(arch, &su, gpu, used, sp);
	split_total(arch, &su, gpu, whole, sp);
	return VF_OK;
}

vf_status vf_split_run(const struct vf_arch *arch, const struct vf_setup *s,
		       const struct vf_gpu_spec *gpu, struct vf_split *sp, struct vf_error *err)
{
	return vf__split_run(arch, s, gpu, true, sp, err);
}

/* The caching allocator replayed over what GPU g allocates: its slice of
 * the model (1/tp of each matrix, its layers, the vocabulary where it
 * holds it) with the replica's setup; the reserve the replay finds above
 * the slice's allocated peak becomes g's allocator term. The slice's
 * replay is shared by the GPUs of the same shape. */
static vf_status simulate_gpu(const struct vf_arch *a, const struct vf_setup *su,
			      const struct vf_gpu_spec *gpu, const struct vf_alloc_config *cfg,
			      struct vf_replay_memo *memo, struct vf_split_gpu *g, int64_t *reserve,
			      struct vf_error *err)
{
	if (*reserve < 0) {
		struct vf_arch sl;
		struct vf_estimate e;
		slice_arch(a, g->tp, g->last_layer - g->first_layer + 1, g->head, &sl);
		vf_status st = vf_estimate_simulate_memo(&sl, su, gpu, cfg, memo, &e, NULL, err);
		if (st != VF_OK)
			return st;
		*reserve = e.step_peak_reserved_bytes - e.step_peak_allocated_bytes;
		if (*reserve < 0)
			*reserve = 0;
	}
	g->est.allocator_bytes = *reserve;
	g->est.simulated = true;
	resum(&g->est, su);
	g->fits = vf_estimate_fits(&g->est, gpu, &g->headroom);
	return VF_OK;
}

vf_status vf_split_simulate(const struct vf_arch *arch, const struct vf_setup *s,
			    const struct vf_gpu_spec *gpu, const struct vf_alloc_config *cfg,
			    struct vf_replay_memo *memo, struct vf_split *sp,
			    struct vf_error *err)
{
	struct vf_setup su = *s;
	su.gpus = sp->dp;
	su.split = VF_SPLIT_NONE;
	su.tp = su.pp = 1;
	int64_t worst = INT64_MAX, reserve = -1;
	int base_layers = -1;
	bool base_emb = false, base_head = false;
	sp->fits = true;
	for (int i = 0; i < sp->ngpus; i++) {
		struct vf_split_gpu *g = &sp->gpu[i];
		int k = g->last_layer - g->first_layer + 1;
		if (k <= 0)
			continue;
		if (k != base_layers || g->embedding != base_emb || g->head != base_head) {
			reserve = -1;
			base_layers = k;
			base_emb = g->embedding;
			base_head = g->head;
		}
		vf_status st = simulate_gpu(arch, &su, gpu, cfg, memo, g, &reserve, err);
		if (st != VF_OK)
			return st;
		sp->fits = sp->fits && g->fits;
		if (g->headroom < worst) {
			worst = g->headroom;
			sp->limiting = i;
		}
	}
	struct vf_estimate keep = sp->total;
	sp->total = sp->gpu[sp->limiting].est;
	sp->total.params = keep.params;
	sp->total.trainable_params = keep.trainable_params;
	sp->total.tokens_per_step = keep.tokens_per_step;
	sp->total.flops_per_step = keep.flops_per_step;
	sp->total.step_seconds = keep.step_seconds;
	sp->total.tokens_per_second = keep.tokens_per_second;
	sp->total.mfu = keep.mfu;
	return VF_OK;
}

static bool split_within(const struct vf_arch *arch, const struct vf_setup *s,
			 const struct vf_gpu_spec *gpu, int64_t vram, struct vf_split *sp)
{
	struct vf_error err = {0};
	return vf__split_run(arch, s, gpu, false, sp, &err) == VF_OK && all_under(sp, vram);
}

int64_t vf_split_max_batch(const struct vf_arch *arch, const struct vf_setup *s,
			   const struct vf_gpu_spec *gpu, int64_t vram)
{
	if (vram <= 0)
		vram = vf_estimate_gpu_bytes(gpu);
	static struct vf_split sp; /* large: not on the stack (CLI use only) */
	struct vf_setup su = *s;
	int64_t lo = 0, hi = 1, cap = 1 << 16;
	if (vram <= 0)
		return 0;
	for (;;) {
		su.batch = hi;
		if (!split_within(arch, &su, gpu, vram, &sp))
			break;
		lo = hi;
		if (hi >= cap)
			return lo;
		hi *= 2;
	}
	while (hi - lo > 1) {
		int64_t mid = lo + (hi - lo) / 2;
		su.batch = mid;
		if (!split_within(arch, &su, gpu, vram, &sp))
			hi = mid;
		else
			lo = mid;
	}
	return lo;
}

const char *vf_split_describe(const struct vf_split *sp, const struct vf_split_gpu *g, char *out,
			      size_t n)
{
	size_t k = 0;
	if (g->last_layer < g->first_layer) {
		snprintf(out, n, "nothing (the model fits on the GPUs before it)");
		return out;
	}
	if (sp->pp > 1)
		k += (size_t)snprintf(out + k, n - k, "stage %d: ", g->stage);
	k += (size_t)snprintf(out + k, n - k, "layers %d-%d", g->first_layer, g->last_layer);
	if (k < n && g->embedding)
		k += (size_t)snprintf(out + k, n - k, ", embeddings");
	if (k < n && g->head)
		k += (size_t)snprintf(out + k, n - k, ", head");
	if (k < n && g->tp > 1)
		k += (size_t)snprintf(out + k, n - k, ", 1/%d of each matrix", g->tp);
	if (k < n && g->in_flight > 1)
		snprintf(out + k, n - k, ", %d micro-batches in flight", g->in_flight);
	return out;
}

static cJSON *gpu_json(const struct vf_split *sp, const struct vf_split_gpu *g)
{
	char d[160];
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "index", g->index);
	cJSON_AddNumberToObject(o, "stage", g->stage);
	cJSON_AddStringToObject(o, "holds", vf_split_describe(sp, g, d, sizeof d));
	if (g->last_layer >= g->first_layer) {
		cJSON *l = cJSON_AddArrayToObject(o, "layers");
		cJSON_AddItemToArray(l, cJSON_CreateNumber(g->first_layer));
		cJSON_AddItemToArray(l, cJSON_CreateNumber(g->last_layer));
	} else {
		cJSON_AddNullToObject(o, "layers");
	}
	cJSON_AddBoolToObject(o, "embedding", g->embedding);
	cJSON_AddBoolToObject(o, "head", g->head);
	cJSON_AddNumberToObject(o, "tp_fraction", 1.0 / g->tp);
	cJSON_AddNumberToObject(o, "micro_batches_in_flight", g->in_flight);
	if (sp->kind == VF_SPLIT_LAYERS)
		cJSON_AddNumberToObject(o, "budget_bytes", (double)g->budget_bytes);
	cJSON_AddNumberToObject(o, "send_bytes", (double)g->send_bytes);
	cJSON_AddItemToObject(o, "memory", vf_estimate_memory_json(&g->est));
	cJSON_AddNumberToObject(o, "peak_bytes", (double)g->est.peak_bytes);
	cJSON_AddBoolToObject(o, "fits", g->fits);
	cJSON_AddNumberToObject(o, "headroom_bytes", (double)g->headroom);
	if (g->stage_seconds > 0)
		cJSON_AddNumberToObject(o, "stage_seconds", g->stage_seconds);
	else
		cJSON_AddNullToObject(o, "stage_seconds");
	return o;
}

static void add_seconds(cJSON *o, const char *k, double v, bool known)
{
	if (known)
		cJSON_AddNumberToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

cJSON *vf_split_to_json(const struct vf_split *sp)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "kind", sp->kind == VF_SPLIT_LAYERS ? "layers"
					   : sp->pp > 1 && sp->tp > 1 ? "tp+pp"
					   : sp->pp > 1 ? "pp" : "tp");
	cJSON_AddNumberToObject(o, "tp", sp->tp);
	cJSON_AddNumberToObject(o, "pp", sp->pp);
	cJSON_AddNumberToObject(o, "dp", sp->dp);
	cJSON_AddNumberToObject(o, "gpus_per_replica", sp->ngpus);
	cJSON_AddNumberToObject(o, "micro_batches", (double)sp->micro_batches);
	cJSON_AddNumberToObject(o, "limiting_gpu", sp->limiting);
	cJSON_AddBoolToObject(o, "fits", sp->fits);
	cJSON_AddNumberToObject(o, "weights_total_bytes", (double)sp->weights_total);
	bool known = sp->step_seconds > 0;
	add_seconds(o, "step_seconds", sp->step_seconds, known);
	add_seconds(o, "compute_seconds", sp->compute_seconds, known);
	add_seconds(o, "tp_comm_seconds", sp->tp_comm_seconds, known);
	add_seconds(o, "p2p_seconds", sp->p2p_seconds, known);
	add_seconds(o, "bubble_seconds", sp->bubble_seconds, known);
	cJSON_AddStringToObject(o, "link", sp->link ? sp->link : "");
	cJSON_AddNumberToObject(o, "link_gbs", sp->link_gbs);
	if (sp->network_gbs > 0)
		cJSON_AddNumberToObject(o, "network_gbs", sp->network_gbs);
	cJSON *gs = cJSON_AddArrayToObject(o, "gpus");
	for (int i = 0; i < sp->ngpus; i++)
		cJSON_AddItemToArray(gs, gpu_json(sp, &sp->gpu[i]));
	return o;
}

static bool all_under(const struct vf_split *sp, int64_t limit)
{
	for (int i = 0; i < sp->ngpus; i++)
		if (sp->gpu[i].est.peak_bytes > limit)
			return false;
	return true;
}

/* A layer split on n GPUs under `limit`: when a GPU before the last passes
 * it, its --max-memory is lowered by the excess (its layers move on), at
 * most n times. */
static bool layers_under(const struct vf_arch *a, struct vf_setup *s, const struct vf_gpu_spec *gpu,
			 int64_t limit, struct vf_split *sp)
{
	struct vf_error err = {0};
	for (int iter = 0; iter <= s->gpus; iter++) {
		if (vf__split_run(a, s, gpu, false, sp, &err))
			return false;
		int g = 0;
		while (g < sp->ngpus && sp->gpu[g].est.peak_bytes <= limit)
			g++;
		if (g == sp->ngpus)
			return true;
		if (sp->gpu[g].head || g == sp->ngpus - 1)
			return false; /* accelerate caps the earlier GPUs at the balanced share */
		double excess = (double)(sp->gpu[g].est.peak_bytes - limit);
		double gib = floor(((double)sp->gpu[g].est.weights_full - excess) / 1073741824.0 * 100) / 100;
		if (!(gib >= 0.01))
			return false;
		if (g >= VF_SETUP_MAX_MEMORY || gib > 655.35)
			return false;
		s->max_memory_cgib[g] = (uint16_t)(gib * 100);
		s->split_given |= VF_SPLIT_G_MAX_MEMORY;
	}
	return false;
}

static bool mp_under(const struct vf_arch *a, struct vf_setup *s, const struct vf_gpu_spec *gpu,
		     int64_t limit, struct vf_split *sp)
{
	struct vf_error err = {0};
	s->gpus = s->tp * s->pp;
	s->shard = VF_SHARD_NONE;
	return vf__split_run(a, s, gpu, false, sp, &err) == VF_OK && all_under(sp, limit);
}

bool vf_split_offer(const struct vf_arch *arch, const struct vf_setup *user,
		    const struct vf_gpu_spec *gpu, double margin, int max_gpus, struct vf_setup *out,
		    struct vf_split *sp)
{
	int64_t mem = vf_estimate_gpu_bytes(gpu);
	struct vf_error err = {0};
	if (mem <= 0 || split_check(arch, user, &err) != VF_OK)
		return false;
	int64_t limit = (int64_t)((1 - margin) * (double)mem);
	if (max_gpus > VF_SPLIT_MAX_GPUS)
		max_gpus = VF_SPLIT_MAX_GPUS;
	struct vf_setup s = *user;
	s.split = VF_SPLIT_NONE;
	s.tp = s.pp = 1;
	memset(s.max_memory_cgib, 0, sizeof s.max_memory_cgib);
	s.split_given &= (uint8_t)~VF_SPLIT_G_MAX_MEMORY;
	s.sequence_parallel = false;
	s.micro_batches = 0;
	if (!gpu->nvlink) {
		s.split = VF_SPLIT_LAYERS;
		s.shard = VF_SHARD_NONE;
		for (int n = 2; n <= max_gpus && n <= arch->layers; n++) {
			s.gpus = n;
			memset(s.max_memory_cgib, 0, sizeof s.max_memory_cgib);
			if (layers_under(arch, &s, gpu, limit, sp)) {
				*out = s;
				return true;
			}
		}
		return false;
	}
	int tp_max = arch->ssm_layers > 0 ? 1 : 8; /* no tensor parallelism over a Mamba mixer */
	for (s.tp = 2; s.tp <= tp_max && s.tp <= max_gpus; s.tp *= 2)
		if (arch->heads % s.tp == 0 && mp_under(arch, &s, gpu, limit, sp)) {
			*out = s;
			return true;
		}
	for (s.tp = tp_max; s.tp > 1 && arch->heads % s.tp; s.tp /= 2)
		;
	int64_t ga = user->grad_accum;
	for (s.pp = 2; s.tp * s.pp <= max_gpus && s.pp <= arch->layers; s.pp *= 2) {
		s.micro_batches = s.grad_accum = ga > s.pp ? ga : s.pp;
		if (mp_under(arch, &s, gpu, limit, sp)) {
			*out = s;
			return true;
		}
	}
	return false;
}

const char *vf_split_setup_words(const struct vf_setup *s, char *out, size_t n)
{
	size_t k = 0;
	out[0] = 0;
	if (s->split == VF_SPLIT_LAYERS) {
		k += (size_t)snprintf(out, n, "layer split over %d GPUs", s->gpus);
		int c = 0;
		for (int i = 0; i < VF_SETUP_MAX_MEMORY && k < n; i++)
			if (s->max_memory_cgib[i])
				k += (size_t)snprintf(out + k, n - k, "%s%d=%.2f", c++ ? "," : ", --max-memory ",
						      i, s->max_memory_cgib[i] / 100.0);
		return out;
	}
	if (s->tp > 1)
		k += (size_t)snprintf(out, n, "tp %d", s->tp);
	if (s->pp > 1 && k < n)
		k += (size_t)snprintf(out + k, n - k, "%spp %d, %lld micro-batches", k ? " x " : "", s->pp,
				      (long long)s->micro_batches);
	if (s->sequence_parallel && k < n)
		snprintf(out + k, n - k, ", sequence parallel");
	return out;
}

void vf_split_search_result(const struct vf_split *sp, const struct vf_setup *s,
			    const struct vf_gpu_spec *gpu, double margin, double price,
			    struct vf_search_result *r)
{
	memset(r, 0, sizeof *r);
	const struct vf_estimate *e = &sp->gpu[sp->limiting].est;
	r->setup = *s;
	r->gpu_bytes = vf_estimate_gpu_bytes(gpu);
	r->limit_bytes = (int64_t)((1 - margin) * (double)r->gpu_bytes);
	r->peak_bytes = e->peak_bytes;
	for (int i = 0; i < sp->ngpus; i++) { /* the largest floor: monotone in the batch */
		const struct vf_estimate *x = &sp->gpu[i].est;
		if (x->context_bytes + x->peak_allocated_bytes > r->floor_bytes)
			r->floor_bytes = x->context_bytes + x->peak_allocated_bytes;
	}
	r->fits = r->gpu_bytes > 0 && all_under(sp, r->limit_bytes);
	r->dominant = e->dominant;
	r->step_seconds = r->compute_seconds = sp->step_seconds;
	r->comm_seconds = sp->step_seconds > 0 ? sp->tp_comm_seconds + sp->p2p_seconds : 0;
	if (r->comm_seconds > 0)
		r->compute_seconds -= r->comm_seconds;
	r->tokens_per_step = sp->total.tokens_per_step;
	r->tokens_per_second = sp->total.tokens_per_second;
	if (price < 0 && gpu)
		price = gpu->price_usd_hour;
	int gpus = s->split == VF_SPLIT_LAYERS ? sp->ngpus : sp->ngpus * sp->dp;
	r->cost_per_step = price >= 0 && sp->step_seconds > 0 ? sp->step_seconds * gpus * price / 3600 : -1;
	r->changes = 1;
	r->invasiveness = 1;
}
