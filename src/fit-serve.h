/* fit-serve.h - `vramfit fit MODEL --mode infer --engine vllm|llamacpp|any`:
 * the ways to serve a language model on each GPU kind (fit-serve.c). */
#ifndef VRAMFIT_FIT_SERVE_H
#define VRAMFIT_FIT_SERVE_H

#include <stdbool.h>

#include "vramfit/estimate/infer.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/model/arch.h"
#include "vramfit/estimate/setup.h"

/* One row of the ways to serve: a GPU kind (count of it; 0: one), or
 * one machine's unequal cards (ndev > 0: dev[], spec = dev[0]; llama.cpp
 * alone serves them, its layers split by each card's free memory). */
struct vf_serve_gpus {
	const struct vf_gpu_spec *spec;
	int count;
	int ndev;
	const struct vf_gpu_spec *dev[VF_INFER_MAX_DEVICES];
	char label[32]; /* the set's name: "rtx-3090+rtx-4080" */
};

/* For each row the options that serve o->users at o->ctx, fastest decode
 * first (at most `top` per row), as a table or --json: vLLM's and
 * llama.cpp's (o->engine), or with `generate` transformers generate()'s
 * alone. Returns the exit code. */
int vf_fit_serve(const char *model_id, const struct vf_arch *arch, const struct vf_setup *setup,
		 const struct vf_serve_gpus *gpus, int n, const struct vf_infer_opts *o, bool generate, int top,
		 bool json);

#endif
