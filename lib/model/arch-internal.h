/* arch-internal.h - helpers shared by the config readers of arch.c (the
 * common families), arch-families.c (MoE, MLA, legacy and encoder families)
 * and arch-keys.c (size-bearing keys not understood). Not installed. */
#ifndef VRAMFIT_ARCH_INTERNAL_H
#define VRAMFIT_ARCH_INTERNAL_H

#include "vramfit/model/arch.h"

/* No dimension of a real model comes near this; bounding them keeps every
 * product in checked 64-bit arithmetic. */
#define VF_ARCH_MAX_DIM ((int64_t)1 << 40)
/* Counts that loops run over (vf__arch_bound): layers (the deepest public
 * LLM has 126; 4096 keeps a whole-catalog estimate under a second)
 * and experts. */
#define VF_ARCH_MAX_LAYERS ((int64_t)1 << 12)
#define VF_ARCH_MAX_EXPERTS ((int64_t)1 << 16)

/* The bound of the integer field `key`: VF_ARCH_MAX_LAYERS for layer
 * counts, VF_ARCH_MAX_EXPERTS for expert counts, else VF_ARCH_MAX_DIM. */
int64_t vf__arch_bound(const char *key);

/* A family reader: fills `a` from cfg (defaults of its config class). */
typedef vf_status (*vf__arch_reader)(const cJSON *cfg, const char *family, const char *what,
				     struct vf_arch *a, struct vf_error *err);

/* An integer field that, when present and not null, must be a whole number
 * from min to its bound (vf__arch_bound). */
vf_status vf__arch_get_int(const cJSON *cfg, const char *key, int64_t min, int64_t *out,
			   bool *found, const char *what, struct vf_error *err);
/* First of keys[] (NULL-terminated) present; *out untouched when none. */
vf_status vf__arch_get_int_any(const cJSON *cfg, const char *const *keys, int64_t min,
			       int64_t *out, bool *found, const char *what, struct vf_error *err);
/* A boolean field; *out untouched when absent or null. */
vf_status vf__arch_get_bool(const cJSON *cfg, const char *key, bool *out, const char *what,
			    struct vf_error *err);

/* The llama-like reader (arch.c): the common keys with the defaults of
 * the family's row in its table. */
vf_status vf__arch_read_llama_like(const cJSON *cfg, const char *family, const char *what,
				   struct vf_arch *a, struct vf_error *err);

/* Readers of arch-families.c. */
vf_status vf__arch_read_qwen_moe(const cJSON *, const char *, const char *, struct vf_arch *,
				 struct vf_error *);
vf_status vf__arch_read_deepseek(const cJSON *, const char *, const char *, struct vf_arch *,
				 struct vf_error *);
vf_status vf__arch_read_gpt_oss(const cJSON *, const char *, const char *, struct vf_arch *,
				struct vf_error *);
vf_status vf__arch_read_llama4(const cJSON *, const char *, const char *, struct vf_arch *,
			       struct vf_error *);
vf_status vf__arch_read_granitemoe(const cJSON *, const char *, const char *, struct vf_arch *,
				   struct vf_error *);
vf_status vf__arch_read_phi(const cJSON *, const char *, const char *, struct vf_arch *,
			    struct vf_error *);
vf_status vf__arch_read_stablelm(const cJSON *, const char *, const char *, struct vf_arch *,
				 struct vf_error *);
vf_status vf__arch_read_bloom(const cJSON *, const char *, const char *, struct vf_arch *,
			      struct vf_error *);
vf_status vf__arch_read_bert(const cJSON *, const char *, const char *, struct vf_arch *,
			     struct vf_error *);

/* Readers of ssm.c: Mamba-1/2, Jamba, ChatGLM (their own layout). */
vf_status vf__arch_read_mamba(const cJSON *, const char *, const char *, struct vf_arch *,
			      struct vf_error *);
vf_status vf__arch_read_jamba(const cJSON *, const char *, const char *, struct vf_arch *,
			      struct vf_error *);
vf_status vf__arch_read_granite_hybrid(const cJSON *, const char *, const char *,
				       struct vf_arch *, struct vf_error *);
vf_status vf__arch_read_falcon_h1(const cJSON *, const char *, const char *, struct vf_arch *,
				  struct vf_error *);
vf_status vf__arch_read_recurrent_gemma(const cJSON *, const char *, const char *,
					struct vf_arch *, struct vf_error *);
vf_status vf__arch_read_zamba2(const cJSON *, const char *, const char *, struct vf_arch *,
			       struct vf_error *);
vf_status vf__arch_read_nemotron_h(const cJSON *, const char *, const char *, struct vf_arch *,
				   struct vf_error *);
vf_status vf__arch_read_internlm2(const cJSON *, const char *, const char *, struct vf_arch *,
				  struct vf_error *);
vf_status vf__arch_read_chatglm(const cJSON *, const char *, const char *, struct vf_arch *,
				struct vf_error *);
/* The size-bearing keys the readers of ssm.c read (space-separated), or
 * NULL for a family not theirs. */
const char *vf__arch_ssm_keys(const char *family);
/* The "ssm" object of the inspect architecture (nothing for other families). */
void vf__arch_ssm_json(cJSON *o, const struct vf_arch *a);

/* Sliding-window layers from layer_types (["sliding_attention", ...]) or
 * a sliding_window with every layer sliding. */
vf_status vf__arch_read_sliding(const cJSON *cfg, const char *what, struct vf_arch *a,
				struct vf_error *err);

#define VF_TRY(x)                            \
	do {                                 \
		vf_status st_ = (x);         \
		if (st_ != VF_OK)            \
			return st_;          \
	} while (0)

#define VF_KEYS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* Read one integer field into a->field, setting the known bit. */
#define VF_READ(keys, min, field, bit)                                                  \
	do {                                                                            \
		bool f_;                                                                \
		VF_TRY(vf__arch_get_int_any(cfg, keys, min, &a->field, &f_, what, err)); \
		if (f_)                                                                 \
			a->known |= (bit);                                              \
	} while (0)

/* Set a field to a default when unknown. */
#define VF_DEFAULT(field, bit, value)          \
	do {                                   \
		if (!(a->known & (bit))) {     \
			a->field = (value);    \
			a->known |= (bit);     \
		}                              \
	} while (0)

#endif
