/* search.c - the knob-space search (search.h): enumerate the allowed
 * knobs, evaluate each configuration with the estimator's full model plus
 * data-parallel communication, keep the best that fit.
 *
 * Loop order: GPU count, sharding, precision, optimizer, quantization, LoRA
 * rank, checkpointing, then the micro-batch innermost and ascending, so the
 * pruning is a `break`: once the floor (context + peak allocated, which
 * never decreases with the micro-batch) is over the limit, no larger
 * micro-batch can fit. The reserved peak itself is not monotone in the
 * batch (the allocator model's cached blocks), so it is not used to prune. Nothing is allocated per
 * configuration: the top-K list and the estimates' context (vf_estimate_ctx:
 * the model's shape, the terms and layer step times setups share) are
 * allocated once. With opts->threads other than 1 the space is spread over
 * threads in tasks (below: "the space spread over threads"), each thread
 * with a context and each task with a top-K list of its own, merged into
 * the list one thread makes. */
#include "vramfit/estimate/search.h"
#include "vramfit/estimate/split.h"
#include "estimate_internal.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SEARCH_THREADS_MAX 4
#define SEARCH_SPREAD_MAX ((size_t)1 << 20) /* tasks x top: results held at once */

static const char *const knob_names[VF_KNOB_COUNT] = {
	"batch", "grad-ckpt", "optimizer", "quant", "lora-rank", "precision", "shard", "gpus",
	"split",
};

const char *vf_knob_name(enum vf_knob k)
{
	return (unsigned)k < VF_KNOB_COUNT ? knob_names[k] : "?";
}

vf_status vf_knobs_parse(const char *list, unsigned *bits, struct vf_error *err)
{
	*bits = 0;
	if (!list)
		return VF_OK;
	const char *p = list;
	while (*p) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		int found = -1;
		for (int k = 0; k < VF_KNOB_COUNT; k++)
			if (strlen(knob_names[k]) == len && strncmp(p, knob_names[k], len) == 0)
				found = k;
		/* Aliases: the flag names the knob moves. */
		if (found < 0 && len == 10 && strncmp(p, "grad-accum", len) == 0)
			found = VF_KNOB_BATCH;
		if (found < 0) {
			char names[160] = "";
			size_t k = 0;
			for (int i = 0; i < VF_KNOB_COUNT; i++)
				k += (size_t)snprintf(names + k, sizeof names - k, "%s%s", i ? "," : "",
						      knob_names[i]);
			return vf_error_set(err, VF_EUSAGE, "unknown knob '%.*s' (knobs: %s)",
					    (int)(len > 40 ? 40 : len), p, names);
		}
		*bits |= VF_KNOB_BIT(found);
		p += len;
		if (*p == ',')
			p++;
	}
	return VF_OK;
}

void vf_search_opts_defaults(struct vf_search_opts *o)
{
	o->knobs = VF_KNOBS_DEFAULT;
	o->margin = 0.10;
	o->max_gpus = 1;
	o->sort = VF_SORT_TIME;
	o->top = 10;
	o->exhaustive = false;
	o->price_usd_hour = -1;
	o->threads = 1;
	o->near = false;
}

/* vf_search_eval with the search's estimate context (NULL: none). */
static void eval_ctx(struct vf_estimate_ctx *cx, const struct vf_arch *arch,
		     const struct vf_setup *s, const struct vf_gpu_spec *gpu, double margin,
		     double price_usd_hour, struct vf_search_result *out)
{
	struct vf_estimate e;
	vf_estimate_run_ctx(cx, arch, s, gpu, &e);
	out->setup = *s;
	out->gpu_bytes = vf_estimate_gpu_bytes(gpu);
	out->limit_bytes = (int64_t)((1.0 - margin) * (double)out->gpu_bytes); /* bytes */
	out->peak_bytes = e.peak_bytes;
	out->floor_bytes = e.peak_allocated_bytes + e.context_bytes; /* <= peak_bytes */
	out->fits = e.peak_bytes <= out->limit_bytes;
	out->dominant = e.dominant;
	out->tokens_per_step = e.tokens_per_step;
	out->compute_seconds = e.step_seconds;
	out->comm_seconds = 0;
	out->step_seconds = -1;
	out->tokens_per_second = -1;
	out->cost_per_step = -1;
	out->changes = 0;
	out->invasiveness = 0;
	/* vf_runcost_step_seconds: an LLM estimate's step has its
	 * communication in it, and its exposed part in parts (read here
	 * without the rest of its vf_comm: the link's name) */
	double step, exposed;
	if (e.parts.compute > 0) {
		step = e.step_seconds > 0 ? e.step_seconds : -1;
		exposed = e.parts.comm_exposed;
	} else {
		struct vf_comm c;
		step = vf_runcost_step_seconds(&e, s, gpu, &c);
		exposed = c.exposed_seconds;
	}
	if (!(step > 0))
		return;
	out->comm_seconds = exposed; /* s, exposed (step has the SMs NCCL takes too) */
	out->step_seconds = step;              /* s */
	out->tokens_per_second = (double)e.tokens_per_step / out->step_seconds;
	double price = price_usd_hour >= 0 ? price_usd_hour : gpu ? gpu->price_usd_hour : -1;
	if (price >= 0)
		out->cost_per_step = out->step_seconds * s->gpus * price / 3600.0; /* $ */
}

void vf_search_eval(const struct vf_arch *arch, const struct vf_setup *s,
		    const struct vf_gpu_spec *gpu, double margin, double price_usd_hour,
		    struct vf_search_result *out)
{
	eval_ctx(NULL, arch, s, gpu, margin, price_usd_hour, out);
}

/* Knobs changed between two setups (micro-batch and accumulation are one
 * knob; the shard that merely follows the GPU count is not a change). */
static bool shard_changed(const struct vf_setup *a, const struct vf_setup *b)
{
	if (a->shard == b->shard)
		return false;
	if (b->gpus == 1 && b->shard == VF_SHARD_NONE)
		return false;
	if (a->gpus == 1 && a->shard == VF_SHARD_NONE && b->shard == VF_SHARD_DDP)
		return false;
	return true;
}

/* The precision differs because the quantized base forces bf16, not by
 * choice. */
static bool precision_changed(const struct vf_setup *a, const struct vf_setup *b)
{
	if (a->precision == b->precision)
		return false;
	return !(b->quant != VF_QUANT_NONE && !(a->given & VF_SETUP_G_PRECISION) &&
		 b->precision == VF_PREC_BF16);
}

/* The model split differently over the GPUs (split.h). */
static bool split_changed(const struct vf_setup *a, const struct vf_setup *b)
{
	return a->split != b->split || a->tp != b->tp || a->pp != b->pp;
}

static int count_changes(const struct vf_setup *a, const struct vf_setup *b)
{
	return split_changed(a, b) + (a->batch != b->batch || a->grad_accum != b->grad_accum) +
	       (a->grad_ckpt != b->grad_ckpt) + (a->optimizer != b->optimizer) +
	       (a->quant != b->quant) + (a->lora_rank != b->lora_rank) +
	       precision_changed(a, b) + (a->gpus != b->gpus) + shard_changed(a, b);
}

/* How invasive the changes are, for VF_SORT_CHANGES: knobs that only change
 * how the same training runs (sharding, GPU count, checkpointing, micro-batch
 * split) weigh 1; knobs that change the numerics (optimizer, quantization,
 * precision, LoRA rank) weigh 3, milder choices first (int8, fp8, nf4, int4). */
static double invasiveness(const struct vf_setup *a, const struct vf_setup *b)
{
	static const double quant_w[VF_QUANT_COUNT] = {0, 0.0, 0.3, 0.2, 0.1}; /* none int8 int4 nf4 fp8 */
	/* 8-bit AdamW is the same algorithm with quantised states; Adafactor
	 * (no first moment, factored second moment), Lion and SGD change the
	 * update rule itself, so they rank behind 8-bit AdamW even when it
	 * needs checkpointing as well (a weight-1 knob). */
	static const double opt_w[VF_OPT_COUNT] = {0, 0.0, 1.5, 2.0, 1.5, 0}; /* adamw 8bit ada sgd lion */
	static const double shard_w[VF_SHARD_COUNT] = {0, 0, 0.01, 0.02, 0.03, 0.03};
	double w = 0;
	w += (a->batch != b->batch || a->grad_accum != b->grad_accum);
	w += (a->grad_ckpt != b->grad_ckpt);
	w += (a->gpus != b->gpus);
	w += split_changed(a, b); /* how it runs, not the numerics */
	if (shard_changed(a, b))
		w += 1 + shard_w[b->shard];
	if (a->optimizer != b->optimizer)
		w += 3 + opt_w[b->optimizer];
	if (a->quant != b->quant)
		w += 3 + quant_w[b->quant];
	w += 3 * precision_changed(a, b) + 3 * (a->lora_rank != b->lora_rank);
	return w;
}

int vf_search_diff(const struct vf_setup *a, const struct vf_setup *b, char *out, size_t n)
{
	size_t k = 0;
	int c = 0;
	if (n)
		out[0] = '\0';
#define ADD(...)                                                                        \
	do {                                                                            \
		if (k < n)                                                              \
			k += (size_t)snprintf(out + k, n - k, "%s", c ? ", " : "");     \
		if (k < n)                                                              \
			k += (size_t)snprintf(out + k, n - k, __VA_ARGS__);             \
		c++;                                                                    \
	} while (0)
	if (a->batch != b->batch || a->grad_accum != b->grad_accum)
		ADD("batch %lldx%lld -> %lldx%lld", (long long)a->batch, (long long)a->grad_accum,
		    (long long)b->batch, (long long)b->grad_accum);
	if (a->grad_ckpt != b->grad_ckpt)
		ADD("grad-ckpt %s", b->grad_ckpt ? "on" : "off");
	if (a->optimizer != b->optimizer)
		ADD("optimizer %s -> %s", vf_optimizer_name(a->optimizer), vf_optimizer_name(b->optimizer));
	if (a->quant != b->quant)
		ADD("quant %s -> %s", vf_quant_name(a->quant), vf_quant_name(b->quant));
	if (a->lora_rank != b->lora_rank)
		ADD("lora-rank %d -> %d", a->lora_rank, b->lora_rank);
	if (a->precision != b->precision)
		ADD("precision %s -> %s", vf_precision_name(a->precision), vf_precision_name(b->precision));
	if (a->gpus != b->gpus)
		ADD("gpus %d -> %d", a->gpus, b->gpus);
	if (shard_changed(a, b))
		ADD("shard %s -> %s", vf_shard_name(a->shard), vf_shard_name(b->shard));
	if (split_changed(a, b)) {
		char w[160];
		ADD("%s", b->split == VF_SPLIT_NONE && b->tp == 1 && b->pp == 1
				  ? "no split" : vf_split_setup_words(b, w, sizeof w));
	}
#undef ADD
	if (k >= n && n > 4)
		memcpy(out + n - 4, "...", 4);
	return c;
}

static void diff_item(cJSON *arr, const char *knob, const char *from, const char *to)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "knob", knob);
	cJSON_AddStringToObject(o, "from", from);
	cJSON_AddStringToObject(o, "to", to);
	cJSON_AddItemToArray(arr, o);
}

cJSON *vf_search_diff_json(const struct vf_setup *a, const struct vf_setup *b)
{
	cJSON *arr = cJSON_CreateArray();
	char x[48], y[48];
	if (!arr)
		return NULL;
	if (a->batch != b->batch) {
		snprintf(x, sizeof x, "%lld", (long long)a->batch);
		snprintf(y, sizeof y, "%lld", (long long)b->batch);
		diff_item(arr, "batch", x, y);
	}
	if (a->grad_accum != b->grad_accum) {
		snprintf(x, sizeof x, "%lld", (long long)a->grad_accum);
		snprintf(y, sizeof y, "%lld", (long long)b->grad_accum);
		diff_item(arr, "grad_accum", x, y);
	}
	if (a->grad_ckpt != b->grad_ckpt)
		diff_item(arr, "grad_ckpt", a->grad_ckpt ? "true" : "false", b->grad_ckpt ? "true" : "false");
	if (a->optimizer != b->optimizer)
		diff_item(arr, "optimizer", vf_optimizer_name(a->optimizer), vf_optimizer_name(b->optimizer));
	if (a->quant != b->quant)
		diff_item(arr, "quant", vf_quant_name(a->quant), vf_quant_name(b->quant));
	if (a->lora_rank != b->lora_rank) {
		snprintf(x, sizeof x, "%d", a->lora_rank);
		snprintf(y, sizeof y, "%d", b->lora_rank);
		diff_item(arr, "lora_rank", x, y);
	}
	if (a->precision != b->precision)
		diff_item(arr, "precision", vf_precision_name(a->precision), vf_precision_name(b->precision));
	if (a->gpus != b->gpus) {
		snprintf(x, sizeof x, "%d", a->gpus);
		snprintf(y, sizeof y, "%d", b->gpus);
		diff_item(arr, "gpus", x, y);
	}
	if (a->shard != b->shard)
		diff_item(arr, "shard", vf_shard_name(a->shard), vf_shard_name(b->shard));
	if (a->text_encoder != b->text_encoder) /* video DiTs (the DiT advice's knobs) */
		diff_item(arr, "text_encoder", vf_text_encoder_name(a->text_encoder),
			  vf_text_encoder_name(b->text_encoder));
	if (a->offload_optimizer != b->offload_optimizer)
		diff_item(arr, "offload_optimizer", a->offload_optimizer ? "true" : "false",
			  b->offload_optimizer ? "true" : "false");
	if (split_changed(a, b)) { /* a layer split's --max-memory per GPU: longer than x */
		char sx[512], sy[512];
		vf_split_setup_words(a, sx, sizeof sx);
		vf_split_setup_words(b, sy, sizeof sy);
		diff_item(arr, "split", sx[0] ? sx : "none", sy[0] ? sy : "none");
	}
	return arr;
}

/* --- ordering of results ---------------------------------------------------- */

static double time_key(const struct vf_search_result *r)
{
	return r->step_seconds > 0 ? r->step_seconds : INFINITY;
}

/* Step times within VF_SEARCH_TIE (0.5%) of each other rank as equal (then
 * the fewer and milder changes win): buckets of a log scale keep the order
 * transitive. */
double vf_search_time_bucket(double step_seconds)
{
	if (!(step_seconds > 0))
		return INFINITY;
	return floor(log(step_seconds) / log1p(VF_SEARCH_TIE));
}

/* < 0 when a ranks before b; ba, bb: their vf_search_time_bucket (read
 * by the sort by time only). */
static int compare(const struct vf_search_result *a, double ba, const struct vf_search_result *b,
		   double bb, enum vf_search_sort sort)
{
	double ka = 0, kb = 0;
	switch (sort) {
	case VF_SORT_COST:
		ka = a->cost_per_step >= 0 ? a->cost_per_step : INFINITY;
		kb = b->cost_per_step >= 0 ? b->cost_per_step : INFINITY;
		break;
	case VF_SORT_VRAM:
		ka = (double)a->peak_bytes;
		kb = (double)b->peak_bytes;
		break;
	case VF_SORT_CHANGES: /* least invasive changes, then the fastest */
		if (a->invasiveness != b->invasiveness)
			return a->invasiveness < b->invasiveness ? -1 : 1;
		ka = time_key(a);
		kb = time_key(b);
		break;
	default:
		ka = ba;
		kb = bb;
		break;
	}
	if (ka != kb)
		return ka < kb ? -1 : 1;
	if (time_key(a) != time_key(b))
		return time_key(a) < time_key(b) ? -1 : 1;
	/* equally good: the fewer and milder changes first */
	if (a->invasiveness != b->invasiveness)
		return a->invasiveness < b->invasiveness ? -1 : 1;
	if (a->peak_bytes != b->peak_bytes)
		return a->peak_bytes < b->peak_bytes ? -1 : 1;
	return 0;
}

/* Insert r, of time bucket br, into the sorted top-K list (stable: after equals). bucket[i]:
 * results[i]'s time bucket, kept beside the list so that each result's
 * logarithm is taken once, not in every comparison. */
static void keep_bucket(struct vf_search *s, size_t cap, double *bucket, const struct vf_search_result *r,
			double br, enum vf_search_sort sort)
{
	size_t n = s->count;
	if (n == cap && compare(r, br, &s->results[n - 1], bucket[n - 1], sort) >= 0)
		return;
	size_t pos = n;
	while (pos > 0 && compare(r, br, &s->results[pos - 1], bucket[pos - 1], sort) < 0)
		pos--;
	if (n == cap)
		n--; /* drop the last */
	memmove(&s->results[pos + 1], &s->results[pos], (n - pos) * sizeof *s->results);
	memmove(&bucket[pos + 1], &bucket[pos], (n - pos) * sizeof *bucket);
	s->results[pos] = *r;
	bucket[pos] = br;
	s->count = n + 1;
}

/* keep_bucket with r's bucket taken here */
static void keep(struct vf_search *s, size_t cap, double *bucket, const struct vf_search_result *r,
		 enum vf_search_sort sort)
{
	bool by_time = sort != VF_SORT_COST && sort != VF_SORT_VRAM && sort != VF_SORT_CHANGES;
	keep_bucket(s, cap, bucket, r, by_time ? vf_search_time_bucket(r->step_seconds) : 0, sort);
}

/* The top list's results (out->results) and their time buckets (keep),
 * cap of each, in one block (vf_search_release frees both); NULL without
 * memory. Not zeroed: keep_bucket reads only the first count of each, and
 * calloc's zeroing of all cap faulted in pages no result uses (43 of a
 * whole-catalog estimate's 586 page faults, issue 21). */
static double *top_new(struct vf_search *out, size_t cap)
{
	_Static_assert(sizeof(struct vf_search_result) % sizeof(double) == 0,
		       "the buckets after the results are aligned");
	out->results = NULL;
	if (cap > SIZE_MAX / (sizeof *out->results + sizeof(double)))
		return NULL;
	out->results = malloc(cap * (sizeof *out->results + sizeof(double)));
	return out->results ? (double *)(void *)(out->results + cap) : NULL;
}

/* --- the space ------------------------------------------------------------- */

#define MAXV 16

static int add_unique(int *v, int n, int x)
{
	for (int i = 0; i < n; i++)
		if (v[i] == x)
			return n;
	if (n < MAXV)
		v[n++] = x;
	return n;
}

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Whether r goes on to the top list, counted: it fits, or (opts->near) it
 * is a near miss. The allocator simulation a caller confirms results with
 * never reads a peak below the floor (vf_estimate_simulate_memo raises the
 * replay's reserve to the step's allocated peak: the same context and
 * allocated peak as this estimate's), so this estimate's peak exceeds the
 * simulated one by at most its own allocator reserve, peak - floor: a
 * setup over the limit by less than that may still fit the simulation
 * (mixtral-8x7b QLoRA on 2 x RTX 4090, ZeRO-3 and checkpointing: 21.90
 * GiB here, 21.06 simulated, 21.59 usable). The same bound prunes the
 * micro-batch loop, so keeping near misses evaluates nothing more. */
static bool counted(const struct vf_search_opts *o, struct vf_search *out,
		    const struct vf_search_result *r)
{
	if (r->fits) {
		out->fitting++;
		return true;
	}
	if (!o->near || r->floor_bytes > r->limit_bytes)
		return false;
	out->near++;
	return true;
}

/* --- one model over several GPUs (split.h) -----------------------------------
 * The layouts for g GPUs: a layer split over all g on cards without NVLink;
 * tp x pp (tp, pp in 1, 2, 4, 8, tp dividing the heads) with the rest data
 * parallel on NVLink cards. The numerics (precision, optimizer,
 * quantization, rank) stay the start's: a split is the alternative to
 * changing them; micro-batch, checkpointing and sharding vary. Pruned like
 * the main loop: the floor (the largest context + allocated peak of the
 * GPUs) never decreases with the micro-batch. */
struct layout {
	enum vf_split_kind kind;
	int tp, pp, dp;
};

static int layouts_for(const struct vf_arch *a, const struct vf_gpu_spec *gpu, int g,
		       struct layout *v, int max)
{
	int n = 0;
	if (!gpu->nvlink) {
		if (g <= VF_SPLIT_MAX_GPUS && g <= a->layers)
			v[n++] = (struct layout){VF_SPLIT_LAYERS, 1, 1, 1};
		return n;
	}
	for (int tp = 1; tp <= 8; tp *= 2)
		for (int pp = 1; pp <= 8 && n < max; pp *= 2) {
			if (tp * pp == 1 || g % (tp * pp) || a->heads % tp || pp > a->layers)
				continue;
			v[n++] = (struct layout){VF_SPLIT_NONE, tp, pp, g / (tp * pp)};
		}
	return n;
}

static void search_layout(const struct vf_arch *arch, const struct vf_setup *st,
			  const struct vf_gpu_spec *gpu, const struct vf_search_opts *opts, int g,
			  const struct layout *l, struct vf_split *sp, struct vf_search *out, size_t cap,
			  double *bucket)
{
	unsigned k = opts->knobs;
	int64_t eff = st->batch * st->grad_accum * st->gpus;
	if (eff % l->dp)
		return;
	int64_t per = eff / l->dp;
	struct vf_setup s = *st;
	s.split = l->kind;
	s.tp = l->tp;
	s.pp = l->pp;
	s.gpus = g;
	memset(s.max_memory_cgib, 0, sizeof s.max_memory_cgib);
	s.sequence_parallel = false;
	int shard_v[2] = {l->dp > 1 ? (st->shard != VF_SHARD_NONE ? (int)st->shard : VF_SHARD_DDP)
				    : VF_SHARD_NONE, VF_SHARD_ZERO3};
	int ns = l->dp > 1 && (k & VF_KNOB_BIT(VF_KNOB_SHARD)) && shard_v[0] != VF_SHARD_ZERO3 ? 2 : 1;
	int nc = (k & VF_KNOB_BIT(VF_KNOB_GRAD_CKPT)) && st->mode != VF_MODE_INFER ? 2 : 1;
	struct vf_search_result r;
	struct vf_error err = {0};
	uint64_t nb = 0; /* micro-batches per (shard, checkpointing): the space counts them all */
	for (int64_t b = 1; b <= per; b++)
		nb += per % b == 0 && ((k & VF_KNOB_BIT(VF_KNOB_BATCH)) || b == st->batch);
	for (int si = 0; si < ns; si++)
		for (int ci = 0; ci < nc; ci++) {
			out->space += nb;
			s.shard = (enum vf_shard)shard_v[si];
			s.grad_ckpt = ci ? !st->grad_ckpt : st->grad_ckpt;
			for (int64_t b = 1; b <= per; b++) {
				if (per % b || (!(k & VF_KNOB_BIT(VF_KNOB_BATCH)) && b != st->batch))
					continue;
				s.batch = b;
				s.grad_accum = per / b;
				s.micro_batches = l->pp > 1 ? s.grad_accum : 0;
				if (vf__split_run(arch, &s, gpu, false, sp, &err) != VF_OK)
					return;
				vf_split_search_result(sp, &s, gpu, opts->margin, opts->price_usd_hour, &r);
				out->evaluated++;
				if (!out->have_smallest || r.peak_bytes < out->smallest.peak_bytes) {
					out->smallest = r;
					out->have_smallest = true;
				}
				if (!r.fits && !opts->exhaustive && r.floor_bytes > r.limit_bytes)
					break;
				if (!counted(opts, out, &r))
					continue;
				r.changes = count_changes(st, &s);
				r.invasiveness = invasiveness(st, &s);
				keep(out, cap, bucket, &r, opts->sort);
			}
		}
}

static void search_split(const struct vf_arch *arch, const struct vf_setup *st,
			 const struct vf_gpu_spec *gpu, const struct vf_search_opts *opts, int maxg,
			 struct vf_search *out, size_t cap, double *bucket)
{
	if (!(opts->knobs & VF_KNOB_BIT(VF_KNOB_SPLIT)) || vf_split_active(st))
		return;
	struct vf_error err = {0};
	struct vf_setup probe = *st;
	probe.split = VF_SPLIT_LAYERS;
	probe.gpus = 1;
	struct vf_split *sp = vf_split_new();
	if (!sp || vf__split_run(arch, &probe, gpu, false, sp, &err) != VF_OK) { /* does it split at all */
		free(sp);
		return;
	}
	int gs[MAXV], ng = 0;
	if (opts->knobs & VF_KNOB_BIT(VF_KNOB_GPUS)) {
		for (int g = 2; g <= maxg && ng < MAXV; g *= 2)
			ng = add_unique(gs, ng, g);
		if (maxg > 1)
			ng = add_unique(gs, ng, maxg);
	} else if (st->gpus > 1) {
		ng = add_unique(gs, ng, st->gpus);
	}
	for (int gi = 0; gi < ng; gi++) {
		struct layout v[16];
		int nl = layouts_for(arch, gpu, gs[gi], v, 16);
		for (int li = 0; li < nl; li++)
			search_layout(arch, st, gpu, opts, gs[gi], &v[li], sp, out, cap, bucket);
	}
	free(sp);
}

/* What one search holds for all its evaluations. */
struct search_run {
	struct vf_estimate_ctx *cx;
	const struct vf_arch *arch;
	const struct vf_setup *st; /* the start */
	const struct vf_gpu_spec *gpu;
	const struct vf_search_opts *opts;
	double price;
	struct vf_search *out;
	size_t cap;
	double *bucket;
};

/* The values each knob takes (the start's first). */
struct knob_values {
	int gpus[MAXV], ng;
	int prec[MAXV], npr;
	int opt[MAXV], no;
	int quant[MAXV], nq;
	int rank[MAXV], nr;
	int ckpt[2], nc;
};

static void knob_values_fill(const struct vf_setup *st, unsigned k, int maxg, struct knob_values *v)
{
	memset(v, 0, sizeof *v);
	if (k & VF_KNOB_BIT(VF_KNOB_GPUS)) {
		for (int g = 1; g <= maxg && v->ng < MAXV; g *= 2)
			v->ng = add_unique(v->gpus, v->ng, g);
		v->ng = add_unique(v->gpus, v->ng, maxg);
	} else {
		v->ng = add_unique(v->gpus, v->ng, st->gpus);
	}
	v->npr = add_unique(v->prec, v->npr, st->precision);
	if ((k & VF_KNOB_BIT(VF_KNOB_PRECISION)) && st->mode != VF_MODE_INFER) {
		v->npr = add_unique(v->prec, v->npr, VF_PREC_AMP);
		v->npr = add_unique(v->prec, v->npr, VF_PREC_BF16);
	}
	v->no = add_unique(v->opt, v->no, st->optimizer);
	if ((k & VF_KNOB_BIT(VF_KNOB_OPTIMIZER)) && st->mode != VF_MODE_INFER) {
		static const int cand[] = {VF_OPT_ADAMW, VF_OPT_ADAMW8BIT, VF_OPT_ADAFACTOR, VF_OPT_LION};
		for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++)
			v->no = add_unique(v->opt, v->no, cand[i]);
	}
	v->nq = add_unique(v->quant, v->nq, st->quant);
	if ((k & VF_KNOB_BIT(VF_KNOB_QUANT)) && st->mode != VF_MODE_FULL)
		for (int q = 0; q < VF_QUANT_COUNT; q++)
			v->nq = add_unique(v->quant, v->nq, q);
	v->nr = add_unique(v->rank, v->nr, st->lora_rank);
	if ((k & VF_KNOB_BIT(VF_KNOB_LORA_RANK)) && st->mode == VF_MODE_LORA) {
		static const int cand[] = {8, 16, 32, 64, 128};
		for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++)
			v->nr = add_unique(v->rank, v->nr, cand[i]);
	}
	v->ckpt[v->nc++] = st->grad_ckpt;
	if ((k & VF_KNOB_BIT(VF_KNOB_GRAD_CKPT)) && st->mode != VF_MODE_INFER)
		v->ckpt[v->nc++] = !st->grad_ckpt;
}

/* Micro-batches on g GPUs: divisors of the per-GPU samples, ascending. */
static int micro_batches(const struct vf_setup *st, unsigned k, int64_t per_gpu, int64_t bs[64])
{
	int nb = 0;
	if (k & VF_KNOB_BIT(VF_KNOB_BATCH)) {
		for (int64_t b = 1; b <= per_gpu && nb < 64; b++)
			if (per_gpu % b == 0)
				bs[nb++] = b;
	} else if (per_gpu % st->batch == 0) {
		bs[nb++] = st->batch;
	}
	return nb;
}

/* The sharding strategies searched on g GPUs. */
static int shard_values(const struct vf_setup *st, unsigned k, int g, int shard_v[MAXV])
{
	int ns = 0;
	if (g == 1) {
		shard_v[ns++] = VF_SHARD_NONE;
	} else if (k & VF_KNOB_BIT(VF_KNOB_SHARD)) {
		/* fsdp and zero3 are the same memory and traffic in the
		 * model: search the one the start names (zero3 by default).
		 * Inference has no gradients or optimizer states: ZeRO-1/2
		 * shard nothing there, the same rows as ddp. */
		int last = st->mode == VF_MODE_INFER ? VF_SHARD_DDP : VF_SHARD_ZERO2;
		for (int sh = VF_SHARD_DDP; sh <= last; sh++)
			ns = add_unique(shard_v, ns, sh);
		ns = add_unique(shard_v, ns, st->shard == VF_SHARD_FSDP ? VF_SHARD_FSDP : VF_SHARD_ZERO3);
	} else {
		shard_v[ns++] = st->shard != VF_SHARD_NONE ? (int)st->shard : VF_SHARD_DDP;
	}
	return ns;
}

/* Evaluates setup s at each micro-batch, ascending; stops at the first
 * whose floor alone overflows unless the search is exhaustive. */
static void search_batches(const struct search_run *sr, struct vf_setup *s, const int64_t *bs, int nb,
			   int64_t per_gpu)
{
	struct vf_search *out = sr->out;
	struct vf_search_result r;
	out->space += (uint64_t)nb;
	for (int bi = 0; bi < nb; bi++) {
		s->batch = bs[bi];
		s->grad_accum = per_gpu / bs[bi];
		eval_ctx(sr->cx, sr->arch, s, sr->gpu, sr->opts->margin, sr->price, &r);
		out->evaluated++;
		if (!out->have_smallest || r.peak_bytes < out->smallest.peak_bytes) {
			out->smallest = r;
			out->have_smallest = true;
		}
		if (!r.fits && !sr->opts->exhaustive && r.floor_bytes > r.limit_bytes)
			break; /* larger b: larger floor */
		if (!counted(sr->opts, out, &r))
			continue;
		r.changes = count_changes(sr->st, s);
		r.invasiveness = invasiveness(sr->st, s);
		keep(out, sr->cap, sr->bucket, &r, sr->opts->sort);
	}
}

/* Every optimizer, quantization, rank and checkpointing value of setup s
 * (GPUs, sharding, precision set) at precision index pi. */
static void search_optimizers(const struct search_run *sr, const struct knob_values *v, struct vf_setup *s,
			      int pi, const int64_t *bs, int nb, int64_t per_gpu)
{
	const struct vf_setup *st = sr->st;
	for (int oi = 0; oi < v->no; oi++) {
		s->optimizer = (enum vf_optimizer)v->opt[oi];
		for (int qi = 0; qi < v->nq; qi++) {
			s->quant = (enum vf_quant)v->quant[qi];
			/* a quantized base runs its other modules in bf16
			 * unless a precision was given (vf_setup_finish) */
			bool qbf16 = s->quant != VF_QUANT_NONE && !(st->given & VF_SETUP_G_PRECISION);
			if (qbf16 && pi > 0)
				continue; /* the same configuration again */
			s->precision = qbf16 ? VF_PREC_BF16 : (enum vf_precision)v->prec[pi];
			for (int ri = 0; ri < v->nr; ri++) {
				s->lora_rank = v->rank[ri];
				if (!(st->given & VF_SETUP_G_LORA_ALPHA))
					s->lora_alpha = s->lora_rank;
				for (int ci = 0; ci < v->nc; ci++) {
					s->grad_ckpt = v->ckpt[ci];
					search_batches(sr, s, bs, nb, per_gpu);
				}
			}
		}
	}
}

/* --- the space spread over threads ---------------------------------------
 * One task is a GPU count, a sharding and a precision (the split layouts
 * one more, the last, started first: the longest): everything inside
 * (optimizer, quantization, rank, checkpointing, micro-batch) runs in one
 * piece, so the pruning of the micro-batch loop is the same. With threads
 * each task fills a list of its own (counts, smallest, top-K) and the lists
 * are merged in the loops' order: keep() over all results in that order
 * is the first K of their stable sort, and a task's list already holds the
 * first K of its part, after equals in their order; so the merge is the
 * list one thread makes. Each thread has an estimate context of its own
 * (the same doubles as any other context or none). */
struct search_task {
	bool split; /* the split layouts (search_split) on up to g GPUs: the last task */
	int g, shard, pi, nb;
	int64_t per_gpu;
	int64_t bs[64];
	struct vf_search part; /* with threads: this task's counts and top list */
	double *bucket;        /* its keep() buckets (NULL: into the search's own) */
};

/* The tasks in the loops' order (GPU count, sharding, precision), then
 * the split layouts on up to maxg GPUs, into t (NULL: counted only);
 * their count. */
static size_t task_list(const struct vf_setup *st, unsigned k, int64_t eff, int maxg,
			const struct knob_values *v, struct search_task *t)
{
	size_t n = 0;
	for (int gi = 0; gi < v->ng; gi++) {
		int g = v->gpus[gi];
		if (eff % g)
			continue; /* the effective batch cannot be split over g GPUs */
		int64_t per_gpu = eff / g, bs[64];
		int nb = micro_batches(st, k, per_gpu, bs);
		if (!nb)
			continue;
		int shard_v[MAXV];
		int ns = shard_values(st, k, g, shard_v);
		for (int si = 0; si < ns; si++)
			for (int pi = 0; pi < v->npr; pi++, n++) {
				if (!t)
					continue;
				t[n] = (struct search_task){.g = g, .shard = shard_v[si], .pi = pi, .nb = nb,
							    .per_gpu = per_gpu};
				memcpy(t[n].bs, bs, sizeof bs);
			}
	}
	if (t)
		t[n] = (struct search_task){.split = true, .g = maxg};
	return n + 1;
}

/* The tasks (task_list) in an array of their size: their count, -1
 * without memory. Caller owns *out; free(). */
static int search_tasks(const struct vf_setup *st, unsigned k, int64_t eff, int maxg,
			const struct knob_values *v, struct search_task **out)
{
	size_t n = task_list(st, k, eff, maxg, v, NULL);
	*out = calloc(n, sizeof **out);
	if (!*out)
		return -1;
	return (int)task_list(st, k, eff, maxg, v, *out);
}

/* One task, into sr->out (its own part when threads run). */
static void search_task_run(const struct search_run *sr, const struct knob_values *v,
			    const struct search_task *t)
{
	if (t->split) {
		search_split(sr->arch, sr->st, sr->gpu, sr->opts, t->g, sr->out, sr->cap, sr->bucket);
		return;
	}
	struct vf_setup s = *sr->st; /* every knob varied is set below or in the loops */
	s.gpus = t->g;
	s.shard = (enum vf_shard)t->shard;
	s.precision = (enum vf_precision)v->prec[t->pi];
	search_optimizers(sr, v, &s, t->pi, t->bs, t->nb, t->per_gpu);
}

/* Threads for ntask tasks: opts->threads, 0 the CPUs online, at most 4. */
static int search_threads(const struct vf_search_opts *opts, int ntask)
{
	long n = opts->threads;
	if (n <= 0) {
		n = sysconf(_SC_NPROCESSORS_ONLN);
		n = n > SEARCH_THREADS_MAX ? SEARCH_THREADS_MAX : n;
	}
	if (n > ntask)
		n = ntask;
	return n > 1 ? (int)n : 1;
}

struct search_pool {
	const struct search_run *sr; /* its cx, out and bucket replaced per task */
	const struct knob_values *v;
	struct search_task *task;
	int ntask;
	atomic_int next;
};

static void *search_worker(void *arg)
{
	struct search_pool *p = arg;
	struct vf_estimate_ctx *cx = vf_estimate_ctx_new(); /* NULL: none (the same answers) */
	vf__estimate_ctx_hold(cx, p->sr->arch, p->sr->gpu, true);
	for (int n; (n = atomic_fetch_add(&p->next, 1)) < p->ntask;) {
		int i = n ? n - 1 : p->ntask - 1; /* the split's, the longest, first */
		struct search_run sr = *p->sr;
		sr.cx = cx;
		sr.out = &p->task[i].part;
		sr.bucket = p->task[i].bucket;
		search_task_run(&sr, p->v, &p->task[i]);
	}
	vf_estimate_ctx_free(cx);
	return NULL;
}

/* The tasks' lists merged into sr->out in the loops' order. */
static void search_merge(const struct search_run *sr, const struct search_task *task, int ntask)
{
	struct vf_search *out = sr->out;
	for (int i = 0; i < ntask; i++) {
		const struct vf_search *p = &task[i].part;
		out->space += p->space;
		out->evaluated += p->evaluated;
		out->fitting += p->fitting;
		out->near += p->near;
		if (p->have_smallest && (!out->have_smallest || p->smallest.peak_bytes < out->smallest.peak_bytes)) {
			out->smallest = p->smallest;
			out->have_smallest = true;
		}
		for (size_t j = 0; j < p->count; j++) /* with the bucket keep() took */
			keep_bucket(out, sr->cap, sr->bucket, &p->results[j], task[i].bucket[j], sr->opts->sort);
	}
}

/* The tasks run on nthreads threads (this one among them) and merged;
 * false when they were not (one thread, no memory): the caller runs them. */
static bool search_spread(const struct search_run *sr, const struct knob_values *v, struct search_task *task,
			  int ntask, int nthreads)
{
	if (nthreads <= 1 || (size_t)ntask * sr->cap > SEARCH_SPREAD_MAX)
		return false;
	bool ok = true;
	for (int i = 0; i < ntask; i++) {
		task[i].bucket = top_new(&task[i].part, sr->cap);
		ok = ok && task[i].bucket;
	}
	struct search_pool p = {sr, v, task, ntask, 0};
	pthread_t th[SEARCH_THREADS_MAX];
	int started = 0;
	for (int i = 1; ok && i < nthreads; i++) /* this thread is the last worker */
		if (pthread_create(&th[started], NULL, search_worker, &p) == 0)
			started++;
	if (ok)
		search_worker(&p);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	if (ok)
		search_merge(sr, task, ntask);
	for (int i = 0; i < ntask; i++)
		vf_search_release(&task[i].part);
	return ok;
}

vf_status vf_search_run(const struct vf_arch *arch, const struct vf_setup *start,
			const struct vf_gpu_spec *gpu, const struct vf_search_opts *opts,
			struct vf_search *out, struct vf_error *err)
{
	memset(out, 0, sizeof *out);
	if (!gpu)
		return vf_error_set(err, VF_EUSAGE, "search: no GPU to fit");
	if (!(opts->margin >= 0 && opts->margin < 1))
		return vf_error_set(err, VF_EUSAGE, "--margin %g: expected a fraction from 0 to 0.99",
				    opts->margin);
	double t0 = now_seconds();
	size_t cap = opts->top ? opts->top : 1;
	double *bucket = top_new(out, cap); /* keep's time buckets */
	if (!bucket)
		return vf_error_set(err, VF_ENOMEM, "search: out of memory");
	unsigned k = opts->knobs;
	const struct vf_setup *st = start;
	int64_t eff = st->batch * st->grad_accum * st->gpus; /* samples per optimizer step */
	out->effective_batch = eff;
	double price = opts->price_usd_hour;

	/* one model on one GPU throughout: the estimates share a context
	 * (the same answers; without memory for it, none) */
	struct vf_estimate_ctx *cx = vf_estimate_ctx_new();
	/* both const for the whole search, which reads no phase of an estimate */
	vf__estimate_ctx_hold(cx, arch, gpu, true);
	eval_ctx(cx, arch, st, gpu, opts->margin, price, &out->start);
	out->evaluated++;

	int maxg = opts->max_gpus > 0 ? opts->max_gpus : st->gpus;
	struct knob_values v;
	knob_values_fill(st, k, maxg, &v);
	const struct search_run sr = {cx, arch, st, gpu, opts, price, out, cap, bucket};
	struct search_task *task = NULL;
	int ntask = search_tasks(st, k, eff, maxg, &v, &task);
	if (ntask < 0) {
		vf_estimate_ctx_free(cx);
		vf_search_release(out);
		return vf_error_set(err, VF_ENOMEM, "search: out of memory");
	}
	if (!search_spread(&sr, &v, task, ntask, search_threads(opts, ntask)))
		for (int i = 0; i < ntask; i++) /* this thread, in the loops' order */
			search_task_run(&sr, &v, &task[i]);
	free(task);
	vf_estimate_ctx_free(cx);
	out->start.changes = 0;
	out->seconds = now_seconds() - t0;
	return VF_OK;
}

void vf_search_release(struct vf_search *s)
{
	if (!s)
		return;
	free(s->results);
	s->results = NULL;
	s->count = 0;
}
