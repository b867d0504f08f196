/* towers.h - models made of towers that vision.c's families do not cover,
 * read from one config.json into a struct vf_vision (parts with exact
 * counts): Whisper speech encoder-decoders, the wav2vec2 / HuBERT / WavLM
 * encoders and SpeechT5 text-to-speech (lib/model/speech.c); the ViT
 * backbones ViT, DINOv2 (with registers) and SigLIP2; the vision-language
 * models Qwen2-VL, Qwen2.5-VL, Qwen3-VL (and its MoE), Gemma-3
 * multimodal, Llama-4, InternVL (transformers' and the remote-code
 * internvl_chat), LLaVA-NeXT and LLaVA-OneVision (lib/model/vlm.c): each
 * tower, its projector and the language model.
 * Keys that bear on size and are not understood are named in `unknown`. */
#ifndef VRAMFIT_MODEL_TOWERS_H
#define VRAMFIT_MODEL_TOWERS_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "vramfit/base/error.h"
#include "vramfit/model/vision.h"

/* Whether cfg is one of these (by model_type). */
bool vf_towers_config_is(const cJSON *cfg);

/* Read and count; errors (VF_ERR) name `what`, the field and the problem. */
vf_status vf_towers_from_config(const cJSON *cfg, const char *what, struct vf_vision *v,
				struct vf_error *err);

/* Whisper (speech.c). */
vf_status vf__towers_read_whisper(const cJSON *cfg, const char *what, struct vf_vision *v,
				  struct vf_error *err);

/* wav2vec2, HuBERT and WavLM encoders and their heads (speech.c). */
vf_status vf__towers_read_wav2vec2(const cJSON *cfg, const char *what, struct vf_vision *v,
				   struct vf_error *err);

/* SpeechT5ForTextToSpeech (speech.c). */
vf_status vf__towers_read_speecht5(const cJSON *cfg, const char *what, struct vf_vision *v,
				   struct vf_error *err);

/* Name in v->unknown the size-bearing keys of cfg that the reader of
 * `table` (a row of ssm.c's key table) does not read, each with `prefix`. */
void vf__towers_check_keys(const cJSON *cfg, const char *table, const char *prefix,
			   struct vf_vision *v);

#endif
