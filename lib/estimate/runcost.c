/* runcost.c - whole-run time and cost, data-parallel communication, and the
 * MFU a published run implies (runcost.h). Formulas one term per line. */
#include "vramfit/estimate/runcost.h"

#include "nccl.h"

#include <string.h>

#include <ctype.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>

/* Ring collectives over N GPUs, B bytes (each GPU sends, and receives, the
 * same amount; nccl-tests' "bus bandwidth" is defined on these volumes):
 *   all-reduce      2 (N-1)/N x B
 *   reduce-scatter    (N-1)/N x B
 *   all-gather        (N-1)/N x B */
static double ring_factor(int n) { return n > 1 ? (double)(n - 1) / n : 0.0; }

/* Backward share of a training step's compute: backward = 2 x forward
 * (weight and activation gradients), so 2/3 of the step; with gradient
 * checkpointing the recompute forward runs inside the backward: 3/4. */
static double backward_share(bool grad_ckpt) { return grad_ckpt ? 0.75 : 2.0 / 3.0; }

/* DDP's buckets of a gradient of g bytes: count and bytes each. */
static double buckets(double g, double *each)
{
	double count = ceil(g / VF_RUNCOST_DDP_BUCKET_BYTES);
	if (count < 1)
		count = 1;
	*each = g / count;
	return count;
}


/* ZeRO-3 / FSDP on link l, per micro-step: each layer's parameters
 * gathered for its forward (prefetched behind the layer before; the first
 * one exposed) and for its backward, its gradients reduce-scattered,
 * both behind the backward; the last reduce-scatter comes after the
 * backward's last layer and is waited for before anything else runs
 * (FSDP2's root post-backward callback makes the compute stream wait for
 * its event; DeepSpeed ZeRO-3 synchronises its reduction stream at the
 * end of the backward): exposed, as DDP's last bucket. Returns the
 * exposed seconds of one optimizer step; *total its communication. */
static double fsdp_nccl(const struct vf_comm_in *in, const struct vf__link *l, double *total)
{
	int n = in->gpus;
	double layers = in->layers >= 1 ? in->layers : 1;
	double accum = in->grad_accum > 0 ? (double)in->grad_accum : 1;
	double micro = in->compute_seconds / accum;
	double bwd = backward_share(in->grad_ckpt), ov = vf__nccl_overlap_of(VF__OV_FSDP) * l->overlap;
	double ag = vf__nccl_seconds(l, VF__ALL_GATHER, n, in->param_bytes / layers, layers);
	double rs = vf__nccl_seconds(l, VF__REDUCE_SCATTER, n, in->grad_bytes / layers, layers);
	double first = vf__nccl_seconds(l, VF__ALL_GATHER, n, in->param_bytes / layers, 1);
	double last = vf__nccl_seconds(l, VF__REDUCE_SCATTER, n, in->grad_bytes / layers, 1);
	double exp_f = fmax(first, ag - ov * micro * (1 - bwd)); /* forward gathers */
	double exp_b = fmax(last, ag + rs - ov * micro * bwd);   /* backward gathers + reduce-scatters */
	*total = accum * (2 * ag + rs);
	return accum * (exp_f + exp_b);
}

/* The bytes ZeRO-1/2 all-gather after the optimizer step: the updated
 * parameters, which LoRA's frozen base is not. */
static double updated(const struct vf_comm_in *in)
{
	return in->updated_bytes > 0 ? in->updated_bytes : in->param_bytes;
}

/* DDP and ZeRO-1/2 on link l, once per optimizer step: gradients reduced
 * bucket by bucket behind the last micro-step's backward (the last
 * bucket after it); ZeRO-1/2 then all-gather the updated parameters. */
static double dp_nccl(const struct vf_comm_in *in, const struct vf__link *l, double *total)
{
	int n = in->gpus;
	double accum = in->grad_accum > 0 ? (double)in->grad_accum : 1;
	double window = in->compute_seconds / accum * backward_share(in->grad_ckpt);
	double each, count = buckets(in->grad_bytes, &each);
	bool zero = in->shard == VF_SHARD_ZERO1 || in->shard == VF_SHARD_ZERO2;
	enum vf__coll c = zero ? VF__REDUCE_SCATTER : VF__ALL_REDUCE;
	double red = vf__nccl_seconds(l, c, n, each, count);
	double tail = vf__nccl_seconds(l, c, n, each, 1);
	double ov = vf__nccl_overlap_of(zero ? VF__OV_ZERO2 : VF__OV_DDP) * l->overlap;
	double gather = zero ? vf__nccl_seconds(l, VF__ALL_GATHER, n, updated(in), 1) : 0;
	*total = red + gather;
	return fmax(tail, red - ov * window) + gather;
}

/* link: in->gpu's for in->gpus GPUs (vf__nccl_link), or NULL */
static void comm_nccl(const struct vf_comm_in *in, const struct vf__link *link, struct vf_comm *out)
{
	struct vf__link l;
	if (link)
		l = *link;
	else
		vf__nccl_link(in->gpu, in->gpus, &l);
	if (!l.known) {
		out->known = false;
		return;
	}
	memcpy(out->link, l.name, sizeof out->link);
	double r = ring_factor(in->gpus), total = 0, exposed;
	double accum = in->grad_accum > 0 ? (double)in->grad_accum : 1;
	if (in->shard == VF_SHARD_ZERO3 || in->shard == VF_SHARD_FSDP) {
		exposed = fsdp_nccl(in, &l, &total);
		out->bytes_per_gpu = accum * r * (2 * in->param_bytes + in->grad_bytes);
	} else {
		exposed = dp_nccl(in, &l, &total);
		bool zero = in->shard == VF_SHARD_ZERO1 || in->shard == VF_SHARD_ZERO2;
		out->bytes_per_gpu = zero ? r * (in->grad_bytes + updated(in)) : 2 * r * in->grad_bytes;
	}
	if (exposed > total)
		exposed = total;
	out->seconds = total;
	out->exposed_seconds = exposed;
	out->hidden_seconds = total - exposed;
	/* the hidden collectives' CTAs hold share of the SMs the compute
	 * they overlap would have run on: that compute is done later */
	double share = vf__nccl_sm_share(&l, in->gpu);
	out->interference_seconds = out->hidden_seconds * share; /* s */
}

static void comm_link(const struct vf_comm_in *in, const struct vf__link *link, struct vf_comm *out);

void vf_runcost_comm(const struct vf_comm_in *in, struct vf_comm *out)
{
	comm_link(in, NULL, out);
}

/* vf_runcost_comm, NCCL over link when the caller has it (else NULL) */
static void comm_link(const struct vf_comm_in *in, const struct vf__link *link, struct vf_comm *out)
{
	out->bytes_per_gpu = 0;
	out->seconds = 0;
	out->hidden_seconds = 0;
	out->exposed_seconds = 0;
	out->interference_seconds = 0;
	out->known = true;
	out->link[0] = 0;
	int n = in->gpus;
	if (n <= 1 || in->shard == VF_SHARD_NONE)
		return;
	if (in->gpu) {
		comm_nccl(in, link, out);
		return;
	}
	if (in->link_gbs <= 0) {
		out->known = false;
		return;
	}
	double r = ring_factor(n);
	int64_t accum = in->grad_accum > 0 ? in->grad_accum : 1;
	double bus = in->link_gbs * 1e9 * VF_RUNCOST_BUS_EFFICIENCY; /* bytes/s */
	double micro = in->compute_seconds / (double)accum;             /* s per micro-step */
	double window, tail;
	switch (in->shard) {
	case VF_SHARD_ZERO3:
	case VF_SHARD_FSDP:
		/* Every micro-step: parameters gathered for the forward and again
		 * for the backward, gradients reduce-scattered. Prefetch hides them
		 * behind the micro-step's whole compute. */
		out->bytes_per_gpu = (double)accum * (r * in->param_bytes   /* forward all-gather */
						      + r * in->param_bytes /* backward all-gather */
						      + r * in->grad_bytes); /* reduce-scatter */
		window = in->compute_seconds;
		tail = 0;
		break;
	case VF_SHARD_ZERO1:
	case VF_SHARD_ZERO2:
		/* Once per optimizer step: gradients reduce-scattered during the
		 * last micro-step's backward, updated parameters all-gathered after
		 * the optimizer step (not hidden). */
		out->bytes_per_gpu = r * in->grad_bytes   /* reduce-scatter */
				     + r * updated(in);   /* all-gather of updated shards */
		window = micro * backward_share(in->grad_ckpt);
		tail = r * updated(in) / bus;
		break;
	default: /* DDP: all-reduce once per optimizer step (no_sync before) */
		out->bytes_per_gpu = 2.0 * r * in->grad_bytes; /* ring all-reduce */
		window = micro * backward_share(in->grad_ckpt);
		{
			double last = in->grad_bytes < VF_RUNCOST_DDP_BUCKET_BYTES
					      ? in->grad_bytes
					      : VF_RUNCOST_DDP_BUCKET_BYTES;
			tail = 2.0 * r * last / bus; /* the last bucket, after backward */
		}
		break;
	}
	out->seconds = out->bytes_per_gpu / bus;
	double hideable = out->seconds - tail;
	double hidden = fmin(hideable, VF_RUNCOST_OVERLAP * window);
	if (hidden < 0)
		hidden = 0;
	out->hidden_seconds = hidden;
	out->exposed_seconds = out->seconds - hidden;
}

double vf_runcost_grad_elem_bytes(const struct vf_setup *s)
{
	if (s->mode == VF_MODE_LORA)
		return 4; /* peft keeps adapters (and their gradients) in fp32 */
	return s->precision == VF_PREC_BF16 ? 2 : 4;
}

double vf_runcost_param_elem_bytes(const struct vf_setup *s)
{
	switch (s->quant) {
	case VF_QUANT_INT8:
	case VF_QUANT_FP8:
		return 1;
	case VF_QUANT_INT4:
	case VF_QUANT_NF4:
		return 0.5;
	default:
		break;
	}
	if (s->mode == VF_MODE_LORA || s->mode == VF_MODE_INFER)
		return 2; /* a frozen bf16 base */
	return s->precision == VF_PREC_BF16 ? 2 : 4;
}

double vf_runcost_step_seconds(const struct vf_estimate *e, const struct vf_setup *s,
			       const struct vf_gpu_spec *gpu, struct vf_comm *comm)
{
	struct vf_comm c;
	if (!comm)
		comm = &c;
	memset(comm, 0, sizeof *comm);
	comm->known = true;
	if (!(e->step_seconds > 0))
		return -1;
	if (e->parts.compute > 0) { /* an LLM estimate: its communication is in its step */
		comm->bytes_per_gpu = e->parts.comm_bytes;
		comm->seconds = e->parts.comm_total;
		comm->exposed_seconds = e->parts.comm_exposed;
		comm->hidden_seconds = e->parts.comm_total - e->parts.comm_exposed;
		comm->interference_seconds = e->parts.comm_interference;
		comm->known = strcmp(e->parts.link, "unknown") != 0;
		/* snprintf's copy, without its cost (5 % of a fit search) */
		size_t n = strnlen(e->parts.link, sizeof comm->link - 1);
		memcpy(comm->link, e->parts.link, n);
		comm->link[n] = '\0';
		return e->step_seconds;
	}
	struct vf_comm_in ci = {
		.shard = s->shard,
		.gpus = s->gpus,
		.grad_accum = s->grad_accum,
		.grad_bytes = (double)e->trainable_params * vf_runcost_grad_elem_bytes(s),
		.param_bytes = (double)e->params * vf_runcost_param_elem_bytes(s),
		.updated_bytes = (double)e->trainable_params * (s->mode == VF_MODE_FULL
									? vf_runcost_param_elem_bytes(s)
									: vf_runcost_grad_elem_bytes(s)),
		.link_gbs = gpu ? gpu->interconnect_gbs : -1,
		.compute_seconds = e->step_seconds,
		.grad_ckpt = s->grad_ckpt,
	};
	if (s->mode == VF_MODE_INFER)
		return e->step_seconds; /* no gradients to reduce */
	vf_runcost_comm(&ci, comm);
	return e->step_seconds + comm->exposed_seconds + comm->interference_seconds; /* s */
}

bool vf_runcost_parse_count(const char *s, double *out)
{
	char *end;
	if (!s)
		return false;
	double v = strtod(s, &end);
	if (end == s || !(v > 0))
		return false;
	double mul = 1;
	if (*end) {
		switch (toupper((unsigned char)*end)) {
		case 'K': mul = 1e3; break;
		case 'M': mul = 1e6; break;
		case 'B': case 'G': mul = 1e9; break;
		case 'T': mul = 1e12; break;
		default: return false;
		}
		if (end[1])
			return false;
	}
	*out = v * mul;
	return *out < 1e18;
}

vf_status vf_runcost_run(const struct vf_run_in *in, struct vf_run *out, struct vf_error *err)
{
	out->steps = 0;
	out->tokens = 0;
	out->seconds = out->hours = out->gpu_hours = 0;
	out->cost_usd = -1;
	if (in->tokens_per_step <= 0)
		return vf_error_set(err, VF_EUSAGE, "run: a step processes no tokens");
	if (!(in->step_seconds > 0))
		return vf_error_set(err, VF_EUSAGE, "run: step time unknown");
	if (in->steps > 0) {
		out->steps = in->steps;
	} else if (in->tokens > 0) {
		double st = ceil(in->tokens / (double)in->tokens_per_step);
		if (st > 9e18)
			return vf_error_set(err, VF_EUSAGE, "--tokens %.3g: too many steps", in->tokens);
		out->steps = (int64_t)st;
	} else {
		return vf_error_set(err, VF_EUSAGE, "run: give --tokens T or --steps S");
	}
	int gpus = in->gpus > 0 ? in->gpus : 1;
	out->tokens = (double)out->steps * (double)in->tokens_per_step; /* tokens */
	out->seconds = (double)out->steps * in->step_seconds;           /* s */
	out->hours = out->seconds / 3600.0;                              /* h */
	out->gpu_hours = out->hours * gpus;                              /* GPU-h */
	if (in->price_usd_hour >= 0)
		out->cost_usd = out->gpu_hours * in->price_usd_hour;     /* $ */
	return VF_OK;
}

double vf_runcost_flops_per_token(double params, double coeff, int64_t layers, int64_t hidden,
				  int64_t seq)
{
	double f = coeff * params; /* matmuls: 2 FLOPs per weight, x3 with backward */
	if (layers > 0 && hidden > 0 && seq > 0)
		f += 2.0 * coeff * (double)layers * (double)hidden * (double)seq; /* QK^T and AV */
	return f;
}

double vf_runcost_mfu(double flops, int gpus, double peak_tflops, double seconds)
{
	if (!(flops > 0) || gpus <= 0 || !(peak_tflops > 0) || !(seconds > 0))
		return -1;
	return flops / ((double)gpus * peak_tflops * 1e12 * seconds);
}

double vf_runcost_seconds_at_mfu(double flops, int gpus, double peak_tflops, double mfu)
{
	if (!(flops > 0) || gpus <= 0 || !(peak_tflops > 0) || !(mfu > 0))
		return -1;
	return flops / ((double)gpus * peak_tflops * 1e12 * mfu);
}

double vf_runcost_tokens_at_mfu(double mfu, int gpus, double peak_tflops, double seconds,
				double flops_per_token)
{
	if (!(mfu > 0) || gpus <= 0 || !(peak_tflops > 0) || !(seconds > 0) ||
	    !(flops_per_token > 0))
		return -1;
	return mfu * (double)gpus * peak_tflops * 1e12 * seconds / flops_per_token;
}

void vf_mfu_policy_defaults(struct vf_mfu_policy *p)
{
	p->max_mfu = 0.70;
	p->min_mfu = 0.05;
	p->tuned_floor_fraction = 0.5;
	p->default_mfu = 0.40;
}

enum vf_verdict vf_runcost_judge(double mfu, double expected_lo, const struct vf_mfu_policy *p)
{
	if (!(mfu > 0))
		return VF_VERDICT_UNKNOWN;
	if (mfu > p->max_mfu)
		return VF_VERDICT_TOO_HIGH;
	if (mfu < p->min_mfu)
		return VF_VERDICT_TOO_LOW;
	if (expected_lo > 0 && mfu < p->tuned_floor_fraction * expected_lo)
		return VF_VERDICT_BELOW_STACK;
	return VF_VERDICT_PLAUSIBLE;
}

const char *vf_verdict_name(enum vf_verdict v)
{
	switch (v) {
	case VF_VERDICT_PLAUSIBLE:
		return "plausible";
	case VF_VERDICT_TOO_HIGH:
		return "too-high";
	case VF_VERDICT_TOO_LOW:
		return "too-low";
	case VF_VERDICT_BELOW_STACK:
		return "below-stack";
	default:
		return "unknown";
	}
}

static const char *const assumptions[] = {
	"multi-GPU: collectives as NCCL runs them per link class (NVLink 2-5, PCIe with or without "
	"peer-to-peer, InfiniBand/Ethernet beyond 8 GPUs): nccl-tests bus bandwidth and latency "
	"(data/estimate/steptime.json); a GPU outside the classes at 40% of its interconnect figure",
	"DDP: ring all-reduce of the gradients in 25 MiB buckets, 2(N-1)/N x gradient bytes, once per "
	"optimizer step, hidden behind up to 80% of the last micro-step's backward except the last "
	"bucket",
	"ZeRO-1/2: gradients reduce-scattered and updated parameters all-gathered once per step; "
	"ZeRO-3/FSDP: each layer's parameters all-gathered for its forward and backward and its "
	"gradients reduce-scattered every micro-step, in 16 bits under mixed precision, hidden behind "
	"up to 80% of the forward and backward passes (the first gather and the last reduce-scatter "
	"exposed); without peer-to-peer "
	"(GeForce) a quarter of that overlap; nothing hides behind the optimizer step, which waits for "
	"the last reduce-scatter or all-reduce",
	"overlapped collectives slow the compute: NCCL runs one CTA per channel, each holding an SM, "
	"so hidden communication costs hidden x channels / SMs of compute (channels per link and SM "
	"counts in data/estimate/steptime.json; memory-bandwidth contention not counted)",
	"whole run: steps = tokens / (batch x seq x grad-accum x GPUs), rounded up; cost = "
	"$/GPU-hour x GPUs x hours (no start-up, evaluation or checkpoint time)",
	NULL,
};

const char *const *vf_runcost_assumptions(void) { return assumptions; }

void vf__estimate_add_comm(const struct vf_setup *su, const struct vf_gpu_spec *gpu,
			   double layers, struct vf_estimate *e)
{
	vf__estimate_add_comm_link(su, gpu, NULL, layers, e);
}

/* The compute a step's data-parallel collectives can hide behind: its
 * forward and backward passes (with their exposed activation-offload
 * copies), every micro-step's. Not the optimizer step: the backward's
 * last collective finishes before it (FSDP2's root post-backward callback
 * makes the compute stream wait for the last reduce-scatter, FSDP1's
 * waits for its post-backward stream, DDP's reducer waits for its
 * all-reduces when the backward ends) and the next step's first gather
 * waits for the parameters it updates; nor its paged states (migrated
 * during the step), the per-step host overhead (zero_grad, the loss
 * scalar, after the backward), CPU offload's host step or its copies,
 * exposed or hidden behind the passes. */
static double overlap_window(double step, const struct vf_step_parts *p)
{
	double w = step                /* one GPU's step, before communication */
		   - p->optimizer      /* the optimizer step (+ GradScaler) */
		   - p->paging         /* paged states, in the optimizer step */
		   - p->fixed          /* per-step host overhead */
		   - p->host_optimizer /* CPU offload: the host's step */
		   - p->cpu_offload    /* CPU offload: copies not hidden */
		   - p->cpu_offload_hidden; /* and those hidden: each shard's copy up
					     * precedes its all-gather, one chain in the
					     * same window (it hid both, so batch 4 gave
					     * a shorter step than batch 1) */
	return w > 0 ? w : 0;  /* s */
}

void vf__estimate_add_comm_link(const struct vf_setup *su, const struct vf_gpu_spec *gpu,
				const struct vf__link *link, double layers, struct vf_estimate *e)
{
	struct vf_step_parts *p = &e->parts;
	p->comm_total = p->comm_exposed = p->comm_interference = p->comm_bytes = 0;
	p->link[0] = 0;
	double t = e->step_seconds;
	if (!(t > 0) || su->mode == VF_MODE_INFER || su->gpus <= 1 || su->shard == VF_SHARD_NONE)
		return;
	double gb = vf_runcost_grad_elem_bytes(su), pb = vf_runcost_param_elem_bytes(su);
	if (su->shard != VF_SHARD_DDP && su->precision != VF_PREC_FP32 &&
	    (su->shard != VF_SHARD_FSDP || su->fsdp_mixed_precision)) {
		/* sharded under mixed precision (FSDP MixedPrecision param_dtype
		 * and reduce_dtype bf16: the stack mechanism fsdp_mixed_precision,
		 * as the memory's gathered units and whole gradients, estimate.c
		 * fsdp_units; DeepSpeed's bf16/fp16 params): gathers and reductions
		 * in 16 bits. FSDP without it gathers and reduces the fp32 units
		 * autocast computes from. */
		pb = pb > 2 ? 2 : pb;
		gb = su->mode == VF_MODE_FULL && gb > 2 ? 2 : gb;
	}
	struct vf_comm_in ci = {
		.shard = su->shard,
		.gpus = su->gpus,
		.grad_accum = su->grad_accum,
		.grad_bytes = (double)e->trainable_params * gb,
		.param_bytes = (double)e->params * pb,
		.updated_bytes = (double)e->trainable_params * (su->mode == VF_MODE_FULL ? pb : gb),
		.link_gbs = gpu ? gpu->interconnect_gbs : -1,
		.compute_seconds = overlap_window(t, p),
		.grad_ckpt = su->grad_ckpt,
		.gpu = gpu,
		.layers = layers,
	};
	struct vf_comm c;
	comm_link(&ci, link, &c);
	if (!c.known) {
		snprintf(p->link, sizeof p->link, "unknown");
		return;
	}
	memcpy(p->link, c.link, sizeof p->link);
	p->comm_total = c.seconds;
	p->comm_exposed = c.exposed_seconds;
	p->comm_bytes = c.bytes_per_gpu;
	p->comm_interference = c.interference_seconds;
	double nt = t + c.exposed_seconds + c.interference_seconds; /* s */
	e->step_seconds = nt;
	e->tokens_per_second *= t / nt;
	e->mfu *= t / nt;
}
