/* opt-setup.h - the setup flags (what runs: mode, precision, optimizer,
 * batch, LoRA, sharding, the model split, the training stack) as one option
 * table, included by every verb that takes them (estimate, fit). Each row
 * hands its value by name to vf_setup_set() (lib/estimate/setup.c). */
#ifndef VF_OPT_SETUP_H
#define VF_OPT_SETUP_H

#include "parse-options.h"

/* Rows relative to a struct vf_setup. */
extern const struct vf_option vf_setup_options[];

/* Callbacks shared by verbs: a positive count ("1e9", "22B", "500M") into
 * a double field; a whole count of steps into an int64_t field. */
vf_status vf_opt_count(const struct vf_option *o, const char *v, void *base, struct vf_error *err);
vf_status vf_opt_steps(const struct vf_option *o, const char *v, void *base, struct vf_error *err);

struct vf_arch;
struct vf_setup;

/* The tokens a sequence holds against the model's positions (estimate and
 * fit alike): --seq, or in inference a --ctx longer than it.
 *   VF_POS_OK         within max_positions, or the config gives none;
 *   VF_POS_SHORTENED  learned absolute positions and the default --seq past
 *                     them: s->seq set to the table's length, note says so;
 *   VF_POS_REFUSED    learned absolute positions and a --seq/--ctx asked past
 *                     them (the model cannot run longer): note is the usage
 *                     message;
 *   VF_POS_BEYOND     rotary or relative positions: it runs, past its trained
 *                     context; note is the assumption line, what the short
 *                     not-understood entry (every figure approximate). */
enum vf_pos_verdict { VF_POS_OK, VF_POS_SHORTENED, VF_POS_REFUSED, VF_POS_BEYOND };

/* What a video DiT's estimate cannot model in s (LoRA targets beyond the
 * attention projections, ZeRO-1/2, a language model's options, a stack
 * mechanism, CPU offload, checkpointing variants, gradient clipping,
 * zeroed gradients): false with msg the usage message. */
bool vf_opt_dit_setup_ok(const struct vf_setup *s, char *msg, size_t n);
/* What a vision encoder's estimate (vit.c) does not model in s: a
 * language model's options, a stack mechanism, CPU offload, checkpointing
 * variants, gradient clipping, zeroed gradients, a quantized base,
 * ZeRO-1/2 (a VLM takes them all: its language
 * model is the LLM's estimate): false with msg the usage message. */
bool vf_opt_vision_setup_ok(const struct vf_setup *s, bool vlm, char *msg, size_t n);
/* The flag of the first setup knob given in s (VF_SETUP_G_* outside
 * allowed, a stack mechanism, --offload, --head, --modules-to-save), for
 * a verb that takes only some of them: NULL when none. */
const char *vf_opt_setup_flag_given(const struct vf_setup *s, unsigned allowed);
enum vf_pos_verdict vf_opt_position_check(const struct vf_arch *arch, const char *model, struct vf_setup *s,
					  int64_t ctx, char *note, size_t nn, char *what, size_t nw);

#endif
