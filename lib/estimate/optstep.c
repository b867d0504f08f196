/* The optimizer step's kernels, counted from the optimizers' own code:
 * the element passes over the trainable parameters (reads and writes of
 * state-sized tensors) and the kernels launched, for torch.optim's
 * foreach (multi_tensor_apply), fused and for-loop implementations and
 * the per-tensor Python loops of transformers' Adafactor and
 * lion-pytorch. steptime.c turns passes into device time and launches
 * into host time; estimate.c multiplies the passes by the state bytes.
 *
 * Not counted (named in steptime.json optimizer_bandwidth): the host's
 * per-tensor Python work besides the launches (Optimizer._init_group's
 * per-parameter loop, the CPU step counters' slow-path foreach add, the
 * bias corrections built as Python floats per tensor) and the first
 * step's state creation. */
#include "steptime.h"

#include <math.h>
#include <string.h>

#include "vramfit/estimate/setup.h"

/* Sources (read at PyTorch 2.11 / CUDA 13, transformers 5.17):
 *   AdamW foreach: pytorch torch/optim/adam.py _multi_tensor_adam, not
 *     capturable, decoupled weight decay (AdamW's default 1e-2):
 *     _foreach_mul_(params)             read p, write p          2 depth 1
 *     _foreach_lerp_(exp_avgs, grads)   read m, g, write m       3 depth 2
 *     _foreach_mul_(exp_avg_sqs)        read v, write v          2 depth 1
 *     _foreach_addcmul_(v, g, g)        read v, g, write v       3 depth 3
 *       (the gradient's second operand is the same address, read once)
 *     exp_avg_sq_sqrt = _foreach_sqrt(v) read v, write s         2 depth 2
 *     _foreach_div_(s, bias_correction2_sqrt) read s, write s    2 depth 1
 *     _foreach_add_(s, eps)             read s, write s          2 depth 1
 *     _foreach_addcdiv_(p, m, s, step_size) read p, m, s, write p 4 depth 3
 *     = 20 passes in 8 foreach ops (the step counters' add runs on CPU
 *     tensors).
 *   AdamW fused: torch/optim/adam.py _fused_adam -> _fused_adamw_
 *     (aten/src/ATen/native/cuda/FusedAdamWKernel.cu through
 *     multi_tensor_apply_for_fused_optimizer<4>): read p, g, m, v, write
 *     p, m, v = 7 passes in one depth-4 op, after _foreach_add_ of the
 *     GPU step counters (one element each).
 *   AdamW for-loop: _single_tensor_adam: per tensor param.mul_,
 *     exp_avg.lerp_, exp_avg_sq.mul_().addcmul_(), exp_avg_sq.sqrt(),
 *     / bias_correction2_sqrt, .add_(eps), param.addcdiv_: the same 20
 *     passes in 8 kernels per tensor.
 *   SGD (momentum 0.9, after the first step): torch/optim/sgd.py
 *     _multi_tensor_sgd: _foreach_mul_(bufs) 2 (depth 1),
 *     _foreach_add_(bufs, grads) 3 (depth 2), _foreach_add_(params, bufs)
 *     3 (depth 2) = 8 passes; for-loop _single_tensor_sgd: buf.mul_().add_(),
 *     param.add_(): 3 kernels per tensor; fused _fused_sgd_: read p, g,
 *     buf, write p, buf = 5 passes in one depth-3 op.
 *   Adafactor: transformers src/transformers/optimization.py Adafactor.step
 *     (scale_parameter=False, relative_step=False, beta1 None, weight
 *     decay 0), per parameter: _rms(p) (norm: read p, 2 kernels),
 *     update = grad**2 + eps (4 passes, 2 kernels); 2-D (factored):
 *     row and column means of update (2 passes) each folded into its
 *     factor (mul_, add_: 6 kernels), _approx_sq_grad (row mean, div,
 *     rsqrt_, col rsqrt, outer product written: 1 pass, 5 kernels),
 *     update.mul_(grad) (3 passes, 1 kernel); 1-D: exp_avg_sq.mul_().add_
 *     (5 passes, 2 kernels), rsqrt().mul_(grad) (5 passes, 2 kernels);
 *     then update.div_(clamp(_rms(update) / clip)) (3 passes, 5 kernels),
 *     update.mul_(lr) (2 passes, 1 kernel), p.add_(-update) (5 passes,
 *     2 kernels): 2-D 21 passes in 24 kernels, 1-D 25 passes in 16.
 *   Lion: lucidrains/lion-pytorch lion_pytorch/lion_pytorch.py update_fn
 *     (05258c9), per tensor: p.mul_ (2), exp_avg.clone().mul_().add()
 *     .sign_() (2 + 2 + 3 + 2), p.add_ (3), exp_avg.mul_().add_() (2 + 3):
 *     19 passes in 8 kernels.
 *   bitsandbytes 8-bit AdamW: one blockwise kernel per tensor
 *     (estimate.c counts its bytes, steptime.c its loop). */
#define ANY_IMPL (-1)

/* One row per optimizer and implementation, from the sources above; the
 * first row whose optimizer matches and whose impl matches (or is
 * ANY_IMPL) counts. vector_passes 0: the same as passes. */
static const struct opt_row {
	int optimizer, impl;
	struct vf__opt_kernels k;
} opt_rows[] = {
	{VF_OPT_ADAMW, VF_OPTIMPL_FUSED, {.passes = 7, .foreach = {[3] = 1}, .step_adds = 1}},
	{VF_OPT_ADAMW, VF_OPTIMPL_FOR, {.passes = 20, .per_tensor = 8, .per_vector = 8}},
	{VF_OPT_ADAMW, ANY_IMPL, {.passes = 20, .foreach = {4, 2, 2}}},
	{VF_OPT_SGD, VF_OPTIMPL_FUSED, {.passes = 5, .foreach = {[2] = 1}}},
	{VF_OPT_SGD, VF_OPTIMPL_FOR, {.passes = 8, .per_tensor = 3, .per_vector = 3}},
	{VF_OPT_SGD, ANY_IMPL, {.passes = 8, .foreach = {1, 2}}},
	{VF_OPT_ADAFACTOR, ANY_IMPL, {.passes = 21, .vector_passes = 25, .per_tensor = 24, .per_vector = 16}},
	{VF_OPT_LION, ANY_IMPL, {.passes = 19, .per_tensor = 8, .per_vector = 8}},
};

/* bitsandbytes 8-bit and none: no row (all zero). */
void vf__opt_kernels(int optimizer, int impl, struct vf__opt_kernels *k)
{
	memset(k, 0, sizeof *k);
	for (size_t i = 0; i < sizeof opt_rows / sizeof opt_rows[0]; i++) {
		const struct opt_row *r = &opt_rows[i];
		if (r->optimizer == optimizer && (r->impl == impl || r->impl == ANY_IMPL)) {
			*k = r->k;
			break;
		}
	}
	if (!(k->vector_passes > 0))
		k->vector_passes = k->passes;
}

/* Kernels one foreach op of `depth` tensor lists launches over `tensors`
 * tensors of `elems` elements in all. multi_tensor_apply (pytorch
 * aten/src/ATen/native/cuda/MultiTensorApply.cuh, built with CUDA >= 13:
 * 32 KB kernel arguments) packs each tensor's 65536-element chunks into
 * one launch until it holds depth_to_max_blocks (2240) chunks or
 * depth_to_max_tensors (770, 448, 336, 252, 210 by depth) whole tensors.
 * The chunks are counted as the elements' plus half a chunk per tensor
 * (its last, partial one), at least one per tensor. */
double vf__foreach_launches(int depth, double tensors, double elems)
{
	static const double max_tensors[5] = {770, 448, 336, 252, 210};
	if (!(tensors > 0))
		return 0;
	if (depth < 1)
		depth = 1;
	if (depth > 5)
		depth = 5;
	double chunks = elems / 65536 + tensors / 2;
	if (chunks < tensors)
		chunks = tensors;
	double by_tensors = ceil(tensors / max_tensors[depth - 1]);
	double by_blocks = ceil(chunks / 2240);
	return by_tensors > by_blocks ? by_tensors : by_blocks;
}
