/* advice.c - the cheapest changes that make a setup fit (advice.h): the
 * search's least-invasive-first list, each candidate confirmed by the
 * caching allocator simulation (the search itself uses the fast path). */
#include "vramfit/estimate/advice.h"

#include "vramfit/estimate/search.h"

#include <stdio.h>
#include <string.h>

vf_status vf_advice_search(const struct vf_arch *arch, const struct vf_setup *start,
			   const struct vf_gpu_spec *gpu, double margin, struct vf_search *s,
			   struct vf_error *err)
{
	struct vf_search_opts o;
	vf_search_opts_defaults(&o);
	o.knobs = (VF_KNOBS_DEFAULT | VF_KNOB_BIT(VF_KNOB_PRECISION)) &
		  ~(VF_KNOB_BIT(VF_KNOB_GPUS) | VF_KNOB_BIT(VF_KNOB_SHARD));
	o.margin = margin;
	o.max_gpus = start->gpus;
	o.sort = VF_SORT_CHANGES;
	o.top = 64;
	o.near = true; /* the simulation decides (vf_advice_confirm) */
	return vf_search_run(arch, start, gpu, &o, s, err);
}

vf_status vf_advice_confirm(const struct vf_arch *arch, const struct vf_setup *start,
			    const struct vf_gpu_spec *gpu, const struct vf_alloc_config *cfg,
			    struct vf_replay_memo *memo, const struct vf_search *s,
			    struct vf_advice *out, struct vf_error *err)
{
	memset(out, 0, sizeof *out);
	out->evaluated = s->evaluated;
	vf_status st = VF_OK;
	/* the first VF_ADVICE_MAX are always replayed: announced, so that
	 * those differing only in the optimizer replay their common part once */
	for (size_t i = 0; i < s->count && i < VF_ADVICE_MAX; i++)
		(void)vf_estimate_expect_replay(arch, &s->results[i].setup, gpu, cfg, memo);
	for (size_t i = 0; i < s->count && out->n < VF_ADVICE_MAX; i++) {
		const struct vf_search_result *r = &s->results[i];
		struct vf_estimate e;
		st = vf_estimate_simulate_memo(arch, &r->setup, gpu, cfg, memo, &e, NULL, err);
		if (st != VF_OK)
			break;
		int64_t room;
		if (!vf_estimate_fits(&e, gpu, &room) || e.sim_oom || e.peak_bytes > r->limit_bytes)
			continue; /* fit's rule: the margin kept free (r->limit_bytes) */
		struct vf_advice_item *it = &out->item[out->n++];
		it->setup = r->setup;
		vf_search_diff(start, &r->setup, it->changes, sizeof it->changes);
		it->peak_bytes = e.peak_bytes;
		it->headroom_bytes = room;
	}
	return st;
}

vf_status vf_advice_run(const struct vf_arch *arch, const struct vf_setup *start,
			const struct vf_gpu_spec *gpu, const struct vf_alloc_config *cfg,
			struct vf_replay_memo *memo, double margin, struct vf_advice *out,
			struct vf_error *err)
{
	memset(out, 0, sizeof *out);
	struct vf_search s;
	vf_status st = vf_advice_search(arch, start, gpu, margin, &s, err);
	if (st != VF_OK)
		return st;
	st = vf_advice_confirm(arch, start, gpu, cfg, memo, &s, out, err);
	vf_search_release(&s);
	return st;
}

/* ---- video DiTs --------------------------------------------------------------- */

/* The knobs a DiT trainer has (the LTX-2 trainer's: quantization of the
 * transformer, 8-bit optimizer, 8-bit text encoder, optimizer offload
 * during validation, checkpointing, batch split, LoRA rank), each value a
 * candidate; rank changes what is trained and ranks after the others. */
struct dit_cand {
	struct vf_setup s;
	int changes;
	int64_t peak;
	int64_t room;
};

static int dit_diff(const struct vf_setup *a, const struct vf_setup *b, char *out, size_t n)
{
	size_t k = 0;
	int c = 0;
	out[0] = '\0';
#define ADD(...)                                                                        \
	do {                                                                            \
		if (k < n)                                                              \
			k += (size_t)snprintf(out + k, n - k, "%s", c ? ", " : "");     \
		if (k < n)                                                              \
			k += (size_t)snprintf(out + k, n - k, __VA_ARGS__);             \
		c++;                                                                    \
	} while (0)
	if (a->quant != b->quant)
		ADD("quant %s -> %s", vf_quant_name(a->quant), vf_quant_name(b->quant));
	if (a->optimizer != b->optimizer)
		ADD("optimizer %s -> %s", vf_optimizer_name(a->optimizer), vf_optimizer_name(b->optimizer));
	if (a->text_encoder != b->text_encoder)
		ADD("text-encoder %s -> %s", vf_text_encoder_name(a->text_encoder),
		    vf_text_encoder_name(b->text_encoder));
	if (a->offload_optimizer != b->offload_optimizer)
		ADD("offload-optimizer %s", b->offload_optimizer ? "on" : "off");
	if (a->grad_ckpt != b->grad_ckpt)
		ADD("grad-ckpt %s", b->grad_ckpt ? "on" : "off");
	if (a->batch != b->batch)
		ADD("batch %lldx%lld -> %lldx%lld", (long long)a->batch, (long long)a->grad_accum,
		    (long long)b->batch, (long long)b->grad_accum);
	if (a->lora_rank != b->lora_rank)
		ADD("lora-rank %d -> %d", a->lora_rank, b->lora_rank);
#undef ADD
	return c;
}

/* Rank: fewer changes first, a LoRA rank change after every other, then
 * the lower peak. */
static int dit_cand_cmp(const struct dit_cand *x, const struct dit_cand *y, const struct vf_setup *start)
{
	int rx = x->s.lora_rank != start->lora_rank, ry = y->s.lora_rank != start->lora_rank;
	if (rx != ry)
		return rx - ry;
	if (x->changes != y->changes)
		return x->changes - y->changes;
	return (x->peak > y->peak) - (x->peak < y->peak);
}

static void dit_keep(struct dit_cand *best, int *nbest, const struct dit_cand *c, const struct vf_setup *start)
{
	int i = *nbest < VF_ADVICE_MAX ? (*nbest)++ : VF_ADVICE_MAX;
	if (i == VF_ADVICE_MAX && dit_cand_cmp(c, &best[VF_ADVICE_MAX - 1], start) >= 0)
		return;
	if (i == VF_ADVICE_MAX)
		i = VF_ADVICE_MAX - 1;
	best[i] = *c;
	for (; i > 0 && dit_cand_cmp(&best[i], &best[i - 1], start) < 0; i--) {
		struct dit_cand t = best[i];
		best[i] = best[i - 1];
		best[i - 1] = t;
	}
}

/* The knob values tried: index 0 is the start's. */
struct dit_knobs {
	enum vf_quant quant[4];
	enum vf_optimizer opt[2];
	enum vf_text_encoder te[2];
	int rank[4];
	int nquant, nrank;
};

/* Candidate idx (quant, optimizer, text encoder, offload, checkpointing,
 * batch split, rank); false when it repeats the start's value of a knob. */
static bool dit_make(const struct vf_setup *st, const struct dit_knobs *k, const int *x, struct dit_cand *c)
{
	if ((x[0] && k->quant[x[0]] == st->quant) || (x[1] && k->opt[x[1]] == st->optimizer) ||
	    (x[2] && k->te[x[2]] == st->text_encoder) || (x[3] && st->offload_optimizer) || (x[4] && st->grad_ckpt) ||
	    (x[5] && st->batch == 1) || (x[6] && k->rank[x[6]] >= st->lora_rank))
		return false;
	memset(c, 0, sizeof *c);
	c->s = *st;
	c->s.quant = k->quant[x[0]];
	c->s.optimizer = k->opt[x[1]];
	c->s.text_encoder = k->te[x[2]];
	c->s.offload_optimizer = x[3] ? true : st->offload_optimizer;
	c->s.grad_ckpt = x[4] ? true : st->grad_ckpt;
	if (x[5]) {
		c->s.grad_accum = st->grad_accum * st->batch; /* the effective batch kept */
		c->s.batch = 1;
	}
	if (x[6]) {
		c->s.lora_rank = k->rank[x[6]];
		c->s.lora_alpha = st->lora_alpha * k->rank[x[6]] / st->lora_rank; /* alpha follows */
	}
	char w[256];
	c->changes = dit_diff(st, &c->s, w, sizeof w);
	return c->changes > 0;
}

void vf_advice_dit(const struct vf_dit *d, const struct vf_setup *start, const struct vf_gpu_spec *gpu,
		   double margin, struct vf_advice *out)
{
	memset(out, 0, sizeof *out);
	bool lora = start->mode == VF_MODE_LORA;
	struct dit_knobs k = {
		.quant = {start->quant, VF_QUANT_INT8, VF_QUANT_FP8, VF_QUANT_INT4},
		.opt = {start->optimizer, VF_OPT_ADAMW8BIT},
		.te = {start->text_encoder, start->text_encoder == VF_TE_NONE ? VF_TE_NONE : VF_TE_INT8},
		.rank = {start->lora_rank, 16, 8, 4},
		.nquant = lora ? 4 : 1, /* quantization trains adapters on a frozen base */
		.nrank = lora ? 4 : 1,
	};
	const int size[7] = {k.nquant, 2, 2, 2, 2, 2, k.nrank};
	int64_t limit = (int64_t)((1 - margin) * (double)vf_estimate_gpu_bytes(gpu));
	struct dit_cand best[VF_ADVICE_MAX];
	int nbest = 0, x[7] = {0};
	for (;;) {
		struct dit_cand c;
		if (dit_make(start, &k, x, &c)) {
			struct vf_estimate e;
			vf_estimate_dit(d, &c.s, gpu, &e);
			out->evaluated++;
			if (vf_estimate_fits(&e, gpu, &c.room) && e.peak_bytes <= limit) {
				c.peak = e.peak_bytes;
				dit_keep(best, &nbest, &c, start);
			}
		}
		int i = 0;
		for (; i < 7 && ++x[i] >= size[i]; i++)
			x[i] = 0;
		if (i == 7)
			break;
	}
	for (int i = 0; i < nbest; i++) {
		struct vf_advice_item *it = &out->item[out->n++];
		it->setup = best[i].s;
		dit_diff(start, &best[i].s, it->changes, sizeof it->changes);
		it->peak_bytes = best[i].peak;
		it->headroom_bytes = best[i].room;
	}
}
