/* steptime.c - the step time of an LLM step, kernel by kernel (steptime.h):
 *
 *   GEMM       max(FLOPs / (rate x eff_gen x mn/(mn + tile)),
 *                  bytes / (bandwidth x bw_eff)) + kernel_gpu_s
 *              (a roofline; small outputs fill few tiles: LoRA's rank-r
 *              products, MoE experts on a few tokens); an int8 base runs
 *              LLM.int8 at a share of the rate;
 *   attention  flash / mem-efficient SDPA: FLOPs / (rate x attn_eff_gen),
 *              backward 2.5x; the share by sequence length, head dimension
 *              and mask where a kernel benchmark gives it (by_length:
 *              interpolated in log2(seq) and in head dim, clamped at the
 *              ends), else the generation's one share; eager and math: two
 *              batched GEMMs and the softmax (+ mask, dropout) over the
 *              scores at bandwidth;
 *   elementwise  norms, activations, rotary, residuals, casts: their bytes
 *              at bandwidth, backward twice the forward (compile: fused);
 *   dequant    a quantized base dequantized before its GEMMs in the
 *              forward, again in the backward (and the recompute): its
 *              bytes at the dequant kernel's share of the bandwidth;
 *   launches   each phase takes max(device time, kernels x launch_s): a
 *              small model waits on the host, a large one on the GPU; the
 *              host's speed per generation's typical machine scales it;
 *   MoE        transformers' eager loop over experts: per expert its
 *              GEMMs on the tokens routed to it and the loop's host
 *              synchronisations (the test on the expert index, three
 *              indexings by a 0-d CUDA tensor that call item(),
 *              torch.where's nonzero; one nonzero per layer), so host and
 *              device time add up; in the
 *              backward the gathered tokens' gradient is a full-size
 *              zero-filled tensor per expert, summed by autograd;
 *   recompute  checkpointing runs each layer's forward again in backward;
 *              non-reentrant checkpointing's Python machinery is host time
 *              in the passes: per saved tensor the pack hook in the
 *              forward, the recompute's pack hook (detach, dict store),
 *              the unpack hook in the backward; per checkpointed layer the
 *              region's work (frame, autocast and hook contexts, early
 *              stop) and the RNG state stash and restore;
 *   optimizer  max(the passes optstep.c counts from the optimizer's code
 *              at optimizer_bandwidth, its kernels (foreach launches by
 *              multi_tensor_apply's chunking, or a per-tensor loop's) x
 *              optimizer_launch_s on the host);
 *              bitsandbytes' 8-bit kernels at a share of it, a Python
 *              loop per tensor; fp16's GradScaler passes and sync;
 *              clip_grad_norm_ (--grad-clip): three passes over the
 *              gradients, launches per tensor (torch 1.x) or grouped;
 *   offload    activation offload copies over PCIe, partly hidden;
 *   paging     paged optimizer states beyond the card migrated in for
 *              the optimizer step while others go out (PCIe is duplex),
 *              every step (unified memory);
 *   CPU offload  (--offload) the copies beside a pass hide behind up to
 *              cpu_offload_overlap of it (FSDP's CPUOffloadPolicy copies
 *              each shard up before its all-gather, prefetched, and its
 *              gradient down after the reduce-scatter, from pinned memory;
 *              DeepSpeed's ZeRO-Offload copies each gradient down on a
 *              side stream from the backward's reduction hooks); what is
 *              copied after the host's optimizer step is exposed
 *              (DeepSpeed copies the updated partition up once the
 *              CPU Adam step is done); the step itself runs on the host
 *              at its memory bandwidth, the GPU idle;
 *   fixed      step_s per optimizer step.
 * Per generation the GEMM and bandwidth shares are a kernel-level
 * benchmark's (data/estimate/steptime.json says which) with the time per
 * FLOP and per byte hopper's fit leaves beyond hopper's benchmark added,
 * not scaled by the GPU, scaled by its host (model_share); a part whose
 * memory type differs from its generation's (Ampere's GDDR6 cards, the
 * A100 80GB's faster HBM2e, against the A100 40GB's HBM2) takes its own
 * device-copy share (memory_type_shares);
 * attention's share is the generation's own (by length where its
 * benchmark gives one).
 * Steady state, no dataloader. */
#include "steptime.h"

#include "vramfit/base/data.h"
#include "vramfit/base/json.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define NGEN 7
static const char *const generations[NGEN + 1] = {"hopper", "blackwell", "ada",    "ampere",
						  "turing", "volta",     "pascal", NULL};

/* Flash / mem-efficient attention's share of the dense rate on one
 * generation: one share, and where a kernel benchmark gives them its
 * forward+backward shares by sequence length (attention_efficiency
 * <gen> by_length), one curve per head dimension and mask. */
#define ATTN_CURVES 6
#define ATTN_POINTS 12
struct attn_curve {
	double head_dim;
	bool causal;
	int n;
	double lseq[ATTN_POINTS];  /* log2 of the sequence lengths, increasing */
	double share[ATTN_POINTS];
};
struct attn_gen {
	double share; /* without a curve or a sequence length */
	int ncurves;
	struct attn_curve c[ATTN_CURVES];
};

/* The constants of data/estimate/steptime.json (loaded once). Per
 * generation: [gen][0] datacenter, [gen][1] GeForce. */
static struct {
	double gemm_eff[NGEN][2];
	struct attn_gen attn[NGEN][2];
	char attn_why[320]; /* the first by_length curve not used, and why ("" none) */
	double bw_eff[NGEN][2];
	double bw_kernel[NGEN]; /* device-copy share of the datasheet bandwidth (serving decode) */
	double gemm_k[NGEN][2], bw_k[NGEN][2]; /* kernel-level shares (benchmarks) */
	struct {
		char id[32];   /* catalog id */
		double kernel; /* its memory type's device-copy share */
	} bw_gpu[16];          /* parts whose memory differs from their generation's */
	int n_bw_gpu;
	double gemm_k_fp32[NGEN][2], gemm_k_emu[NGEN][2]; /* CUDA-core GEMMs: fp32, emulated bf16 */
	double tf32_rate;      /* TF32 tensor rate / bf16 dense rate (fp32 attention) */
	double fast_fp32_passes; /* TF32 products per fp32 product in 3xTF32 (fp32 attention) */
	double gemm_fixed_s;   /* s per GEMM FLOP in the model beyond the kernel's, on every GPU */
	double bw_fixed_s;     /* s per memory-bound byte beyond the kernel's, on every GPU */
	double host[NGEN][2];  /* host time per launch relative to the H200 hosts' */
	double gemm_tile;      /* output elements (m x n) at which a GEMM reaches half its efficiency */
	double gemm_tile_cc[NGEN][2]; /* the same for CUDA-core (SIMT) GEMMs, per generation */
	double int8_rate;      /* LLM.int8 GEMM rate / bf16 rate */
	double dq_eff[4];      /* by enum vf__dequant: the dequant kernel's bandwidth share */
	double opt8_tensor_s;  /* bitsandbytes 8-bit: host s per tensor */
	double opt8_bw;        /* bitsandbytes 8-bit: bandwidth share relative to bw_eff */
	double opt_bw;         /* hopper: datasheet bandwidth share of the optimizer's kernels */
	double opt_launch_s;   /* host s per optimizer kernel (a bare op under no_grad) */
	double scaler_passes, scaler_syncs;
	double clip_passes, clip_tensor_launches, clip_fixed_launches, clip_foreach_launches;
	double compile_elem, compile_kernels, compile_loss;
	double pcie_gbs, paging_ratio, offload_overlap;
	double cpu_offload_overlap; /* share of a pass behind which CPU offload copies hide */
	double host_mem_gbs;   /* host memory bandwidth one GPU's CPU optimizer step reaches */
	double launch_s;       /* host time per kernel launch (PyTorch eager dispatch) */
	double kernel_gpu_s;   /* device time per kernel beyond its work (launch latency, tail) */
	double step_s;         /* per step: Python, zero_grad, loss scalar, optimizer dispatch */
	double sync_s;         /* one host-device synchronisation */
	double moe_expert_syncs; /* MoE eager loop: synchronisations per expert, forward */
	double moe_layer_syncs;  /* and per MoE layer */
	double moe_amp_casts;    /* and kernels per expert when its weights are fp32 under autocast */
	double bwd_kernels;    /* backward kernels per forward kernel */
	double ckpt_pack_s, ckpt_recompute_s, ckpt_unpack_s; /* checkpoint: host s per saved tensor */
	double ckpt_region_s, ckpt_rng_s; /* and per checkpointed layer */
	double lcpp_kernels_q, lcpp_kernels_f16; /* llama.cpp decode: kernels per layer */
	double lcpp_gap_graphs, lcpp_gap_eager;  /* llama.cpp decode: s per kernel */
	double lcpp_sync_s;    /* llama.cpp over several GPUs: s per cross-device copy and wait */
	double lcpp_graph_build; /* llama.cpp before graph reuse: host s per layer per token */
	double vllm_kernels;   /* vLLM decode: kernels per layer */
	double vllm_host_step; /* vLLM decode: host work per step, one sequence, s */
	double vllm_host_seq;  /* and per further running sequence, s */
} K;
static pthread_once_t constants_once = PTHREAD_ONCE_INIT; /* K read once, for every thread */

static double num(const cJSON *o, const char *key, double fallback)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (cJSON_IsObject(v))
		v = cJSON_GetObjectItemCaseSensitive(v, "value");
	return cJSON_IsNumber(v) && v->valuedouble >= 0 ? v->valuedouble : fallback;
}

/* A divisor: only a positive value replaces the fallback. */
static double rate(const cJSON *o, const char *key, double fallback)
{
	double v = num(o, key, fallback);
	return v > 0 ? v : fallback;
}

/* A per-generation table: "<gen>" and "<gen>-geforce" (else "<gen>"),
 * a generation without an entry takes hopper's. */
static void per_generation(const cJSON *c, const char *key, double dst[NGEN][2], double fallback)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, key);
	double hopper = rate(t, "hopper", fallback);
	for (int i = 0; i < NGEN; i++) {
		char g[40];
		dst[i][0] = rate(t, generations[i], hopper);
		snprintf(g, sizeof g, "%s-geforce", generations[i]);
		dst[i][1] = rate(t, g, dst[i][0]);
	}
}

/* The "kernel" shares of a per-generation table, GeForce column as in
 * per_generation; a generation without one keeps its model value. */
static void kernel_shares(const cJSON *c, const char *key, double dst[NGEN][2],
			  const double model[NGEN][2])
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, key);
	for (int i = 0; i < NGEN; i++) {
		char g[40];
		dst[i][0] = rate(cJSON_GetObjectItemCaseSensitive(t, generations[i]), "kernel",
				 model[i][0]);
		snprintf(g, sizeof g, "%s-geforce", generations[i]);
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(t, g);
		dst[i][1] = cJSON_IsObject(e) ? rate(e, "kernel", dst[i][0]) : dst[i][0];
	}
}

/* A per-generation field `field` of `key`'s entries (and their -geforce
 * ones), `fallback`'s value where absent. */
static void kernel_field(const cJSON *c, const char *key, const char *field, double dst[NGEN][2],
			 const double fallback[NGEN][2])
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, key);
	for (int i = 0; i < NGEN; i++) {
		char g[40];
		dst[i][0] = rate(cJSON_GetObjectItemCaseSensitive(t, generations[i]), field, fallback[i][0]);
		snprintf(g, sizeof g, "%s-geforce", generations[i]);
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(t, g);
		dst[i][1] = cJSON_IsObject(e) ? rate(e, field, fallback[i][1]) : fallback[i][1];
	}
}

/* The entries of bandwidth_efficiency that name catalog ids ("gpus") with
 * a "kernel" share: parts whose memory type (GDDR6 against the
 * generation's HBM2e) reaches another share of their datasheet. */
static void memory_type_shares(const cJSON *c)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "bandwidth_efficiency");
	const cJSON *e;
	K.n_bw_gpu = 0;
	cJSON_ArrayForEach(e, t)
	{
		const cJSON *ids = cJSON_GetObjectItemCaseSensitive(e, "gpus");
		double k = rate(e, "kernel", -1);
		const cJSON *id;
		if (!cJSON_IsArray(ids) || !(k > 0))
			continue;
		cJSON_ArrayForEach(id, ids)
		{
			if (!cJSON_IsString(id) || K.n_bw_gpu >= (int)(sizeof K.bw_gpu / sizeof K.bw_gpu[0]))
				continue;
			snprintf(K.bw_gpu[K.n_bw_gpu].id, sizeof K.bw_gpu[0].id, "%s", id->valuestring);
			K.bw_gpu[K.n_bw_gpu++].kernel = k;
		}
	}
}

/* One by_length curve of attention_efficiency: its head dimension, mask
 * and shares by sequence length into *c; NULL, or what is wrong with it. */
static const char *attn_curve_read(const cJSON *o, struct attn_curve *c)
{
	const cJSON *hd = cJSON_GetObjectItemCaseSensitive(o, "head_dim");
	const cJSON *causal = cJSON_GetObjectItemCaseSensitive(o, "causal");
	const cJSON *seq = cJSON_GetObjectItemCaseSensitive(o, "seq");
	const cJSON *share = cJSON_GetObjectItemCaseSensitive(o, "share");
	int n = cJSON_GetArraySize(seq);
	if (!cJSON_IsNumber(hd) || !(hd->valuedouble > 0) || !(hd->valuedouble <= 1024))
		return "head_dim not a number in (0, 1024]";
	if (!cJSON_IsBool(causal))
		return "causal not true or false";
	if (!cJSON_IsArray(seq) || !cJSON_IsArray(share) || n < 1 || n > ATTN_POINTS ||
	    cJSON_GetArraySize(share) != n)
		return "seq and share not arrays of the same length (1 to 12)";
	for (int i = 0; i < n; i++) {
		const cJSON *x = cJSON_GetArrayItem(seq, i), *y = cJSON_GetArrayItem(share, i);
		if (!cJSON_IsNumber(x) || !(x->valuedouble >= 1) || !(x->valuedouble <= 1e7))
			return "a seq not a number in [1, 1e7]";
		if (!cJSON_IsNumber(y) || !(y->valuedouble > 0) || !(y->valuedouble <= 2))
			return "a share not a number in (0, 2]";
		c->lseq[i] = log2(x->valuedouble);
		c->share[i] = y->valuedouble;
		if (i > 0 && !(c->lseq[i] > c->lseq[i - 1]))
			return "seq not increasing";
	}
	c->head_dim = hd->valuedouble;
	c->causal = cJSON_IsTrue(causal);
	c->n = n;
	return NULL;
}

/* An entry's by_length curves into a (its share kept); the first curve
 * not used and why in why (`key` names the entry), else why unchanged. */
static void attn_curves_read(const cJSON *e, const char *key, struct attn_gen *a, char *why,
			     size_t size)
{
	int idx = 0;
	const cJSON *o;
	a->ncurves = 0;
	cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(e, "by_length"))
	{
		_Static_assert(ATTN_CURVES == 6, "the message says 6");
		const char *bad = a->ncurves >= ATTN_CURVES ? "more than 6 curves"
							     : attn_curve_read(o, &a->c[a->ncurves]);
		if (!bad)
			a->ncurves++;
		else if (!why[0])
			snprintf(why, size,
				 "estimate/steptime.json: attention_efficiency.%s.by_length[%d]: %s "
				 "(the curve not used: the entry's other curves and its one share stand)",
				 key, idx, bad);
		idx++;
	}
}

/* The entry of attention_efficiency for generation i (GeForce: gf), its
 * key in name: "<gen>-geforce", else "<gen>", else "hopper". */
static const cJSON *attn_entry(const cJSON *t, int i, int gf, char *name, size_t size)
{
	snprintf(name, size, gf ? "%s-geforce" : "%s", generations[i]);
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(t, name);
	if (!cJSON_IsObject(e) && gf) {
		snprintf(name, size, "%s", generations[i]);
		e = cJSON_GetObjectItemCaseSensitive(t, name);
	}
	if (!cJSON_IsObject(e)) {
		snprintf(name, size, "hopper");
		e = cJSON_GetObjectItemCaseSensitive(t, name);
	}
	return e;
}

/* attention_efficiency: each generation's share (per_generation's rules)
 * and its by_length curves; a "-geforce" entry has its own (none without
 * by_length), else the generation's; a generation without an entry
 * takes hopper's. */
static void attention_load(const cJSON *c)
{
	double share[NGEN][2];
	per_generation(c, "attention_efficiency", share, 0.6);
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "attention_efficiency");
	K.attn_why[0] = 0;
	for (int i = 0; i < NGEN; i++)
		for (int gf = 0; gf < 2; gf++) {
			struct attn_gen *a = &K.attn[i][gf];
			char name[40];
			const cJSON *e = attn_entry(t, i, gf, name, sizeof name);
			a->share = share[i][gf];
			attn_curves_read(e, name, a, K.attn_why, sizeof K.attn_why);
		}
}

/* a + t (b - a) for t in [0, 1], kept within [min(a, b), max(a, b)]: in
 * doubles 2 + (1e-17 - 2) is 0, below both (a fuzz finding). */
static double between(double a, double b, double t)
{
	double v = a + t * (b - a), lo = a < b ? a : b, hi = a < b ? b : a;
	return t >= 1 ? b : v < lo ? lo : v > hi ? hi : v;
}

/* One curve's share at log2(seq): linear between its points, its first
 * and last share beyond them. */
static double attn_curve_at(const struct attn_curve *c, double lseq)
{
	if (lseq <= c->lseq[0])
		return c->share[0];
	for (int i = 1; i < c->n; i++)
		if (lseq <= c->lseq[i]) {
			double t = (lseq - c->lseq[i - 1]) / (c->lseq[i] - c->lseq[i - 1]);
			return between(c->share[i - 1], c->share[i], t);
		}
	return c->share[c->n - 1];
}

/* Flash / mem-efficient attention's share for a layer: its generation's
 * curves of the layer's mask (else all of them) at its sequence length,
 * linear in head dimension between the two nearest curves (the nearest
 * beyond them); the one share without a curve or a length. */
static double attn_share(const struct attn_gen *a, const struct vf__layer_work *l)
{
	if (a->ncurves == 0 || !(l->attn_seq > 0))
		return a->share;
	bool masked = false;
	for (int i = 0; i < a->ncurves; i++)
		masked |= a->c[i].causal == l->attn_causal;
	const struct attn_curve *lo = NULL, *hi = NULL;
	double hd = l->attn_head_dim;
	for (int i = 0; i < a->ncurves; i++) {
		const struct attn_curve *c = &a->c[i];
		if (masked && c->causal != l->attn_causal)
			continue;
		if (c->head_dim <= hd && (!lo || c->head_dim > lo->head_dim))
			lo = c;
		if (c->head_dim >= hd && (!hi || c->head_dim < hi->head_dim))
			hi = c;
	}
	double ls = log2(l->attn_seq);
	if (!lo || !hi || hi->head_dim == lo->head_dim)
		return attn_curve_at(lo ? lo : hi, ls);
	double t = (hd - lo->head_dim) / (hi->head_dim - lo->head_dim);
	return between(attn_curve_at(lo, ls), attn_curve_at(hi, ls), t);
}

double vf__steptime_attn_share(const cJSON *entry, double share, double seq, double head_dim,
			       bool causal, char *why, size_t size)
{
	struct attn_gen a = {.share = share};
	struct vf__layer_work l = {.attn_seq = seq, .attn_head_dim = head_dim, .attn_causal = causal};
	char none[1];
	if (!why || !size)
		why = none, size = sizeof none;
	why[0] = 0;
	attn_curves_read(entry, "entry", &a, why, size);
	return attn_share(&a, &l);
}

/* The GPU's own memory-bound kernel share (memory_type_shares), else -1. */
static double gpu_bw_kernel(const struct vf_gpu_spec *gpu)
{
	if (!gpu || !gpu->id[0])
		return -1;
	for (int i = 0; i < K.n_bw_gpu; i++)
		if (strcmp(K.bw_gpu[i].id, gpu->id) == 0)
			return K.bw_gpu[i].kernel;
	return -1;
}

/* A generation's share in the model: its kernel-level share with the
 * time hopper's fit left beyond hopper's kernel share (fixed_s per FLOP
 * or byte: launch gaps, host bubbles) added as time that does not scale
 * with the GPU; host time, so it scales with the generation's typical
 * host (host_speed). Hopper keeps its fitted value. */
static double model_share(int g, int gf, const double model[NGEN][2], const double kernel[NGEN][2],
			  double fixed_s, double unit_rate)
{
	if (g == 0 || !(fixed_s > 0) || !(unit_rate > 0))
		return model[g][gf];
	return 1 / (1 / kernel[g][gf] + unit_rate * fixed_s * K.host[g][gf]);
}

/* GEMMs on the CUDA cores (fp32 without TF32, emulated bf16): their
 * kernel-level share with the same fixed time per FLOP on every
 * generation, hopper's too (its fitted value is a tensor-core share). */
static double cuda_core_share(int g, int gf, const double kernel[NGEN][2], double unit_rate)
{
	if (!(K.gemm_fixed_s > 0) || !(unit_rate > 0))
		return kernel[g][gf];
	return 1 / (1 / kernel[g][gf] + unit_rate * K.gemm_fixed_s * K.host[g][gf]);
}

/* Attention's dense rate, FLOP/s: the GEMMs' but for fp32 (cuda_core 1),
 * where SDPA runs the memory-efficient kernel (no flash for fp32), whose
 * fp32 products are 3xTF32 on the tensor cores from Ampere on (a GPU
 * with a bf16 rate) and plain FFMA before (steptime.json fp32_matmul). */
static double attention_rate(const struct vf__step_work *w, const struct vf_gpu_spec *gpu)
{
	double bf16 = gpu ? gpu->bf16_tflops : 989.5; /* the H200 when no GPU */
	if ((w->cuda_core != 1 && !w->tf32) || !(bf16 > 0))
		return w->rate_tflops * 1e12;
	/* with TF32 on as well: the kernel's MMA operator is a compile-time
	 * type (OpMultiplyAddFastF32), allow_tf32 is never read there */
	double sgemm = !w->tf32 ? w->rate_tflops * 1e12
		       : gpu && gpu->fp32_tflops > 0 ? gpu->fp32_tflops * 1e12 : 66.9e12;
	double tensor = bf16 * 1e12 * K.tf32_rate / K.fast_fp32_passes;
	return tensor > sgemm ? tensor : sgemm;
}

/* data/estimate/steptime.json, read once for steptime.c and nccl.c
 * (vf__steptime_data), and why its constants are not used when they are
 * not (vf_estimate_constants_fallback, for the estimate's assumptions). */
static struct {
	struct vf_json_doc *doc; /* kept for the process */
	const cJSON *root;
	const char *fallback; /* NULL, or why */
	char why[512];
} D;
static pthread_once_t data_once = PTHREAD_ONCE_INIT;

#define BUILTIN "the built-in H200-fitted values used instead (every generation and link as hopper's " \
		"and the defaults')"

static void data_load(void)
{
	char src[256];
	struct vf_error err = {0};
	if (vf_data_load_doc("estimate/steptime.json", &D.doc, src, sizeof src, &err) != VF_OK) {
		D.root = NULL;
		snprintf(D.why, sizeof D.why, "%s; %s",
			 err.msg[0] ? err.msg : "estimate/steptime.json: unreadable", BUILTIN);
		D.fallback = D.why;
		return;
	}
	D.root = vf_json_doc_root(D.doc);
	static const char *const sections[] = {"constants", "communication"};
	for (int i = 0; i < 2; i++)
		if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(D.root, sections[i]))) {
			snprintf(D.why, sizeof D.why, "%s: no \"%s\" object; %s", src, sections[i], BUILTIN);
			D.fallback = D.why;
		}
}

const cJSON *vf__steptime_data(const char *section)
{
	pthread_once(&data_once, data_load);
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(D.root, section);
	return cJSON_IsObject(o) ? o : NULL;
}

static void load_constants(void);

const char *vf_estimate_constants_fallback(void)
{
	pthread_once(&data_once, data_load);
	if (D.fallback)
		return D.fallback;
	load_constants(); /* a by_length curve not used: the estimate says so */
	return K.attn_why[0] ? K.attn_why : NULL;
}

/* GEMMs on the CUDA cores: their kernel shares and tiles per generation
 * (gemm_efficiency), fp32 attention's 3xTF32 (fp32_matmul); after the
 * tensor-core shares (K.gemm_k), which they fall back to. */
static void cuda_core_load(const cJSON *c)
{
	kernel_field(c, "gemm_efficiency", "cuda_core_kernel", K.gemm_k_fp32, K.gemm_k);
	kernel_field(c, "gemm_efficiency", "bf16_emulated_kernel", K.gemm_k_emu, K.gemm_k);
	K.gemm_tile = num(c, "gemm_tile", 619000.0);
	double tiles[NGEN][2];
	for (int i = 0; i < NGEN; i++)
		tiles[i][0] = tiles[i][1] = K.gemm_tile;
	kernel_field(c, "gemm_efficiency", "cuda_core_tile", K.gemm_tile_cc, tiles);
	const cJSON *f32 = cJSON_GetObjectItemCaseSensitive(c, "fp32_matmul");
	K.tf32_rate = rate(f32, "tf32_rate", 0.5);
	K.fast_fp32_passes = rate(f32, "fast_fp32_passes", 3);
}

static void constants_load(void)
{
	/* without the file (or its section) each constant is its fitted H200
	 * value below, and vf_estimate_constants_fallback says so */
	const cJSON *c = vf__steptime_data("constants");
	per_generation(c, "gemm_efficiency", K.gemm_eff, 0.648);
	attention_load(c);
	per_generation(c, "bandwidth_efficiency", K.bw_eff, 0.462);
	const cJSON *bwt = cJSON_GetObjectItemCaseSensitive(c, "bandwidth_efficiency");
	for (int i = 0; i < NGEN; i++) {
		const cJSON *g = cJSON_GetObjectItemCaseSensitive(bwt, generations[i]);
		const cJSON *h = cJSON_GetObjectItemCaseSensitive(bwt, "hopper");
		double hk = rate(h, "kernel", 0.88);
		K.bw_kernel[i] = cJSON_IsObject(g) ? rate(g, "kernel", hk) : hk;
	}
	per_generation(c, "host_speed", K.host, 1.0);
	kernel_shares(c, "gemm_efficiency", K.gemm_k, K.gemm_eff);
	cuda_core_load(c);
	kernel_shares(c, "bandwidth_efficiency", K.bw_k, K.bw_eff);
	memory_type_shares(c);
	K.gemm_fixed_s = num(c, "gemm_fixed_s_per_flop", 0);
	K.bw_fixed_s = num(c, "bandwidth_fixed_s_per_byte", 0);
	K.int8_rate = rate(cJSON_GetObjectItemCaseSensitive(c, "gemm_dtype_rate"), "int8", 0.5);
	const cJSON *dq = cJSON_GetObjectItemCaseSensitive(c, "dequant_efficiency");
	K.dq_eff[VF__DQ_NONE] = 1;
	K.dq_eff[VF__DQ_NF4] = rate(dq, "nf4", 0.22);
	K.dq_eff[VF__DQ_INT8] = rate(dq, "int8", 0.35);
	K.dq_eff[VF__DQ_FP8] = rate(dq, "fp8", 0.45);
	const cJSON *o8 = cJSON_GetObjectItemCaseSensitive(c, "optimizer_8bit");
	K.opt8_tensor_s = num(o8, "per_tensor_s", 4e-5);
	K.opt8_bw = rate(o8, "bandwidth_ratio", 0.35);
	K.opt_bw = rate(cJSON_GetObjectItemCaseSensitive(c, "optimizer_bandwidth"), "hopper", 0.63);
	K.opt_launch_s = num(c, "optimizer_launch_s", 8e-6);
	const cJSON *gs = cJSON_GetObjectItemCaseSensitive(c, "grad_scaler");
	K.scaler_passes = num(gs, "passes", 3);
	K.scaler_syncs = num(gs, "syncs", 1);
	const cJSON *gc = cJSON_GetObjectItemCaseSensitive(c, "grad_clip");
	K.clip_passes = num(gc, "passes", 3);
	K.clip_tensor_launches = num(gc, "launches_per_tensor", 2);
	K.clip_fixed_launches = num(gc, "fixed_launches", 5);
	K.clip_foreach_launches = num(gc, "foreach_launches", 3);
	const cJSON *cp = cJSON_GetObjectItemCaseSensitive(c, "compile");
	K.compile_elem = num(cp, "elementwise_bytes", 0.4);
	K.compile_kernels = num(cp, "kernels", 0.2);
	K.compile_loss = num(cp, "loss_bytes", 0.5);
	const cJSON *hl = cJSON_GetObjectItemCaseSensitive(c, "host_link");
	K.pcie_gbs = rate(hl, "pcie_gbs", 25);
	K.paging_ratio = rate(hl, "paging_ratio", 0.5);
	K.offload_overlap = num(hl, "offload_overlap", 0.7);
	K.cpu_offload_overlap = num(hl, "cpu_offload_overlap", 0.7);
	K.host_mem_gbs = rate(hl, "host_memory_gbs", 40);
	K.launch_s = num(c, "launch_s", 1.851e-5);
	K.kernel_gpu_s = num(c, "kernel_gpu_s", 0);
	K.step_s = num(c, "step_s", 1.5e-5);
	K.sync_s = num(c, "sync_s", 2e-5);
	K.bwd_kernels = rate(c, "backward_kernels", 2);
	const cJSON *ck = cJSON_GetObjectItemCaseSensitive(c, "checkpoint");
	K.ckpt_pack_s = num(ck, "pack_hook_s", 0);
	K.ckpt_recompute_s = num(ck, "recompute_hook_s", 0);
	K.ckpt_unpack_s = num(ck, "unpack_hook_s", 0);
	K.ckpt_region_s = num(ck, "region_s", 0);
	K.ckpt_rng_s = num(ck, "rng_state_s", 0);
	const cJSON *ml = cJSON_GetObjectItemCaseSensitive(c, "moe_loop");
	K.moe_expert_syncs = num(ml, "syncs_per_expert", 1);
	K.moe_layer_syncs = num(ml, "syncs_per_layer", 0);
	K.moe_amp_casts = num(ml, "amp_casts_per_expert", 0);
	const cJSON *lc = cJSON_GetObjectItemCaseSensitive(c, "llamacpp_decode");
	K.lcpp_kernels_q = num(lc, "kernels_per_layer_quantized", 27);
	K.lcpp_kernels_f16 = num(lc, "kernels_per_layer_f16", 23);
	K.lcpp_gap_graphs = num(lc, "kernel_gap_graphs_s", 3e-6);
	K.lcpp_gap_eager = num(lc, "kernel_gap_eager_s", 3.9e-6);
	K.lcpp_sync_s = num(lc, "device_sync_s", 2e-5);
	K.lcpp_graph_build = num(lc, "graph_build_per_layer_s", 1.15e-5);
	const cJSON *vd = cJSON_GetObjectItemCaseSensitive(c, "vllm_decode");
	K.vllm_kernels = num(vd, "kernels_per_layer", 10);
	K.vllm_host_step = num(vd, "host_step_s", 1.4e-3);
	K.vllm_host_seq = num(vd, "host_per_sequence_s", 1.13e-6);
}

static void load_constants(void)
{
	pthread_once(&constants_once, constants_load);
}

bool vf__steptime_geforce(const struct vf_gpu_spec *gpu)
{
	if (!gpu)
		return false;
	static const char rest[] = "eforce";
	for (const char *p = gpu->name; *p; p++) { /* "geforce" in any case, one pass */
		if ((*p | 0x20) != 'g')
			continue;
		int i = 0; /* ASCII letters only: a NUL or other byte stops the match */
		while (rest[i] && (p[1 + i] | 0x20) == rest[i])
			i++;
		if (!rest[i])
			return true;
	}
	return false;
}

static int gen_index(const struct vf_gpu_spec *gpu)
{
	if (gpu)
		for (int i = 0; generations[i]; i++)
			if (strcmp(gpu->generation, generations[i]) == 0)
				return i;
	return 0;
}

/* The generation's row and the GeForce column of the per-generation
 * tables. They depend on the name and generation texts alone; the last
 * GPU's, per thread, are remembered by those bytes (an equal copy has the
 * same answer; any other text is classified afresh), so repeated plain
 * estimates do not scan the names each time (a search context keeps its
 * GPU's class instead: vf__steptime_class, vf__steptime_hw). */
static _Thread_local struct {
	bool valid;
	char name[sizeof ((struct vf_gpu_spec *)0)->name];
	char generation[sizeof ((struct vf_gpu_spec *)0)->generation];
	int gen, gf;
} class_memo;

void vf__steptime_class(const struct vf_gpu_spec *gpu, struct vf__gpu_class *c)
{
	c->gen = gen_index(gpu);
	c->gf = vf__steptime_geforce(gpu) ? 1 : 0;
}

static void gpu_class(const struct vf_gpu_spec *gpu, int *gen, int *gf)
{
	if (!gpu) {
		*gen = gen_index(NULL);
		*gf = 0;
		return;
	}
	if (!(class_memo.valid && memcmp(class_memo.name, gpu->name, sizeof class_memo.name) == 0 &&
	      memcmp(class_memo.generation, gpu->generation, sizeof class_memo.generation) == 0)) {
		class_memo.gen = gen_index(gpu);
		class_memo.gf = vf__steptime_geforce(gpu) ? 1 : 0;
		memcpy(class_memo.name, gpu->name, sizeof class_memo.name);
		memcpy(class_memo.generation, gpu->generation, sizeof class_memo.generation);
		/* texts that end inside their fields only: else the answer read
		 * past them and is not a function of these bytes */
		class_memo.valid = memchr(class_memo.name, 0, sizeof class_memo.name) &&
				   memchr(class_memo.generation, 0, sizeof class_memo.generation);
	}
	*gen = class_memo.gen;
	*gf = class_memo.gf;
}

double vf__steptime_gemm_ratio(const struct vf_gpu_spec *gpu)
{
	load_constants();
	int g, gf;
	gpu_class(gpu, &g, &gf);
	return K.gemm_eff[g][gf] / K.gemm_eff[0][0];
}

void vf__steptime_decode_rates(const struct vf_gpu_spec *gpu, double *stream_bps,
			       double *gemm_flops, double *launch_s)
{
	load_constants();
	int g = gen_index(gpu);
	int gf = vf__steptime_geforce(gpu) ? 1 : 0;
	double bw_raw = gpu && gpu->bandwidth_gbs > 0 ? gpu->bandwidth_gbs * 1e9 : 4.8e12;
	double own = gpu_bw_kernel(gpu);
	*stream_bps = bw_raw * (own > 0 ? own : K.bw_kernel[g]);
	/* the dense tensor rate: bf16, else fp16 (Volta, Turing: no bf16) */
	double tf = !gpu ? -1 : gpu->bf16_tflops > 0 ? gpu->bf16_tflops : gpu->fp16_tflops;
	*gemm_flops = tf > 0 ? tf * 1e12 * K.gemm_eff[g][gf] : -1;
	*launch_s = K.launch_s * K.host[g][gf];
}

double vf__steptime_llamacpp_layer_s(bool quantized, bool cuda_graphs)
{
	load_constants();
	double kernels = quantized ? K.lcpp_kernels_q : K.lcpp_kernels_f16;
	return kernels * (cuda_graphs ? K.lcpp_gap_graphs : K.lcpp_gap_eager);
}

double vf__steptime_vllm_layer_s(void)
{
	load_constants();
	return K.vllm_kernels * K.lcpp_gap_graphs;
}

double vf__steptime_vllm_host_s(const struct vf_gpu_spec *gpu, int64_t running)
{
	load_constants();
	int g = gen_index(gpu);
	int gf = vf__steptime_geforce(gpu) ? 1 : 0;
	double more = running > 1 ? (double)(running - 1) : 0;
	return (K.vllm_host_step + more * K.vllm_host_seq) * K.host[g][gf];
}

double vf__steptime_llamacpp_graph_build_s(const struct vf_gpu_spec *gpu, int64_t layers)
{
	load_constants();
	int g = gen_index(gpu);
	int gf = vf__steptime_geforce(gpu) ? 1 : 0;
	return (double)(layers > 0 ? layers : 0) * K.lcpp_graph_build * K.host[g][gf];
}

double vf__steptime_llamacpp_sync_s(void)
{
	load_constants();
	return K.lcpp_sync_s;
}

double vf__steptime_tf32_rate(void)
{
	load_constants();
	return K.tf32_rate;
}

double vf_estimate_host_speed(const struct vf_gpu_spec *gpu)
{
	load_constants();
	if (!gpu)
		return 1;
	struct vf__gpu_class c;
	vf__steptime_class(gpu, &c);
	return K.host[c.gen][c.gf];
}

double vf__steptime_host_bps(const struct vf_gpu_spec *gpu)
{
	load_constants();
	double pcie4 = K.pcie_gbs * 1e9;
	if (!gpu) /* no GPU: the H200 the estimate then assumes */
		return 2 * pcie4;
	if (strstr(gpu->interconnect, "PCIe 5"))
		return 2 * pcie4;
	if (strstr(gpu->interconnect, "PCIe 3"))
		return pcie4 / 2;
	if (strstr(gpu->interconnect, "PCIe 4"))
		return pcie4;
	/* SXM and superchips: the host link of the generation's servers */
	const char *g = gpu->generation;
	if (strcmp(g, "hopper") == 0 || strcmp(g, "blackwell") == 0)
		return 2 * pcie4;
	if (strcmp(g, "volta") == 0 || strcmp(g, "pascal") == 0 || strcmp(g, "turing") == 0)
		return pcie4 / 2;
	return pcie4;
}

struct hw {
	double rate, bw, bw_raw, eff;
	double attn_rate; /* attention's dense rate (fp32: 3xTF32 where the GPU has TF32) */
	double tile;      /* the GEMMs' half-efficiency output size (tensor cores or CUDA cores) */
	double inv_rate_eff, inv_bw; /* 1 / (rate x eff), 1 / bandwidth */
	double inv_rate_eff32; /* 1 / (rate x eff) of fp32 GEMMs in a 16-bit step (vf__gemm.fp32) */
	double inv_bw_opt;     /* 1 / the optimizer kernels' bandwidth */
	double inv_bw_stream;  /* 1 / the device-copy bandwidth (streaming kernels counted op by op) */
	const struct attn_gen *attn; /* the generation's attention shares */
	double launch_s, sync_s, host; /* per launch, per sync, host time scale */
};

/* One GEMM of m x k by k x n, device seconds: 2-byte operands at the
 * step's rate, or (fp32: an adapter's rank-r product in a 16-bit step)
 * 4-byte ones at the GPU's fp32 rate with no half-efficiency output size:
 * one of its dimensions is the rank, and cuBLAS splits such a product's
 * long inner dimension over the SMs (split-K) rather than leave them idle
 * for want of output tiles. Inlined into its callers: the call cost about
 * half of its work (3 per GEMM per layer kind). */
static inline __attribute__((always_inline)) double gemm_s(const struct hw *h, double m, double k, double n, bool qbase,
		     bool fp32, enum vf__dequant dq, double *flops)
{
	double mn = m * n;
	double f = 2 * mn * k;
	double t_c = fp32 ? f * h->inv_rate_eff32
			  : 2 * k * (mn + h->tile) * h->inv_rate_eff; /* f / (rate eff mn/(mn+tile)) */
	if (qbase && dq == VF__DQ_INT8)
		t_c /= K.int8_rate; /* LLM.int8: quantised activations, outlier matmul */
	double t_m = (fp32 ? 4 : 2) * (m * k + k * n + mn) * h->inv_bw;
	*flops += f;
	return (t_c > t_m ? t_c : t_m) + K.kernel_gpu_s;
}

static double attention_s(const struct hw *h, const struct vf__step_work *w,
			  const struct vf__layer_work *l, bool bwd, double *elem)
{
	double mult = bwd ? 2.5 : 1;
	if (w->attn == VF__ATTN_FLASH || w->attn == VF__ATTN_MEM_EFFICIENT)
		return mult * l->attn_flops / (h->attn_rate * attn_share(h->attn, l));
	/* eager / math: QK^T and PV as batched GEMMs at the GEMM efficiency,
	 * softmax (+ position bias, dropout) reading and writing fp32 scores */
	*elem += (bwd ? 2 : 1) * l->score_elems * 4 * l->score_passes;
	return mult * l->attn_flops * h->inv_rate_eff;
}

/* Non-reentrant checkpointing's host work per layer (torch.utils.checkpoint,
 * steptime.json "checkpoint"): each saved tensor's pack hook in the
 * forward, its pack hook in the recompute and its unpack hook in the
 * backward; the region's own work and the RNG state stash and restore
 * (preserve_rng_state, the default) with the recompute. */
static void ckpt_host(const struct hw *h, const struct vf__layer_work *l, struct vf__kind_times *k)
{
	double n = l->saved_tensors;
	k->ckpt_f = n * K.ckpt_pack_s * h->host;
	k->ckpt_r = (n * K.ckpt_recompute_s + K.ckpt_region_s + K.ckpt_rng_s) * h->host;
	k->ckpt_b = n * K.ckpt_unpack_s * h->host;
}

/* One layer kind, forward and backward in one pass over its GEMMs. */
static void kind_times(const struct hw *h, const struct vf__step_work *w,
		       const struct vf__layer_work *l, struct vf__kind_times *k)
{
	memset(k, 0, sizeof *k);
	for (int i = 0; i < l->ngemm; i++) {
		const struct vf__gemm *x = &l->gemm[i];
		double tf = gemm_s(h, x->m, x->k, x->n, x->qbase, x->fp32, w->dequant, &k->flops_f);
		double tb = 0;
		if (w->train) {
			if (x->input_grad) /* dX = dY W^T */
				tb += gemm_s(h, x->m, x->n, x->k, x->qbase, x->fp32, w->dequant, &k->flops_b);
			if (x->weight_grad) /* dW = X^T dY */
				tb += gemm_s(h, x->k, x->m, x->n, false, x->fp32, w->dequant, &k->flops_b);
		}
		bool expert = l->experts > 0 && x->count >= l->experts;
		*(expert ? &k->f.moe : &k->f.gemm) += tf * x->count;
		*(expert ? &k->b.moe : &k->b.gemm) += tb * x->count;
	}
	double cel = w->compile ? K.compile_elem : 1, ck = w->compile ? K.compile_kernels : 1;
	double ef = cel * l->elem_bytes;
	double eb = cel * (l->elem_bwd_bytes > 0 ? l->elem_bwd_bytes : 2 * l->elem_bytes);
	k->f.attn = attention_s(h, w, l, false, &ef);
	k->b.attn = w->train ? attention_s(h, w, l, true, &eb) : 0;
	k->f.elem = ef * h->inv_bw + cel * l->stream_bytes * h->inv_bw_stream;
	k->b.elem = w->train ? eb * h->inv_bw + cel * l->stream_bwd_bytes * h->inv_bw_stream : 0;
	if (w->dequant != VF__DQ_NONE && l->dequant_bytes > 0) {
		double t = l->dequant_bytes / (h->bw_raw * K.dq_eff[w->dequant]);
		k->f.dq = t;
		k->b.dq = w->train ? t : 0; /* dequantized again for dX */
	}
	double dqk = w->dequant != VF__DQ_NONE ? l->dequant_kernels : 0;
	k->f.host = (ck * l->kernels + dqk) * h->launch_s;
	k->b.host = (ck * l->kernels * K.bwd_kernels + dqk) * h->launch_s;
	if (l->experts > 0) {
		k->b.moe += w->train ? l->experts * l->expert_bwd_bytes * h->inv_bw : 0;
		/* forward: each expert's item() and nonzero() wait on the GPU
		 * (moe_loop in steptime.json), and expert_hit's nonzero per layer */
		double ek = l->expert_kernels + l->expert_fp32 * K.moe_amp_casts; /* launches per expert */
		k->f.moe_host = l->experts * (ek * h->launch_s + K.moe_expert_syncs * h->sync_s) +
				l->moe_share * K.moe_layer_syncs * h->sync_s;
		k->b.moe_host = l->experts * (ek * K.bwd_kernels * h->launch_s + h->sync_s);
	}
	if (w->train && !w->compile) /* compiled: the checkpoint is traced, no Python hooks */
		ckpt_host(h, l, k);
}

/* A pass over all layers: max(device, host), the MoE loop's synchronised
 * part added; its parts added to *p (times `times`). `extra` is host time
 * beyond the kernels' launches (checkpointing's hooks), in the host's sum. */
static inline __attribute__((always_inline)) double pass_s(const struct vf__step_work *w,
							  const struct vf__kind_times *k, bool bwd,
							  double times, struct vf_step_parts *p, double extra)
{
	double dev = 0, host = extra, moe = 0;
	for (int i = 0; i < w->nkinds; i++) {
		double c = w->kind[i].count;
		const struct vf__kind_dir *d = bwd ? &k[i].b : &k[i].f;
		dev += c * (d->gemm + d->attn + d->elem + d->dq);
		host += c * d->host;
		moe += c * (d->moe + d->moe_host);
		p->gemm += times * c * d->gemm;
		p->attention += times * c * d->attn;
		p->memory_bound += times * c * d->elem;
		p->dequant += times * c * d->dq;
	}
	p->moe += times * moe;
	p->ckpt_host += times * extra;
	if (host > dev)
		p->launch += times * (host - dev);
	return (dev > host ? dev : host) + moe;
}

/* Op-level selective checkpointing's recompute in the backward
 * (torchtitan's _custom_policy): the GEMMs it did not save (share g of
 * each layer's GEMM and dequant time), every memory-bound op, no
 * attention (its output is saved); host time in the same share as the
 * device's. Its parts added to *p (times `times`). */
static double sac_op_s(const struct vf__step_work *w, const struct vf__kind_times *k, double g, double times,
		       struct vf_step_parts *p, double extra)
{
	double dev = 0, host = extra;
	p->ckpt_host += times * extra;
	for (int i = 0; i < w->nkinds && i < 2; i++) {
		double c = w->kind[i].count;
		const struct vf__kind_dir *d = &k[i].f;
		double full = d->gemm + d->attn + d->elem + d->dq;
		double part = g * (d->gemm + d->dq) + d->elem;
		dev += c * part;
		host += c * d->host * (full > 0 ? part / full : 0);
		p->gemm += times * c * g * d->gemm;
		p->memory_bound += times * c * d->elem;
		p->dequant += times * c * g * d->dq;
	}
	if (host > dev)
		p->launch += times * (host - dev);
	return dev > host ? dev : host;
}

/* Kernels the optimizer step launches (optstep.c's counts): foreach ops
 * chunked by multi_tensor_apply, or a per-tensor Python loop's. */
static double optimizer_launches(const struct vf__step_work *w, const struct vf__opt_kernels *k)
{
	double n = w->opt_tensors, vec = w->opt_vectors < n ? w->opt_vectors : n;
	double launches = k->per_tensor * (n - vec) + k->per_vector * vec;
	for (int d = 0; d < 5; d++)
		launches += k->foreach[d] * vf__foreach_launches(d + 1, n, w->opt_elems);
	return launches + k->step_adds * vf__foreach_launches(1, n, n);
}

/* The optimizer step: its kernels' state traffic at the optimizer
 * kernels' bandwidth beside their launches on the host (optstep.c);
 * gradient clipping (its passes and launches beside the step's), fp16
 * scaler. */
static double optimizer_s(const struct hw *h, const struct vf__step_work *w)
{
	double dev = 0, host = 0;
	if (w->opt == VF_OPT_ADAMW8BIT) { /* bitsandbytes: one blockwise kernel per tensor from a Python loop */
		dev = w->opt_bytes * h->inv_bw / K.opt8_bw;
		host = w->opt_tensors * K.opt8_tensor_s * h->host;
	} else if (w->opt != VF_OPT_NONE) {
		struct vf__opt_kernels k;
		vf__opt_kernels(w->opt, w->opt_impl, &k);
		dev = w->opt_bytes * h->inv_bw_opt;
		host = optimizer_launches(w, &k) * K.opt_launch_s * h->host;
	}
	if (w->grad_clip != VF_CLIP_NONE) { /* the norm reads the gradients, mul_ rewrites them */
		dev += K.clip_passes * w->grad_bytes * h->inv_bw;
		double per = w->grad_clip == VF_CLIP_FOR ? K.clip_tensor_launches * w->opt_tensors
							 : K.clip_foreach_launches * (1 + w->opt_tensors / 512);
		host += (per + K.clip_fixed_launches) * h->launch_s;
	}
	double t = dev > host ? dev : host;
	if (w->grad_scaler) /* unscale + inf check over the gradients, found_inf on the host */
		t += K.scaler_passes * w->grad_bytes * h->inv_bw + K.scaler_syncs * h->sync_s;
	return t;
}

/* Copies over PCIe beside the compute: offloaded activations (hidden
 * behind up to offload_overlap of the micro-step), paged states (not). */
static void host_traffic(const struct vf__step_work *w, const struct vf_gpu_spec *gpu,
			 double micro_s, struct vf_step_parts *p)
{
	if (!(w->offload_bytes > 0) && !(w->paged_bytes > 0))
		return;
	double host = vf__steptime_host_bps(gpu);
	if (w->offload_bytes > 0) {
		double t = w->offload_bytes / host; /* out in the forward, back in the backward */
		double hidden = K.offload_overlap * micro_s;
		p->offload = (t > hidden ? t - hidden : 0) * w->micro;
	}
	if (w->paged_bytes > 0) /* evicted pages out while the needed ones come in: PCIe is duplex */
		p->paging = w->paged_bytes / (host * K.paging_ratio);
}

/* CPU offload (--offload): the copies beside the forward and the
 * backward of each micro-batch not hidden behind their pass, those after
 * the host's optimizer step (all exposed); the step on the host at its
 * memory bandwidth (the GPU waits for it). */
static void cpu_offload(const struct vf__step_work *w, const struct vf_gpu_spec *gpu,
			double fwd_s, double bwd_s, struct vf_step_parts *p)
{
	if (!(w->cpu_fwd_bytes > 0) && !(w->cpu_bwd_bytes > 0) && !(w->cpu_after_bytes > 0) &&
	    !(w->host_opt_bytes > 0))
		return;
	double host = vf__steptime_host_bps(gpu);
	double f = w->cpu_fwd_bytes / host - K.cpu_offload_overlap * fwd_s;  /* s per micro-batch */
	double b = w->cpu_bwd_bytes / host - K.cpu_offload_overlap * bwd_s;
	p->cpu_offload = ((f > 0 ? f : 0) + (b > 0 ? b : 0)) * w->micro + w->cpu_after_bytes / host;
	/* the copies' hidden part: the window the collectives cannot use too */
	p->cpu_offload_hidden = ((w->cpu_fwd_bytes + w->cpu_bwd_bytes) / host) * w->micro -
				(p->cpu_offload - w->cpu_after_bytes / host);
	p->host_optimizer = w->host_opt_bytes / (K.host_mem_gbs * 1e9);
}

/* The rate of a 16-bit step's fp32 GEMMs (vf__gemm.fp32: peft's fp32
 * adapters without autocast, whose inputs are cast to fp32): IEEE SGEMM on
 * the CUDA cores at the fp32 GEMMs' kernel share (steptime.json
 * gemm_efficiency cuda_core_kernel), or with TF32 allowed (w->tf32_fp32)
 * the TF32 tensor rate at the tensor cores' share; a GPU without bf16
 * tensor cores has no TF32. */
static void fp32_gemms(const struct vf__step_work *w, const struct vf_gpu_spec *gpu, int g, int gf,
		       struct hw *h)
{
	double bf16 = gpu ? gpu->bf16_tflops * 1e12 : 989.5e12; /* the H200 when no GPU */
	double r32, eff;
	if (w->tf32_fp32 && bf16 > 0) {
		r32 = bf16 * K.tf32_rate;
		eff = model_share(g, gf, K.gemm_eff, K.gemm_k, K.gemm_fixed_s, r32);
	} else {
		r32 = gpu && gpu->fp32_tflops > 0 ? gpu->fp32_tflops * 1e12 : 66.9e12; /* H200 datasheet */
		eff = cuda_core_share(g, gf, K.gemm_k_fp32, r32);
	}
	h->inv_rate_eff32 = 1 / (r32 * eff);
}

/* The GPU's rates for the step's compute dtype (w->rate_tflops); false
 * when it has no rate. */
static bool hw_of_class(const struct vf__step_work *w, const struct vf_gpu_spec *gpu, int g, int gf,
			struct hw *h)
{
	load_constants();
	double bw_raw = gpu && gpu->bandwidth_gbs > 0 ? gpu->bandwidth_gbs * 1e9 : 4.8e12;
	double own = g != 0 ? gpu_bw_kernel(gpu) : -1; /* hopper keeps its fitted share */
	double bw_share = own > 0 ? 1 / (1 / own + bw_raw * K.bw_fixed_s * K.host[g][gf])
				  : model_share(g, gf, K.bw_eff, K.bw_k, K.bw_fixed_s, bw_raw);
	*h = (struct hw){.rate = w->rate_tflops * 1e12,
			 .bw = bw_raw * bw_share,
			 .bw_raw = bw_raw,
			 .eff = w->cuda_core ? cuda_core_share(g, gf,
							       w->cuda_core == 1 ? K.gemm_k_fp32 : K.gemm_k_emu,
							       w->rate_tflops * 1e12)
					     : model_share(g, gf, K.gemm_eff, K.gemm_k, K.gemm_fixed_s,
							   w->rate_tflops * 1e12),
			 .attn_rate = attention_rate(w, gpu),
			 .tile = w->cuda_core ? K.gemm_tile_cc[g][gf] : K.gemm_tile,
			 .attn = &K.attn[g][gf],
			 .host = K.host[g][gf]};
	h->launch_s = K.launch_s * h->host;
	h->sync_s = K.sync_s * h->host;
	if (!(h->rate > 0))
		return false;
	h->inv_rate_eff = 1 / (h->rate * h->eff);
	h->inv_bw = 1 / h->bw;
	fp32_gemms(w, gpu, g, gf, h);
	/* the optimizer's kernels: hopper's fitted share, another GPU's
	 * device-copy share scaled by hopper's share over its own */
	double kern = own > 0 ? own : K.bw_k[g][gf];
	double opt = g == 0 ? K.opt_bw : kern * K.opt_bw / K.bw_k[0][0];
	h->inv_bw_opt = 1 / (bw_raw * (opt < 1 ? opt : 1));
	h->inv_bw_stream = 1 / (bw_raw * (kern < 1 ? kern : 1));
	return true;
}

static bool hw_of(const struct vf__step_work *w, const struct vf_gpu_spec *gpu, struct hw *h)
{
	int g, gf;
	gpu_class(gpu, &g, &gf);
	return hw_of_class(w, gpu, g, gf, h);
}

_Static_assert(sizeof(struct hw) <= sizeof(struct vf__steptime_hw), "vf__steptime_hw holds a struct hw");

void vf__steptime_hw(const struct vf__step_work *w, const struct vf_gpu_spec *gpu,
		     const struct vf__gpu_class *c, struct vf__steptime_hw *out)
{
	struct hw h;
	memset(&h, 0, sizeof h);
	hw_of_class(w, gpu, c->gen, c->gf, &h); /* a GPU without a rate: h.rate <= 0 */
	memset(out, 0, sizeof *out);
	memcpy(out, &h, sizeof h);
}

/* The caller's rates (vf__steptime_hw), or the GPU's derived afresh */
static bool hw_given(const struct vf__step_work *w, const struct vf_gpu_spec *gpu,
		     const struct vf__steptime_hw *given, struct hw *h)
{
	if (!given)
		return hw_of(w, gpu, h);
	memcpy(h, given, sizeof *h);
	return h->rate > 0;
}

static void step_from(const struct hw *h, const struct vf__step_work *w,
		      const struct vf_gpu_spec *gpu, const struct vf__kind_times k[2],
		      struct vf__steptime_out *o);

void vf__steptime(const struct vf__step_work *w, const struct vf_gpu_spec *gpu,
		  struct vf__steptime_out *o)
{
	struct vf__kind_times k[2];
	vf__steptime_kinds(w, gpu, NULL, k, o);
}

void vf__steptime_kinds(const struct vf__step_work *w, const struct vf_gpu_spec *gpu,
			const struct vf__steptime_hw *hw, struct vf__kind_times k[2],
			struct vf__steptime_out *o)
{
	struct hw h;
	if (!hw_given(w, gpu, hw, &h)) {
		memset(k, 0, 2 * sizeof *k);
		memset(o, 0, sizeof *o);
		o->seconds = -1;
		return;
	}
	for (int i = 0; i < w->nkinds && i < 2; i++) /* kind_times fills each */
		kind_times(&h, w, &w->kind[i], &k[i]);
	step_from(&h, w, gpu, k, o);
}

void vf__steptime_with(const struct vf__step_work *w, const struct vf_gpu_spec *gpu,
		       const struct vf__steptime_hw *hw, const struct vf__kind_times k[2],
		       struct vf__steptime_out *o)
{
	struct hw h;
	if (!hw_given(w, gpu, hw, &h)) {
		memset(o, 0, sizeof *o);
		o->seconds = -1;
		return;
	}
	step_from(&h, w, gpu, k, o);
}

/* The step from its layer kinds' times and the rest of w. */
static void step_from(const struct hw *h, const struct vf__step_work *w,
		      const struct vf_gpu_spec *gpu, const struct vf__kind_times k[2],
		      struct vf__steptime_out *o)
{
	memset(o, 0, sizeof *o);
	double flops = 0;
	/* the recompute: every checkpointed layer's forward once more
	 * (torchtitan every:N wraps one block in N: a share of the layers) */
	double rc = w->train && w->ckpt ? (w->recompute > 0 && w->recompute < 1 ? w->recompute : 1) : 0;
	for (int i = 0; i < w->nkinds && i < 2; i++) {
		/* FLOPs per layer of this kind (the counts of repeated GEMMs
		 * are in their times; MFU uses the model's own FLOPs) */
		flops += w->kind[i].count * (k[i].flops_f * (1 + (w->ckpt ? rc : 0)) + k[i].flops_b);
	}
	struct vf_step_parts *p = &o->parts;
	/* checkpointing's host work: the forward's and the backward's hooks on
	 * the checkpointed layers (every:N: a share of them), the recompute's
	 * hooks and regions with it (its pass covers that share) */
	double hf = 0, hr = 0, hb = 0, share = w->recompute_op ? 1 : rc;
	double rng = w->compile ? 0 : K.ckpt_rng_s * h->host;
	for (int i = 0; rc > 0 && i < w->nkinds && i < 2; i++) {
		if (w->ckpt_reentrant) { /* no hooks; its Function's and nested backward's own
					  * Python not measured (not counted): the RNG's */
			hr += w->kind[i].count * rng;
			continue;
		}
		hf += share * w->kind[i].count * k[i].ckpt_f;
		hr += w->kind[i].count * k[i].ckpt_r; /* all layers: the recompute's pass is scaled */
		hb += share * w->kind[i].count * k[i].ckpt_b;
	}
	/* the recompute: a second forward of rc of the layers, or op-level SAC's part */
	bool whole = rc >= 1 && !w->recompute_op;
	double fwd_s = pass_s(w, k, false, w->micro, p, hf), bwd_s = 0, rec_s = 0;
	if (whole)
		rec_s = pass_s(w, k, false, w->micro, p, hr);
	else if (rc > 0)
		rec_s = w->recompute_op ? sac_op_s(w, k, rc, w->micro, p, hr)
					: rc * pass_s(w, k, false, rc * w->micro, p, hr);
	double t = fwd_s + rec_s;
	double head = gemm_s(h, w->head.m, w->head.k, w->head.n, false, false, w->dequant, &flops);
	if (w->train) {
		bwd_s = pass_s(w, k, true, w->micro, p, hb);                       /* backward */
		t += bwd_s;
		bwd_s += rec_s; /* the recompute runs in the backward's window */
		head += gemm_s(h, w->head.m, w->head.n, w->head.k, false, false, w->dequant, &flops);
		if (w->head.weight_grad)
			head += gemm_s(h, w->head.k, w->head.m, w->head.n, false, false, w->dequant, &flops);
	}
	double loss = w->loss_bytes * (w->compile ? K.compile_loss : 1) * h->inv_bw;
	p->gemm += head * w->micro;
	p->memory_bound += loss * w->micro;
	t += head + loss;
	host_traffic(w, gpu, t, p);
	cpu_offload(w, gpu, fwd_s, bwd_s, p);
	t *= w->micro;
	flops *= w->micro;
	if (w->train) {
		o->opt_s = optimizer_s(h, w);
		p->optimizer = o->opt_s;
		t += o->opt_s;
	}
	p->fixed = K.step_s * h->host;
	t += p->fixed + p->offload + p->paging + p->cpu_offload + p->host_optimizer;
	p->compute = t;
	o->seconds = t;
	o->utilisation = t > 0 ? flops / (t * h->rate) : 0;
}
