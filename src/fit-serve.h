/* fit-serve.h - `vramfit fit MODEL --mode infer --engine vllm|llamacpp|any`:
 * the ways to serve a language model on each GPU kind (fit-serve.c). */
#ifndef VRAMFIT_FIT_SERVE_H
#define VRAMFIT_FIT_SERVE_H

#include <stdbool.h>

#include "vramfit/estimate/infer.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/model/arch.h"
#include "vramfit/estimate/setup.h"

/* For each GPU kind (count[i] of them; 0: one) the options that serve
 * o->users at o->ctx, fastest decode first (at most `top`
 * per kind), as a table or --json. Returns the exit code. */
int vf_fit_serve(const char *model_id, const struct vf_arch *arch, const struct vf_setup *setup,
		 const struct vf_gpu_spec *const *gpus, const int *count, int n,
		 const struct vf_infer_opts *o, int top, bool json);

#endif
