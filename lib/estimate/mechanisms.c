/* mechanisms.c - memory mechanisms of other training stacks' recipes
 * (mechanisms.h), each with the public source it was read from:
 *
 *  - paged optimizer states: bitsandbytes bitsandbytes/optim/optimizer.py
 *    (commit 51294d90, Optimizer8bit.get_state_buffer): with is_paged a
 *    state of a parameter of >= 1e5 elements comes from F.get_paged
 *    (cudaMallocManaged), smaller ones from torch.zeros_like. Managed
 *    memory is not PyTorch's: torch.cuda.max_memory_allocated() and
 *    max_memory_reserved() never count it; nvidia-smi counts the pages
 *    resident on the device (all of them while the device has room), and
 *    the driver evicts them to the host under pressure;
 *  - the never-reset peak: torchtune torchtune/training/memory.py (commit
 *    03317787, get_memory_stats resets the peak statistics after each
 *    read, the first read right after model init), torchtitan
 *    torchtitan/components/metrics.py (commit c594d8ac, the device memory
 *    monitor resets them at each log) report the step; litgpt
 *    litgpt/finetune/lora.py (commit c16c72c0) prints
 *    torch.cuda.max_memory_allocated() once at the end: the run, load
 *    included. Lightning's FSDP load (lightning
 *    src/lightning/fabric/strategies/fsdp.py, commit 2d347d0b,
 *    _load_raw_module_state: a full-state-dict context with
 *    rank0_only=False, "gathering all weights first and then writing back
 *    to each shard") holds every weight unsharded on every rank;
 *  - selective activation checkpointing: torchtitan
 *    torchtitan/models/llama3/infra/parallelize.py (commit 81c12433,
 *    apply_ac: mode selective with selective_ac_option "op" saves the
 *    outputs of the ops of its save list - matmuls except every second
 *    one, attention, max, reduce-scatter - and recomputes the rest; an
 *    integer N checkpoints every N-th block whole);
 *  - bitsandbytes k-bit matmuls: bitsandbytes
 *    bitsandbytes/autograd/_functions.py (commit 60a0d8a5, MatMul4Bit:
 *    ctx.tensors = (A, B) when any input needs a gradient; MatMul8bitLt:
 *    (CAt, subA, A), the input and its int8 transposed copy) keep their
 *    input for the backward even with the quantized weight frozen, where a
 *    frozen nn.Linear keeps nothing; torchao's NF4 linear (torchtune)
 *    keeps only the weight;
 *  - litgpt QLoRA's head and held graph: lightning
 *    src/lightning/fabric/plugins/precision/bitsandbytes.py (tag 2.4.0,
 *    commit 2129fdf3, the version litgpt 03ffc551 pins; the same at
 *    71aed751, pinned by 8641822): module_init_context replaces every
 *    torch.nn.Linear built under fabric.init_module by _NF4Linear, the
 *    lm_head's LoRALinear.linear included (litgpt/lora.py GPT), and
 *    _Linear4bit.quantize packs weight.to(dtype=torch.half): the quant
 *    state is fp16, so bitsandbytes' MatMul4Bit (autograd/_functions.py,
 *    0.42.0 = commit 4870580f, pinned by litgpt 03ffc551; the same in
 *    0.41.0) runs F.dequantize_4bit(B).to(A.dtype): an fp16 and a bf16
 *    copy of the whole weight, in each forward and backward call - for
 *    the head once per lm_head_chunk_size=128 chunk. litgpt's fit loop
 *    (litgpt/finetune/lora.py and full.py at 03ffc551, finetune/lora.py
 *    at 8641822) binds `logits = model(...)` and keeps it until the next
 *    step's forward returns: the logits and the autograd graph behind
 *    them live through that forward; the backward released the graph's
 *    saved tensors, but MatMul4Bit keeps A in ctx.tensors, a Python
 *    attribute freed only with the graph. */
#include "mechanisms.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

vf_status vf__mech_ckpt_parse(const char *v, struct vf_setup *s, struct vf_error *err)
{
	if (v && strcmp(v, "reentrant") == 0) { /* every layer, the reentrant variant */
		s->grad_ckpt = s->ckpt_reentrant = true;
		s->ckpt_selective_op = false;
		s->ckpt_every = 0;
		return VF_OK;
	}
	if (v && strcmp(v, "selective:op") == 0) {
		s->grad_ckpt = true;
		s->ckpt_selective_op = true;
		s->ckpt_every = 0;
		return VF_OK;
	}
	if (v && strncmp(v, "every:", 6) == 0) {
		char *end = NULL;
		long n = strtol(v + 6, &end, 10);
		if (end && end != v + 6 && !*end && n >= 1 && n <= 1024) {
			s->grad_ckpt = true;
			s->ckpt_selective_op = false;
			s->ckpt_every = (int16_t)(n == 1 ? 0 : n);
			return VF_OK;
		}
	}
	return vf_error_set(err, VF_EUSAGE,
			    "--grad-ckpt: expected true, false, reentrant, selective:op or every:N (N 1..1024), "
			    "got '%s'",
			    v ? v : "");
}

const char *vf__mech_ckpt_name(const struct vf_setup *s, char *out, size_t n)
{
	if (!s->grad_ckpt)
		snprintf(out, n, "none");
	else if (s->ckpt_selective_op)
		snprintf(out, n, "selective:op");
	else if (s->ckpt_every > 1)
		snprintf(out, n, "every:%d", s->ckpt_every);
	else if (s->ckpt_reentrant)
		snprintf(out, n, "reentrant");
	else
		snprintf(out, n, "layer");
	return out;
}

const char *vf__mech_peak_scope_name(enum vf_peak_scope p)
{
	return p == VF_PEAK_RUN ? "run" : p == VF_PEAK_STEP ? "step" : "?";
}

bool vf__mech_peak_scope_parse(const char *v, enum vf_peak_scope *out)
{
	if (v && strcmp(v, "step") == 0)
		*out = VF_PEAK_STEP;
	else if (v && strcmp(v, "run") == 0)
		*out = VF_PEAK_RUN;
	else
		return false;
	return true;
}

bool vf__mech_modules_to_save_parse(const char *v, uint8_t *out)
{
	uint8_t m = 0;
	char buf[128];
	if (!v || !*v || strlen(v) >= sizeof buf)
		return false;
	snprintf(buf, sizeof buf, "%s", v);
	for (char *save = NULL, *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		if (strcmp(p, "lm_head") == 0 || strcmp(p, "output") == 0 || strcmp(p, "score") == 0 ||
		    strcmp(p, "classifier") == 0) /* the task head's names */
			m |= VF_MTS_HEAD;
		else if (strcmp(p, "embed_tokens") == 0 || strcmp(p, "tok_embeddings") == 0 ||
			 strcmp(p, "wte") == 0)
			m |= VF_MTS_EMBED;
		else if (strcmp(p, "none") != 0)
			return false;
	}
	*out = m;
	return true;
}

const char *vf__mech_modules_to_save_format(uint8_t m, char *out, size_t n)
{
	snprintf(out, n, "%s%s%s", m & VF_MTS_HEAD ? "lm_head" : "",
		 (m & VF_MTS_HEAD) && (m & VF_MTS_EMBED) ? "," : "", m & VF_MTS_EMBED ? "embed_tokens" : "");
	return out;
}

bool vf__mech_head_parse(const char *v, int32_t *labels)
{
	if (v && strcmp(v, "lm") == 0) {
		*labels = 0;
		return true;
	}
	if (!v || strncmp(v, "classify:", 9) != 0)
		return false;
	char *end = NULL;
	long n = strtol(v + 9, &end, 10);
	if (!end || end == v + 9 || *end || n < 1 || n > 1000000)
		return false;
	*labels = (int32_t)n;
	return true;
}

static const char *const offload_names[] = {"none", "optimizer", "params"};

const char *vf__mech_offload_name(enum vf_offload o)
{
	return (unsigned)o < VF_OFFLOAD_COUNT ? offload_names[o] : "?";
}

bool vf__mech_offload_parse(const char *v, enum vf_offload *out)
{
	for (int i = 0; v && i < VF_OFFLOAD_COUNT; i++)
		if (strcmp(v, offload_names[i]) == 0) {
			*out = (enum vf_offload)i;
			return true;
		}
	return false;
}

static const char *const tool_names[] = {NULL, "torch.cuda.max_memory_allocated()",
					 "torch.cuda.max_memory_reserved()", "nvidia-smi"};

const char *vf__mech_tool_name(enum vf_peak_tool t)
{
	return (unsigned)t < VF_TOOL_COUNT ? tool_names[t] : NULL;
}

bool vf__mech_tool_parse(const char *v, enum vf_peak_tool *out)
{
	for (int i = 1; v && i < VF_TOOL_COUNT; i++)
		if (strcmp(v, tool_names[i]) == 0) {
			*out = (enum vf_peak_tool)i;
			return true;
		}
	return false;
}

double vf__mech_sac_op_saved(double h, double hq, double hkv, double f, double heads,
			     double C, bool gated)
{
	double mm = hq + hkv;          /* wq, wv (wk, wo recomputed) */
	mm += gated ? f + h : h;       /* w1, w2 (w3 recomputed); plain MLP: fc2 */
	return C * mm + C * hq + 4 * heads / 64; /* + attention output, fp32 logsumexp */
}

double vf__mech_kbit_saved_inputs(double h, double hq, double f, double C)
{
	return C * (h + hq + h + f); /* q/k/v input, o_proj input, gate/up input, down input */
}

double vf__mech_kbit_dequant_bytes(double n, double C, bool fp16_compute)
{
	return 2 * n + (fp16_compute ? 0 : C * n); /* fp16 dequantize_4bit output, its cast */
}

double vf__mech_graph_held_bytes(double Nout, double V, double C, double kbit_inputs)
{
	return Nout * V * C + kbit_inputs;
}

/* The load's peak replaces the step's terms when it is the run's: the
 * weights (sharded and gathered) are all that is live. */
static void terms_at_load(struct vf_estimate *e)
{
	e->weights_bytes = e->load_peak_allocated_bytes;
	e->gradients_bytes = e->optimizer_bytes = e->optimizer_temp_bytes = 0;
	e->autocast_cache_bytes = e->activations_bytes = e->logits_bytes = e->kv_cache_bytes = 0;
	e->dominant = VF_TERM_WEIGHTS;
}

void vf__mech_finish_peaks(struct vf_estimate *e, const struct vf_setup *su, double paged,
			   double load_alloc)
{
	if (!e->peak_at_load) { /* the step's figures as the estimate computed them */
		e->step_peak_allocated_bytes = e->peak_allocated_bytes;
	}
	e->step_peak_reserved_bytes = e->peak_reserved_bytes > e->step_peak_allocated_bytes
					      ? e->peak_reserved_bytes
					      : e->step_peak_allocated_bytes;
	e->peak_scope = su->peak_scope;
	e->peak_report = su->peak_report;
	e->paged_bytes = paged > 0 ? (int64_t)(paged + 0.5) : 0;
	e->evictable_bytes = e->paged_bytes;
	e->load_peak_allocated_bytes = load_alloc > 0 ? (int64_t)(load_alloc + 0.5) : 0;
	e->step_peak_bytes = e->context_bytes + e->step_peak_reserved_bytes + e->paged_bytes;
	/* The run: the load's tensors (freed, but their blocks stay cached:
	 * the reserve never shrinks without empty_cache), then the steps. */
	int64_t la = e->load_peak_allocated_bytes;
	e->run_peak_allocated_bytes = la > e->step_peak_allocated_bytes ? la : e->step_peak_allocated_bytes;
	e->run_peak_reserved_bytes = la > e->step_peak_reserved_bytes ? la : e->step_peak_reserved_bytes;
	e->run_peak_bytes = e->context_bytes + e->run_peak_reserved_bytes + e->paged_bytes;
	bool run = su->peak_scope == VF_PEAK_RUN;
	e->peak_at_load = run && la > e->step_peak_allocated_bytes;
	e->peak_allocated_bytes = run ? e->run_peak_allocated_bytes : e->step_peak_allocated_bytes;
	e->peak_reserved_bytes = run ? e->run_peak_reserved_bytes : e->step_peak_reserved_bytes;
	e->peak_bytes = run ? e->run_peak_bytes : e->step_peak_bytes;
	e->allocator_bytes = e->peak_reserved_bytes - e->peak_allocated_bytes;
	if (e->peak_at_load)
		terms_at_load(e);
}

static cJSON *tools(int64_t alloc, int64_t reserved, int64_t device)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddNumberToObject(o, "torch.cuda.max_memory_allocated()", (double)alloc);
	cJSON_AddNumberToObject(o, "torch.cuda.max_memory_reserved()", (double)reserved);
	cJSON_AddNumberToObject(o, "nvidia-smi", (double)device);
	return o;
}

cJSON *vf__mech_peaks_json(const struct vf_estimate *e)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "scope", vf__mech_peak_scope_name(e->peak_scope));
	const char *tool = vf__mech_tool_name(e->peak_report);
	if (tool) /* the figure the stack's own report prints */
		cJSON_AddStringToObject(o, "stack_report", tool);
	cJSON_AddItemToObject(o, "step", tools(e->step_peak_allocated_bytes, e->step_peak_reserved_bytes,
					       e->step_peak_bytes));
	cJSON_AddItemToObject(o, "run", tools(e->run_peak_allocated_bytes, e->run_peak_reserved_bytes,
					      e->run_peak_bytes));
	cJSON_AddNumberToObject(o, "outside_allocator_bytes", (double)e->paged_bytes);
	cJSON_AddNumberToObject(o, "load_peak_allocated_bytes", (double)e->load_peak_allocated_bytes);
	cJSON_AddBoolToObject(o, "peak_at_load", e->peak_at_load);
	return o;
}
