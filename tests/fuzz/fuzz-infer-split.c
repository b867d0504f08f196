/* fuzz-infer-split.c - libFuzzer target for llama.cpp's multi-GPU flags:
 * the input is "RATIOS [MODE [GPUS [NGL]]]" (white space between);
 * RATIOS -> vf_llamacpp_tensor_split_parse (--tensor-split), MODE ->
 * vf_llamacpp_split_parse (--split-mode), then vf_infer_run with
 * --engine llamacpp on a generic 7B transformer over GPUS (1-16) GPUs of
 * 24 GiB with --n-gpu-layers NGL, and vf_llamacpp_layer_device for every
 * layer. Corpus: tests/fuzz/corpus/infer-split/ (the README's and
 * tests/cli/infer.sh's values). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vramfit/estimate/estimate.h"
#include "vramfit/estimate/infer.h"
#include "vramfit/estimate/setup.h"
#include "fuzz-input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char buf[512];
	fuzz_text(data, size, buf, sizeof buf);
	char *word[4] = {0};
	int nw = 0;
	for (char *p = strtok(buf, " \t\n"); p && nw < 4; p = strtok(NULL, " \t\n"))
		word[nw++] = p;
	struct vf_infer_opts o = {.engine = VF_ENGINE_LLAMACPP, .ctx = 4096, .users = 1};
	struct vf_error err = {0};
	int n = 0;
	if (!word[0] || vf_llamacpp_tensor_split_parse(word[0], o.tensor_split, &n, &err) != VF_OK)
		return 0;
	if (word[1])
		vf_llamacpp_split_parse(word[1], &o.split_mode);
	long gpus = word[2] ? strtol(word[2], NULL, 10) : 2;
	if (gpus < 1 || gpus > VF_INFER_MAX_DEVICES)
		return 0;
	if (word[3]) {
		o.n_gpu_layers = strtol(word[3], NULL, 10);
		o.ngl_given = o.n_gpu_layers >= 0 && o.n_gpu_layers <= 1000;
	}
	struct vf_arch a;
	vf_estimate_generic_arch(7000000000LL, &a);
	for (int64_t il = 0; il <= a.layers; il++) {
		int d = vf_llamacpp_layer_device(il, a.layers, o.ngl_given ? o.n_gpu_layers : a.layers + 1,
						 o.tensor_split, (int)gpus);
		if (d >= (int)gpus)
			abort(); /* a device that does not exist */
	}
	struct vf_setup s;
	vf_setup_defaults(&s);
	s.mode = VF_MODE_INFER;
	s.given |= VF_SETUP_G_MODE;
	if (vf_setup_finish(&s, &err) != VF_OK)
		return 0;
	s.gpus = (int16_t)gpus;
	struct vf_gpu_spec g;
	fuzz_gpu_24gib(&g);
	struct vf_infer r;
	if (vf_infer_run(&a, &s, &g, &o, &r, &err) == VF_OK) {
		int64_t layers = 0;
		for (int d = 0; d < r.devices; d++)
			layers += r.device_layers[d];
		if (layers != r.gpu_layers || r.fullest < 0 || r.fullest >= r.devices)
			abort(); /* the devices' layers are the GPU layers */
		cJSON_Delete(vf_infer_to_json(&r));
	}
	return 0;
}
