/* steptrace.c - replay the tensors of a step (steptrace.h) through the
 * caching allocator simulation, in the order PyTorch allocates and frees
 * them:
 *   load       every parameter tensor (layers in order, then embedding,
 *              norm, head), LoRA adapters after the base, DDP buckets;
 *   forward    per layer: autocast copies of its weights, its saved
 *              tensors (checkpointing: only its input, the rest freed at
 *              the layer's end), a quantized base's dequantized weights;
 *   loss       logits, their fp32 upcast and log_softmax; the upcast and
 *              logits freed, then the loss backward's fp32 gradients (a
 *              frozen fp32 head's bf16 copy lives from its call to its
 *              backward: peft's k-bit preparation, an fp32 base);
 *   backward   per layer in reverse: recompute (checkpointing), gradients
 *              of its trainable tensors (first micro-batch only), the
 *              gradient of each saved tensor as it is consumed, then the
 *              saved tensors and copies freed;
 *   FSDP/ZeRO-3  each layer gathered whole before its forward and its
 *              backward with the next one in the pass's order prefetched,
 *              freed after (reshard_after_forward); a layer's gradient whole
 *              before its reduce-scatter leaves the shards; FSDP's root
 *              (embedding, final norm, head) gathered from the forward's
 *              start to the backward's end, its gradients whole until then;
 *   no_sync    FSDP gradient accumulation under no_sync (nosync_layer): a
 *              micro-batch before the synced one neither reduce-scatters
 *              nor frees: each layer unit's whole gradient (and the root's)
 *              is kept from the first micro-batch's backward, a later one's
 *              made and added into it; the synced micro-batch reduce-
 *              scatters them into the shards, then frees them (torch
 *              FSDP1 _post_backward_hook returns before the reduce-scatter
 *              when not _sync_gradients, leaving flat_param.grad unsharded;
 *              FSDP2 set_requires_gradient_sync(False) likewise);
 *   optimizer  states created in the first step (per tensor, in order),
 *              the step's temporaries; zero_grad(set_to_none) frees the
 *              gradients (set_to_none=False, torch 1.x: zeroed in place
 *              and kept, the next step's gradients added into them).
 * Inference: load, then one forward whose working tensors are freed as
 * the next ones are made, the KV cache kept, the logits last.
 * A training replay runs in two parts: the prefix (load and the first
 * step's micro-batches, which read no optimizer field) and the finish (the
 * optimizer steps and the second step), so that steps differing only in
 * their optimizer share one prefix (vf__replay_state, replaymemo.c). A
 * replay whose peaks alone are read makes no call after its last
 * allocation (the last zero_grad's and foreach temporaries' frees: a free
 * never raises a peak). A tensor freed before the next call (a transient
 * no saved tensor follows, a gradient added into the held one, a
 * per-tensor optimizer temporary, an inference layer's dequantized
 * weights) is one call, vf_alloc_malloc_free. */
#include "steptrace.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct replay {
	struct vf_alloc *a;
	const struct vf__step *s;
	int *w, *g, *st, *ac, *act, *ck, *gu; /* handles (gu: a layer's gathered unit) */
	int root;                        /* the gathered root unit (FSDP) */
	int rw[3];                       /* the root's whole gradients (FSDP) */
	int ow[VF__MAX_TENSORS], og[VF__MAX_TENSORS], ost[2 * VF__MAX_TENSORS];
	bool states;
	bool peaks_only; /* only the peaks are read (vf_alloc_peaks_only) */
	bool last;       /* the last optimizer step: no allocation follows it */
	bool accum;      /* a micro-batch under no_sync: its gradients stay whole */
};

static int al(struct replay *r, double bytes)
{
	if (!(bytes >= 1))
		return -1;
	if (bytes > (double)VF_ALLOC_MAX_REQUEST)
		bytes = (double)VF_ALLOC_MAX_REQUEST;
	return vf_alloc_malloc(r->a, (int64_t)bytes);
}

static void fr(struct replay *r, int *h)
{
	vf_alloc_release(r->a, *h);
	*h = -1;
}

/* This thread's replays make each allocation freed at once as the two
 * calls (vf__replay_pairs_split). */
static _Thread_local bool pairs_split;

void vf__replay_pairs_split(bool on)
{
	pairs_split = on;
}

/* A tensor made and freed before anything else is: one call. */
static void al_fr(struct replay *r, double bytes)
{
	if (!(bytes >= 1))
		return;
	if (bytes > (double)VF_ALLOC_MAX_REQUEST)
		bytes = (double)VF_ALLOC_MAX_REQUEST;
	if (pairs_split)
		vf_alloc_release(r->a, vf_alloc_malloc(r->a, (int64_t)bytes));
	else
		vf_alloc_malloc_free(r->a, (int64_t)bytes);
}

#define LAYER(p, l, i) ((p)[(size_t)(l) * VF__MAX_TENSORS + (size_t)(i)])

static void load(struct replay *r)
{
	const struct vf__step *s = r->s;
	if (s->other_w.n > 0)
		r->ow[0] = al(r, s->other_w.bytes[0]); /* embedding first */
	for (int l = 0; l < s->layers; l++)
		for (int i = 0; i < s->layer_w.n; i++)
			LAYER(r->w, l, i) = al(r, s->layer_w.bytes[i]);
	for (int i = 1; i < s->other_w.n; i++)
		r->ow[i] = al(r, s->other_w.bytes[i]);
	if (!s->full) /* adapters: own tensors, created after the base */
		for (int l = 0; l < s->layers; l++)
			for (int i = 0; i < s->layer_train.n; i++)
				al(r, s->layer_train.bytes[i] * (s->train ? 1 : 0));
	/* DDP's 25 MiB buckets, the last one partial: the full ones at once */
	double left = fmod(s->ddp_bucket, 25.0 * 1048576); /* exact, as subtracting them one by one */
	vf_alloc_malloc_repeat(r->a, 25 * 1048576, (int64_t)((s->ddp_bucket - left) / (25.0 * 1048576)));
	if (left >= 1)
		al(r, left);
}

/* One layer's forward: its saved tensors into h[], each made next to
 * the transient the operation before it produced (freed once used). */
static void make_saved(struct replay *r, int *h)
{
	const struct vf__step *s = r->s;
	int n = s->layer_act.n > s->layer_tmp.n ? s->layer_act.n : s->layer_tmp.n;
	for (int i = 0; i < n; i++) {
		if (i >= s->layer_act.n) { /* a transient and nothing saved */
			al_fr(r, s->layer_tmp.bytes[i]);
			continue;
		}
		int t = i < s->layer_tmp.n ? al(r, s->layer_tmp.bytes[i]) : -1;
		h[i] = al(r, s->layer_act.bytes[i]);
		fr(r, &t);
	}
}

/* FSDP/ZeRO-3: layer l gathered unless prefetched, then the next one in
 * the pass's order (step -1 in the backward) prefetched. */
static void gather(struct replay *r, int l, int step)
{
	const struct vf__step *s = r->s;
	if (s->gather <= 0)
		return;
	if (LAYER(r->gu, l, 0) < 0)
		LAYER(r->gu, l, 0) = al(r, s->gather);
	if (l + step >= 0 && l + step < s->layers)
		LAYER(r->gu, l + step, 0) = al(r, s->gather);
}

static void forward_layer(struct replay *r, int l)
{
	const struct vf__step *s = r->s;
	gather(r, l, 1);
	if (!s->ckpt || s->ac_cached)
		for (int i = 0; i < s->layer_ac.n; i++)
			LAYER(r->ac, l, i) = al(r, s->layer_ac.bytes[i]);
	int dq = al(r, s->dequant);
	if (s->ckpt) {
		LAYER(r->ck, l, 0) = al(r, s->ckpt_in);
		int tmp[VF__MAX_TENSORS], tac[VF__MAX_TENSORS];
		for (int i = 0; i < s->layer_ac.n; i++)
			tac[i] = s->ac_cached ? -1 : al(r, s->layer_ac.bytes[i]);
		make_saved(r, tmp);
		for (int i = 0; i < s->layer_act.n; i++)
			fr(r, &tmp[i]);
		for (int i = 0; i < s->layer_ac.n; i++)
			fr(r, &tac[i]);
	} else {
		make_saved(r, &LAYER(r->act, l, 0));
		if (s->offload && l >= 2) /* copied to the CPU: layer l-2's tensors leave */
			for (int i = 0; i < s->layer_act.n; i++)
				fr(r, &LAYER(r->act, l - 2, i));
	}
	fr(r, &dq);
	fr(r, &LAYER(r->gu, l, 0)); /* resharded after its forward */
}

/* A trainable tensor's gradient: kept by AccumulateGrad in the first
 * micro-batch; from the second on made, added into the held one, freed. */
static void grad(struct replay *r, int *held, double bytes, bool first)
{
	if (first)
		*held = al(r, bytes);
	else
		al_fr(r, bytes);
}

/* The gradient of the root's tensor i (embedding, final norm, head):
 * under FSDP whole (the first contribution kept, a later one added and
 * freed) until the root's post-backward; otherwise grad(). */
static void root_grad(struct replay *r, int i, bool first)
{
	const struct vf__step *s = r->s;
	if (i >= s->other_train.n)
		return;
	if (s->unshard <= 0)
		grad(r, &r->og[i], s->other_train.bytes[i], first);
	else if (r->rw[i] < 0)
		r->rw[i] = al(r, s->other_train.bytes[i] * s->unshard);
	else
		al_fr(r, s->other_train.bytes[i] * s->unshard);
}

/* FSDP's root post-backward: its whole gradients reduce-scattered into
 * the rank's shards (kept, or added into the held ones), then freed. */
static void root_reduce(struct replay *r, bool first)
{
	const struct vf__step *s = r->s;
	for (int i = 0; i < 3 && i < s->other_train.n; i++)
		if (r->rw[i] >= 0) {
			grad(r, &r->og[i], s->other_train.bytes[i], first);
			fr(r, &r->rw[i]);
		}
}

/* Loss forward and backward; returns the hidden-state gradient. */
static int loss(struct replay *r, int *fnorm, bool first)
{
	const struct vf__step *s = r->s;
	int hac = s->head_ac_replayed ? al(r, s->head_ac) : -1; /* the head's autocast copy */
	int hc = al(r, s->head_copy); /* kept by the head's F.linear for its backward */
	int out = al(r, s->lm_out), up = al(r, s->lm_up), lsm = al(r, s->lm_lsm);
	int extra = al(r, s->lm_extra);
	if (s->ckpt && s->ac_cached) { /* the forward leaves autocast: its cache goes */
		for (int l = 0; l < s->layers; l++)
			for (int i = 0; i < s->layer_ac.n; i++)
				fr(r, &LAYER(r->ac, l, i));
		fr(r, &hac);
	}
	fr(r, &up);
	fr(r, &out); /* the model's output logits: dropped after the forward */
	int g1 = al(r, s->lm_grad), g2 = al(r, s->lm_grad);
	fr(r, &g1);
	fr(r, &lsm);
	int g3 = al(r, s->lm_out);
	fr(r, &g2);
	fr(r, &extra);
	int gh = al(r, s->grad_hidden); /* the head's input gradient, from its copy */
	fr(r, &hc);
	if (s->full && s->tied) /* lm_head's contribution to the embedding gradient */
		root_grad(r, 0, first);
	else if (s->full && s->other_train.n > 2) /* lm_head */
		root_grad(r, 2, first);
	fr(r, &g3);
	fr(r, &hac); /* saved for the head's backward, done */
	fr(r, fnorm);
	return gh;
}

/* One optimizer state of a trainable tensor of `bytes` gradient bytes;
 * paged states of large tensors are CUDA managed memory, not the
 * allocator's (s->paged_min). */
static void state_al(struct replay *r, double bytes)
{
	const struct vf__step *s = r->s;
	if (s->paged_min > 0 && bytes >= s->paged_min)
		return;
	al(r, bytes * s->state_ratio);
}

/* Optimizer in backward: the parameter's step runs in its gradient hook
 * (states created on the first step; AdamW's sqrt temporary), then the
 * gradient is freed. */
static void step_in_backward(struct replay *r, int *g, double bytes)
{
	const struct vf__step *s = r->s;
	if (!r->states)
		for (int k = 0; k < s->nstates; k++)
			state_al(r, bytes);
	if (s->ot != VF__OT_NONE)
		al_fr(r, bytes * s->ot_ratio);
	fr(r, g);
}

/* A layer's gradients in its backward. FSDP/ZeRO-3: the layer's gradient
 * whole (unit_grad), then reduce-scattered into the rank's shards (the
 * gradients), freed after. Under no_sync (nosync_layer) the whole one is
 * kept (LAYER(gu, l, 1)) from the first micro-batch, a later one's made
 * and added into it; the synced micro-batch reduce-scatters and frees it. */
static void layer_grads(struct replay *r, int l, bool first)
{
	const struct vf__step *s = r->s;
	int ug;
	if (s->nosync_layer > 0) {
		int *held = &LAYER(r->gu, l, 1);
		if (*held < 0)
			*held = al(r, s->nosync_layer);
		else
			al_fr(r, s->unit_grad); /* made, added into the held one */
		if (r->accum)
			return;
		ug = *held;
		*held = -1;
	} else {
		ug = al(r, s->unit_grad);
	}
	for (int i = 0; i < s->layer_train.n; i++) {
		grad(r, &LAYER(r->g, l, i), s->layer_train.bytes[i], first);
		if (s->oib) /* its optimizer hook: states on the first step, the update, freed */
			step_in_backward(r, &LAYER(r->g, l, i), s->layer_train.bytes[i]);
	}
	fr(r, &ug);
}

static void backward_layer(struct replay *r, int l, int *gh, bool first)
{
	const struct vf__step *s = r->s;
	int tac[VF__MAX_TENSORS];
	gather(r, l, -1);
	int dq = al(r, s->bwd_transient > s->dequant ? s->bwd_transient : s->dequant);
	if (s->ckpt) {
		for (int i = 0; i < s->layer_ac.n; i++)
			tac[i] = al(r, s->layer_ac.bytes[i]);
		make_saved(r, &LAYER(r->act, l, 0));
	} else if (s->offload && l < s->layers - 2) { /* prefetched back from the CPU */
		for (int i = 0; i < s->layer_act.n; i++)
			LAYER(r->act, l, i) = al(r, s->layer_act.bytes[i]);
	}
	layer_grads(r, l, first);
	int prev = -1;
	for (int i = s->layer_act.n - 1; i >= 0; i--) {
		int gi = al(r, s->layer_act.bytes[i]); /* the saved tensor's gradient */
		fr(r, &prev);
		fr(r, &LAYER(r->act, l, i));
		prev = gi;
	}
	int ngh = al(r, s->grad_hidden);
	fr(r, &prev);
	fr(r, gh);
	*gh = ngh;
	for (int i = 0; i < s->layer_ac.n; i++)
		fr(r, s->ckpt ? &tac[i] : &LAYER(r->ac, l, i));
	fr(r, &LAYER(r->ck, l, 0));
	fr(r, &dq);
	fr(r, &LAYER(r->gu, l, 0)); /* resharded after its backward */
}

static void micro_batch(struct replay *r, bool first)
{
	const struct vf__step *s = r->s;
	r->root = al(r, s->gather_root); /* the root's pre-forward */
	int bias = al(r, s->bias);
	int emb = al(r, s->emb_out);
	for (int l = 0; l < s->layers; l++)
		forward_layer(r, l);
	int fnorm = al(r, s->final_norm);
	int gh = loss(r, &fnorm, first);
	for (int l = s->layers - 1; l >= 0; l--)
		backward_layer(r, l, &gh, first);
	if (s->full) { /* final norm (order of autograd: before the layers in fact, small) and embedding */
		root_grad(r, 1, first);
		if (s->tied && s->unshard > 0) /* the second contribution, added into the whole one */
			root_grad(r, 0, false);
		else if (s->tied) /* the second contribution: made, added, freed */
			grad(r, &(int){-1}, s->other_train.bytes[0], false);
		else
			root_grad(r, 0, first);
	}
	fr(r, &gh);
	fr(r, &emb);
	fr(r, &bias);
	if (!r->accum) /* under no_sync the root's whole gradients stay to the synced one */
		root_reduce(r, first);
	fr(r, &r->root); /* the root's post-backward: resharded */
}

static void optimizer_step(struct replay *r)
{
	const struct vf__step *s = r->s;
	size_t nt = (size_t)s->layers * (size_t)s->layer_train.n + (size_t)s->other_train.n;
	if (s->oib) { /* the layers were stepped in the backward; the rest here */
		for (int i = 0; i < s->other_train.n && i < VF__MAX_TENSORS; i++)
			step_in_backward(r, &r->og[i], s->other_train.bytes[i]);
		r->states = true;
		return;
	}
	if (!r->states) {
		for (int l = 0; l < s->layers; l++)
			for (int i = 0; i < s->layer_train.n; i++)
				for (int k = 0; k < s->nstates; k++)
					state_al(r, s->layer_train.bytes[i]);
		for (int i = 0; i < s->other_train.n; i++)
			for (int k = 0; k < s->nstates; k++)
				state_al(r, s->other_train.bytes[i]);
		r->states = true;
	}
	if (s->ot == VF__OT_FOREACH) {
		int *t = calloc(nt ? nt : 1, sizeof *t);
		if (!t)
			return;
		size_t k = 0;
		for (int l = 0; l < s->layers; l++)
			for (int i = 0; i < s->layer_train.n; i++)
				t[k++] = al(r, s->layer_train.bytes[i] * s->ot_ratio);
		for (int i = 0; i < s->other_train.n; i++)
			t[k++] = al(r, s->other_train.bytes[i] * s->ot_ratio);
		/* the last allocation of a replay whose peaks alone are read: what
		 * is freed after it changes none of them */
		for (size_t i = 0; i < k && !(r->last && r->peaks_only); i++)
			vf_alloc_release(r->a, t[i]);
		free(t);
	} else if (s->ot == VF__OT_PER_TENSOR) {
		for (size_t j = 0; j < nt; j++) {
			double b = j < (size_t)s->layers * (size_t)s->layer_train.n
					   ? s->layer_train.bytes[j % (size_t)s->layer_train.n]
					   : s->other_train.bytes[j - (size_t)s->layers * (size_t)s->layer_train.n];
			b *= s->ot_ratio;
			if (s->ot_cap > 0 && b > s->ot_cap)
				b = s->ot_cap;
			if (s->ot_count == 1) {
				al_fr(r, b);
				continue;
			}
			int h[4] = {-1, -1, -1, -1};
			for (int k = 0; k < s->ot_count && k < 4; k++)
				h[k] = al(r, b);
			for (int k = 0; k < 4; k++)
				fr(r, &h[k]);
		}
	}
	if (s->grads_kept) /* zero_grad(set_to_none=False): zeroed in place */
		return;
	if (r->last && r->peaks_only) /* frees after the last allocation: no peak changes */
		return;
	/* zero_grad(set_to_none=True) */
	for (size_t i = 0; i < (size_t)s->layers * VF__MAX_TENSORS; i++)
		fr(r, &r->g[i]);
	for (int i = 0; i < VF__MAX_TENSORS; i++)
		fr(r, &r->og[i]);
}

static void inference(struct replay *r)
{
	const struct vf__step *s = r->s;
	int hid = al(r, s->inf_h);
	for (int l = 0; l < s->layers; l++) {
		int x = al(r, s->inf_h), q = al(r, s->inf_q), k = al(r, s->inf_kv);
		int v = al(r, s->kv_layer), qr = al(r, s->inf_q);
		al(r, s->kv_layer); /* rotated k, kept by the cache with v */
		fr(r, &q);
		fr(r, &k);
		int sc = al(r, s->inf_scores);
		int at = al(r, s->inf_q);
		fr(r, &sc);
		fr(r, &qr);
		fr(r, &x);
		int o = al(r, s->inf_h), h2 = al(r, s->inf_h);
		fr(r, &o);
		fr(r, &hid);
		(void)v;
		fr(r, &at);
		x = al(r, s->inf_h);
		int gt = al(r, s->inf_f), up = al(r, s->inf_f), ac = al(r, s->inf_f);
		fr(r, &gt);
		int pr = al(r, s->inf_f);
		fr(r, &ac);
		fr(r, &up);
		int dn = al(r, s->inf_h);
		fr(r, &pr);
		fr(r, &x);
		hid = al(r, s->inf_h);
		fr(r, &dn);
		fr(r, &h2);
		al_fr(r, s->dequant);
	}
	int n = al(r, s->inf_head_in);
	fr(r, &hid);
	int lg = al(r, s->inf_logits);
	fr(r, &n);
	fr(r, &lg);
}

/* About how many allocator calls simulate() makes for s, counted from the
 * same loops without running them (the order of the phases above). */
double vf__step_calls(const struct vf__step *s)
{
	double L = s->layers > 0 ? s->layers : 0, ac = s->layer_ac.n, act = s->layer_act.n;
	double tmp = s->layer_tmp.n, tr = s->layer_train.n;
	double load = L * (s->layer_w.n + (s->full ? 0 : tr)) + s->other_w.n + 2;
	if (!s->train)
		return load + L * 30 + 6;
	double saved = 2 * tmp + act;
	double fwd = ((!s->ckpt || s->ac_cached) ? ac : 0) + 2 +
		     (s->ckpt ? 2 + 2 * (s->ac_cached ? 0 : ac) + saved + act : saved);
	double bwd = 6 + ac + 3 * act + 2 * tr + (s->ckpt ? ac + saved : 0) +
		     (s->oib ? tr * (2 + s->nstates) : 0);
	if (s->gather > 0) { /* the gathers and frees, the whole gradient */
		fwd += 3;
		bwd += 5;
	}
	double per_step = s->micro * (L * (fwd + bwd) + 20) + L * tr;
	if (s->ot == VF__OT_FOREACH)
		per_step += 2 * L * tr;
	else if (s->ot == VF__OT_PER_TENSOR)
		per_step += 2 * L * tr * (s->ot_count < 4 ? s->ot_count : 4);
	return load + 2 * per_step + L * tr * s->nstates;
}

#define NHANDLES 7 /* handle arrays: w, g, st, ac, act, ck, gu */

/* A replay in progress: its allocator and handles (fork: a copy of both
 * goes on as the original would). */
struct vf__replay_state {
	struct replay r;
	int *all; /* the handle arrays r.w ... r.ck point into */
	size_t n; /* handles per array */
};

void vf__replay_state_free(struct vf__replay_state *st)
{
	if (!st)
		return;
	vf_alloc_free(st->r.a);
	free(st->all);
	free(st);
}

/* The handle arrays of st->r pointed into st->all. */
static void bind_handles(struct vf__replay_state *st)
{
	size_t n = st->n;
	int *all = st->all;
	st->r.w = all, st->r.g = all + n, st->r.st = all + 2 * n, st->r.ac = all + 3 * n,
	st->r.act = all + 4 * n, st->r.ck = all + 5 * n, st->r.gu = all + 6 * n;
}

/* A new allocator configured by cfg with s's model loaded and the cuBLAS
 * workspace made; peaks_only: vf_alloc_peaks_only. */
static vf_status replay_begin(const struct vf__step *s, const struct vf_alloc_config *cfg,
			      bool peaks_only, struct vf__replay_state **out,
			      struct vf_error *err)
{
	struct vf__replay_state *st = calloc(1, sizeof *st);
	if (!st)
		return vf_error_set(err, VF_ENOMEM, "allocator simulation: out of memory");
	st->r.s = s;
	vf_status rc = vf_alloc_new(cfg, &st->r.a, err);
	if (rc != VF_OK) {
		free(st);
		return rc;
	}
	if (peaks_only)
		vf_alloc_peaks_only(st->r.a);
	st->r.peaks_only = peaks_only;
	st->n = (size_t)(s->layers > 0 ? s->layers : 1) * VF__MAX_TENSORS;
	st->all = malloc(NHANDLES * st->n * sizeof *st->all);
	if (!st->all) {
		vf__replay_state_free(st);
		return vf_error_set(err, VF_ENOMEM, "allocator simulation: out of memory");
	}
	for (size_t i = 0; i < NHANDLES * st->n; i++)
		st->all[i] = -1;
	bind_handles(st);
	for (int i = 0; i < VF__MAX_TENSORS; i++)
		st->r.ow[i] = st->r.og[i] = -1;
	st->r.root = st->r.rw[0] = st->r.rw[1] = st->r.rw[2] = -1;
	load(&st->r);
	al(&st->r, s->workspace);
	*out = st;
	return VF_OK;
}

/* The micro-batches of training step `step` (0 or 1). */
static void step_batches(struct replay *r, int step)
{
	const struct vf__step *s = r->s;
	/* under no_sync the shards are made by the synced (last) micro-batch */
	int made = s->nosync_layer > 0 ? s->micro - 1 : 0;
	for (int m = 0; m < s->micro; m++) {
		r->accum = s->nosync_layer > 0 && m < s->micro - 1;
		micro_batch(r, m == made && !(s->grads_kept && step > 0));
	}
	r->accum = false;
}

/* Replay s through a new allocator; peaks_only: vf_alloc_peaks_only. */
static vf_status simulate(const struct vf__step *s, const struct vf_alloc_config *cfg,
			  bool peaks_only, struct vf_alloc **out, struct vf_error *err)
{
	struct vf__replay_state *st = NULL;
	vf_status rc = replay_begin(s, cfg, peaks_only, &st, err);
	if (rc != VF_OK)
		return rc;
	if (!s->train) {
		inference(&st->r);
	} else {
		for (int step = 0; step < 2; step++) {
			step_batches(&st->r, step);
			st->r.last = step == 1;
			optimizer_step(&st->r);
		}
	}
	*out = st->r.a;
	st->r.a = NULL;
	vf__replay_state_free(st);
	return VF_OK;
}

bool vf__step_forks(const struct vf__step *s)
{
	return s->train && !s->oib;
}

void vf__step_prefix_key(const struct vf__step *s, struct vf__step *key)
{
	memcpy(key, s, sizeof *key);
	key->nstates = 0;
	key->state_ratio = 0;
	key->paged_min = 0;
	key->ot = VF__OT_NONE;
	key->ot_ratio = 0;
	key->ot_count = 0;
	key->ot_cap = 0;
	key->grads_kept = false;
}

vf_status vf__step_prefix(const struct vf__step *s, const struct vf_alloc_config *cfg,
			  struct vf__replay_state **out, struct vf_error *err)
{
	vf_status rc = replay_begin(s, cfg, true, out, err);
	if (rc == VF_OK)
		step_batches(&(*out)->r, 0);
	return rc;
}

vf_status vf__replay_state_clone(const struct vf__replay_state *st,
				 struct vf__replay_state **out, struct vf_error *err)
{
	struct vf__replay_state *c = malloc(sizeof *c);
	if (!c)
		return vf_error_set(err, VF_ENOMEM, "allocator simulation: out of memory");
	*c = *st;
	c->r.a = NULL;
	c->all = malloc(NHANDLES * st->n * sizeof *c->all);
	vf_status rc = c->all ? vf_alloc_clone(st->r.a, &c->r.a, err)
			      : vf_error_set(err, VF_ENOMEM, "allocator simulation: out of memory");
	if (rc != VF_OK) {
		vf__replay_state_free(c);
		return rc;
	}
	memcpy(c->all, st->all, NHANDLES * st->n * sizeof *c->all);
	bind_handles(c);
	*out = c;
	return VF_OK;
}

void vf__step_finish(struct vf__replay_state *st, const struct vf__step *s,
		     struct vf__replay_peaks *out)
{
	st->r.s = s;
	optimizer_step(&st->r);
	step_batches(&st->r, 1);
	st->r.last = true;
	optimizer_step(&st->r);
	vf__replay_peaks_of(st->r.a, out);
}

vf_status vf__step_simulate(const struct vf__step *s, const struct vf_alloc_config *cfg,
			    struct vf_alloc **out, struct vf_error *err)
{
	return simulate(s, cfg, false, out, err);
}

vf_status vf__step_simulate_peaks(const struct vf__step *s, const struct vf_alloc_config *cfg,
				  struct vf__replay_peaks *out, struct vf_error *err)
{
	struct vf_alloc *a = NULL;
	vf_status st = simulate(s, cfg, true, &a, err);
	if (st != VF_OK)
		return st;
	vf__replay_peaks_of(a, out);
	vf_alloc_free(a);
	return VF_OK;
}
