/* mechanisms.h - internal: the memory mechanisms of other training stacks'
 * recipes that the estimator models beyond transformers + peft (each
 * documented with its source in mechanisms.c): bitsandbytes paged
 * optimizer states, load transients of a never-reset peak, selective
 * activation checkpointing, and the peaks as each reporting tool names
 * them. Shared by setup.c, stack.c and estimate.c. */
#ifndef VRAMFIT_MECHANISMS_H
#define VRAMFIT_MECHANISMS_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "vramfit/base/error.h"
#include "vramfit/estimate/estimate.h"
#include "vramfit/estimate/setup.h"

/* bitsandbytes Optimizer8bit.get_state_buffer: a paged optimizer's state
 * of a parameter with at least this many elements is CUDA managed memory
 * (cudaMallocManaged, outside PyTorch's caching allocator); smaller ones
 * are ordinary torch.zeros_like tensors. */
#define VF_MECH_PAGED_MIN_ELEMENTS 1e5

/* --grad-ckpt selective:op | every:N into s (grad_ckpt on). VF_EUSAGE
 * naming the value otherwise. */
vf_status vf__mech_ckpt_parse(const char *v, struct vf_setup *s, struct vf_error *err);
/* "selective:op", "every:2", "layer" (every layer), "none". Returns out. */
const char *vf__mech_ckpt_name(const struct vf_setup *s, char *out, size_t n);

/* "step" | "run"; parse returns false on another name. */
const char *vf__mech_peak_scope_name(enum vf_peak_scope p);
bool vf__mech_peak_scope_parse(const char *v, enum vf_peak_scope *out);

/* --modules-to-save "lm_head,embed_tokens" (also "output", "tok_embeddings",
 * "embed_tokens"); false on another name. format writes the list. */
bool vf__mech_modules_to_save_parse(const char *v, uint8_t *out);
const char *vf__mech_modules_to_save_format(uint8_t m, char *out, size_t n);

/* --head "lm" (0) | "classify:N" (N labels); false on another. */
bool vf__mech_head_parse(const char *v, int32_t *labels);

/* "none" | "optimizer" | "params"; parse returns false on another. */
const char *vf__mech_offload_name(enum vf_offload o);
bool vf__mech_offload_parse(const char *v, enum vf_offload *out);

/* "torch.cuda.max_memory_allocated()", "torch.cuda.max_memory_reserved()",
 * "nvidia-smi" (VF_TOOL_UNKNOWN: NULL); parse returns false on another. */
const char *vf__mech_tool_name(enum vf_peak_tool t);
bool vf__mech_tool_parse(const char *v, enum vf_peak_tool *out);

/* Bytes saved for backward per token per layer by torchtitan's op-level
 * selective checkpointing policy, beyond the layer's input: the outputs
 * of every other matmul (q, v, w1, w2 of q, k, v, o, w1, w3, w2) and of
 * the attention (with its logsumexp), in the compute dtype C. */
double vf__mech_sac_op_saved(double h, double hq, double hkv, double f, double heads,
			     double C, bool gated);

/* Bytes saved per token per layer by bitsandbytes' k-bit matmuls
 * (MatMul4Bit / MatMul8bitLt keep their input A whenever it needs a
 * gradient, unlike a frozen nn.Linear): the inputs of the attention
 * projections (one tensor for q, k, v), of o_proj, of the MLP's gate/up
 * (one tensor) and of down_proj, C bytes per element (MatMul4Bit: the
 * compute dtype; MatMul8bitLt: that and its int8 transposed copy). */
double vf__mech_kbit_saved_inputs(double h, double hq, double f, double C);

/* Bytes of a bitsandbytes 4-bit linear of n elements dequantized for one
 * call under Lightning's BitsandbytesPrecision (kbit_head): the weight
 * was quantized from fp16, so dequantize_4bit returns fp16 (2n) and
 * MatMul4Bit casts it to the compute dtype (C bytes; no copy when the
 * compute dtype is fp16 itself), both live while the cast runs. */
double vf__mech_kbit_dequant_bytes(double n, double C, bool fp16_compute);

/* Bytes of the previous step that litgpt's fit loop keeps through the
 * next forward (graph_held): its logits (Nout x V in the compute dtype)
 * and, from the autograd graph they reference, what bitsandbytes'
 * MatMul4Bit keeps as ctx attributes rather than saved tensors (kbit
 * inputs: the layers' k-bit saved inputs plus the quantized head's
 * input, 0 without k-bit linears). */
double vf__mech_graph_held_bytes(double Nout, double V, double C, double kbit_inputs);

/* Finish the estimate's peaks after the step's terms are known: the
 * paged states outside the allocator (in nvidia-smi's figure, not in
 * PyTorch's), the load transient of the run, and the scope's headline
 * peaks. load_alloc: tensor bytes live at the load's peak (0: none
 * beyond the weights). */
void vf__mech_finish_peaks(struct vf_estimate *e, const struct vf_setup *su, double paged,
			   double load_alloc);

/* The "peaks" object of the memory JSON: each peak under the name of the
 * tool that prints it, for the step and for the run. */
cJSON *vf__mech_peaks_json(const struct vf_estimate *e);

#endif
