/* fuzz-vision-config.c - libFuzzer target for the vision / video config
 * readers (issue 11): JSON text -> vf_vision_from_config (CLIP, SigLIP,
 * LLaVA, diffusers PixArt / Latte / Flux / LTX-Video, and diffusers.c's
 * Wan / Wan VACE / UNet2DConditionModel / AutoencoderKL / the video VAEs
 * (Wan, LTX-Video, LTX-2 video and audio) / AutoencoderDC and any other
 * _class_name) -> tokens -> JSON; the towers of towers.h (Whisper,
 * wav2vec2 / HuBERT / WavLM, SpeechT5 TTS, DINOv2, Qwen2.5-VL, Qwen3-VL, Gemma-3
 * multimodal, LLaVA-OneVision) ->
 * parts -> JSON;
 * and the same text as an LTX transformer config (vf_ltx_from_config, as
 * in a safetensors __metadata__) -> count. Corpus:
 * tests/fuzz/corpus/vision-config/ (tests/fixtures/vision and LTX-2
 * transformer configs) and tests/fuzz/seeds/vision-config (the
 * tests/fixtures/diffusers component configs). */
#include <stddef.h>
#include <stdint.h>

#include "vramfit/base/json.h"
#include "vramfit/model/ltx.h"
#include "vramfit/model/towers.h"
#include "vramfit/model/vision.h"
#include "fuzz-input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cJSON *cfg = fuzz_config_json(data, size);
	struct vf_error err = {0};
	if (!cfg)
		return 0;
	struct vf_vision v;
	if (vf_vision_config_is(cfg) && vf_vision_from_config(cfg, "fuzz/config.json", &v, &err) == VF_OK) {
		if (v.params < 0)
			__builtin_trap(); /* counts never go negative */
		if (vf_vision_tokens(&v, 1024, 768, 33) < 0)
			__builtin_trap();
		cJSON_Delete(vf_vision_to_json(&v));
	}
	/* speech, ViT backbones and VLMs (towers.h) */
	if (vf_towers_config_is(cfg) && vf_towers_from_config(cfg, "fuzz/config.json", &v, &err) == VF_OK) {
		for (int i = 0; i < v.nparts; i++)
			if (v.parts[i].params < 0)
				__builtin_trap();
		cJSON_Delete(vf_vision_to_json(&v));
	}
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(cfg, "transformer");
	struct vf_ltx_arch a;
	if (vf_ltx_from_config(t ? t : cfg, "fuzz/config.json", &a, &err) == VF_OK) {
		if (vf_ltx_params(&a) < 0)
			__builtin_trap(); /* a config that reads is counted */
		cJSON_Delete(vf_ltx_to_json(&a));
	}
	vf_ltx_config_is(cfg);
	cJSON_Delete(cfg);
	return 0;
}
