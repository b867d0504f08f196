/* loratargets.h - LoRA targets matched against a model's own modules.
 *
 * vf_lora_targets_parse (setup.h) reads a list without the model; this
 * checks it against the modules the model has, the way peft's LoraConfig
 * does (a name the model lacks: "Target modules ... not found"; no
 * target_modules on a model type without a default in peft's
 * TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING: "Please specify
 * target_modules"). State-space models and hybrids are matched here:
 * their Mamba mixers have in_proj / x_proj / dt_proj / out_proj, not
 * q_proj / v_proj. */
#ifndef VRAMFIT_ESTIMATE_LORATARGETS_H
#define VRAMFIT_ESTIMATE_LORATARGETS_H

#include "vramfit/base/error.h"
#include "vramfit/base/json.h"
#include "vramfit/estimate/setup.h"
#include "vramfit/model/arch.h"

/* Resolve s->lora_targets for the model a (LoRA only). Without Mamba
 * layers: no --lora-targets is peft's default for a->family, or fails
 * with VF_EUSAGE where peft has none; a list given is left as parsed,
 * except that a Mamba module named fails. On a state-space model or
 * hybrid: the targets become its modules' roles (out_proj the mixer's,
 * o_proj the attention's); a name it does not have, or no
 * --lora-targets (peft has no default for these model types), fails
 * with VF_EUSAGE naming the model type and the modules it has. */
vf_status vf_lora_targets_resolve(const struct vf_arch *a, struct vf_setup *s, struct vf_error *err);

/* Whether the targets are the stack profile's own list (mechanisms.
 * lora_targets of data/stacks/<stack>.json: litgpt's q,v; torchtune's
 * shipped configs'), not --lora-targets and not peft's mapping. A
 * profile's "none" (no LoRA recipe) fails in the resolve without a
 * --lora-targets; "peft" keeps peft's mapping. */
bool vf_lora_targets_stack_list(const struct vf_setup *s);

/* The same rule for a vision or speech tower (ViT, DINOv2, CLIP, SigLIP,
 * Whisper, Wav2Vec2, ...; family as vf_vision names it): no
 * --lora-targets is the stack's own list, or fails with VF_EUSAGE naming
 * the modules the family has (peft has no default for these types). */
vf_status vf_lora_targets_resolve_tower(const char *family, struct vf_setup *s, struct vf_error *err);

/* peft's default targets by model type (data/estimate/lora-targets.json:
 * peft's TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING with the
 * file, constant and commit it was read from) as roles. */
#define VF_LORA_PEFT_MAX 64
struct vf_lora_peft {
	int n;
	struct {
		char type[32];
		unsigned bits;
	} e[VF_LORA_PEFT_MAX];
};

/* Read the file's tree root (what names it in errors): "source" with
 * repo, file, constant and commit; "mapping" of model types (plain
 * names, each once) to non-empty lists of module names peft uses. A
 * problem fails with VF_ERR and one line naming what and the entry. */
vf_status vf_lora_targets_peft_read(const cJSON *root, const char *what, struct vf_lora_peft *out,
				    struct vf_error *err);

#endif
