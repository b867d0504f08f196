/* stack.h - training stacks as profiles (data/stacks/<name>.json): which
 * mechanisms transformers + peft (hf), torchtune, litgpt and the LTX-2
 * trainer turn on by default (precision of LoRA and full fine-tuning,
 * adapter dtype, loss implementation and chunking, torch.compile,
 * activation offload, optimizer-in-backward, how a quantized base is
 * stored), each citing the source file it was read from. A flag
 * (--loss, --compile, ...) overrides the profile's value. */
#ifndef VRAMFIT_STACK_H
#define VRAMFIT_STACK_H

#include <cjson/cJSON.h>

#include "vramfit/base/error.h"
#include "vramfit/estimate/setup.h"

#define VF_STACK_MAX_FILE (256u << 10)

/* Set one stack flag by name without dashes ("stack", "loss",
 * "adapter-dtype", "compile", "no-compile", "activation-offload",
 * "no-activation-offload", "optimizer-in-backward"). VF_EUSAGE naming the
 * flag on a bad value. */
vf_status vf_stack_set(struct vf_setup *s, const char *name, const char *value,
		       struct vf_error *err);

/* Only the profile's mechanisms.lora_targets (the recipe's own LoRA
 * targets when --lora-targets is not given), for the resolve that runs
 * before the rest of the profile (loratargets.h). */
vf_status vf_stack_apply_lora_targets(struct vf_setup *s, struct vf_error *err);

/* Apply data/stacks/<s->stack>.json to what no flag set (and precision
 * when --precision was not given). Fails naming the file and field. */
vf_status vf_stack_apply(struct vf_setup *s, struct vf_error *err);

/* Apply a profile already parsed (what names it in errors). */
vf_status vf_stack_apply_json(struct vf_setup *s, const cJSON *profile, const char *what,
			      struct vf_error *err);

/* Add the stack fields to a setup JSON object. */
void vf_stack_to_json(const struct vf_setup *s, cJSON *o);

#endif
