/* speech.c - Whisper speech encoder-decoders from their config.json
 * (towers.h), counted exactly.
 *
 * Layout counted (facts read from the public transformers modelling code;
 * no code copied): the encoder's two convolutions (mel -> d, kernel 3, and
 * d -> d, kernel 3, with biases), a position table max_source_positions x d
 * (a parameter, saved in checkpoints), per layer self-attention q, v and
 * out with bias and k without (4 d^2 + 3 d), fc1 d -> f + f, fc2 f -> d + d,
 * two LayerNorms (2d each), a final LayerNorm; the decoder's token table
 * v x d, positions max_target_positions x d, per layer self-attention and
 * cross-attention (4 d^2 + 3 d each), fc1, fc2 and three LayerNorms, a
 * final LayerNorm; proj_out tied to the token table (WhisperConfig:
 * tie_word_embeddings true). */
#include "vramfit/model/towers.h"

#include <stdio.h>
#include <string.h>

#include "arch-internal.h"

#define WMAX ((int64_t)1 << 18)

vf_status vf__towers_read_whisper(const cJSON *c, const char *what, struct vf_vision *v,
				  struct vf_error *err)
{
	/* WhisperConfig defaults (whisper-tiny) */
	struct {
		const char *key;
		int64_t val;
	} k[] = {
		{"d_model", 384},          {"encoder_layers", 4},        {"decoder_layers", 4},
		{"encoder_attention_heads", 6}, {"decoder_attention_heads", 6},
		{"encoder_ffn_dim", 1536}, {"decoder_ffn_dim", 1536},    {"vocab_size", 51865},
		{"num_mel_bins", 80},      {"max_source_positions", 1500},
		{"max_target_positions", 448},
	};
	enum { D, LE, LD, HE, HD, FE, FD, V, MEL, SRC, TGT, NK };
	int64_t x[NK];
	for (int i = 0; i < NK; i++) {
		bool f;
		x[i] = k[i].val;
		VF_TRY(vf__arch_get_int(c, k[i].key, 1, &x[i], &f, what, err));
		if (x[i] > (i == V || i == SRC || i == TGT ? ((int64_t)1 << 24)
			    : i == LE || i == LD   ? 4096
						   : WMAX))
			return vf_error_set(err, VF_ERR, "%s: field %s: too large", what, k[i].key);
	}
	bool tied = true;
	VF_TRY(vf__arch_get_bool(c, "tie_word_embeddings", &tied, what, err));
	int64_t d = x[D], attn = 4 * d * d + 3 * d;
	int64_t enc = x[MEL] * d * 3 + d + d * d * 3 + d + x[SRC] * d +
		      x[LE] * (attn + 4 * d + d * x[FE] + x[FE] + x[FE] * d + d) + 2 * d;
	int64_t dec = x[V] * d * (tied ? 1 : 2) + x[TGT] * d +
		      x[LD] * (2 * attn + 6 * d + d * x[FD] + x[FD] + x[FD] * d + d) + 2 * d;
	snprintf(v->kind, sizeof v->kind, "speech");
	snprintf(v->family, sizeof v->family, "whisper");
	v->stages = 1;
	v->nparts = 2;
	struct vf_vision_part *pe = &v->parts[0], *pd = &v->parts[1];
	snprintf(pe->name, sizeof pe->name, "encoder");
	pe->params = enc;
	pe->layers = x[LE];
	pe->hidden = d;
	pe->heads = x[HE];
	pe->ffn = x[FE];
	pe->tokens = x[SRC]; /* 30 s of audio: 3000 mel frames, halved by conv2's stride */
	pe->trained[0] = true;
	snprintf(pd->name, sizeof pd->name, "decoder");
	pd->params = dec;
	pd->layers = x[LD];
	pd->hidden = d;
	pd->heads = x[HD];
	pd->ffn = x[FD];
	pd->tokens = x[TGT];
	pd->trained[0] = true;
	snprintf(v->assumed, sizeof v->assumed,
		 "30 s audio windows (%lld encoder positions), transcripts up to %lld tokens",
		 (long long)x[SRC], (long long)x[TGT]);
	vf__towers_check_keys(c, "whisper", "", v);
	return VF_OK;
}
