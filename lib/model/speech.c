/* speech.c - speech models from their config.json (towers.h), counted
 * exactly: Whisper encoder-decoders; the wav2vec2, HuBERT and WavLM
 * encoders with their task heads (below).
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
#include "vramfit/base/json.h"

#define WMAX ((int64_t)1 << 18)
#define CONV_MAX_W2V ((int64_t)1 << 16)
#define W2V_SECONDS 10

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

/* ---- wav2vec2, HuBERT, WavLM ------------------------------------------------ */

/* Append a key not understood to v->unknown. */
static void speech_note(struct vf_vision *v, const char *key)
{
	size_t n = strlen(v->unknown);
	if (n + 2 < sizeof v->unknown)
		snprintf(v->unknown + n, sizeof v->unknown - n, "%s%s", n ? ", " : "", key);
}

/* Layout counted (facts read from the public transformers modelling code,
 * models/wav2vec2/modeling_wav2vec2.py, models/hubert/modular_hubert.py,
 * models/wavlm/modular_wavlm.py; no code copied):
 *  - feature encoder: num_feat_extract_layers 1-D convs, 1 -> conv_dim[0]
 *    then conv_dim[i-1] -> conv_dim[i], kernel conv_kernel[i], bias with
 *    conv_bias; feat_extract_norm "group": a GroupNorm (2 c) after the
 *    first, "layer": a LayerNorm (2 c) after each;
 *  - feature projection: LayerNorm over conv_dim[-1] (HuBERT: only with
 *    feat_proj_layer_norm), a linear conv_dim[-1] -> h with bias;
 *  - masked_spec_embed (h) when mask_time_prob or mask_feature_prob > 0;
 *  - positional conv: h -> h, kernel num_conv_pos_embeddings, groups
 *    num_conv_pos_embedding_groups, bias; weight-normed over dim 2 (g: one
 *    per kernel tap), or (HuBERT conv_pos_batch_norm) a BatchNorm (weight,
 *    bias and the running statistics the checkpoint holds: 4 h + 1);
 *  - encoder LayerNorm (2 h); per layer q, k, v, out with biases, two
 *    LayerNorms, the FFN h -> f -> h with biases; WavLM adds per layer the
 *    gate constant (heads) and gru_rel_pos_linear (head_dim -> 8 + 8), the
 *    first layer the relative bucket table (num_buckets x heads);
 *  - the adapter (wav2vec2 / WavLM add_adapter): a projection h -> o with
 *    its LayerNorm when output_hidden_size differs, num_adapter_layers
 *    convs o -> 2 o of adapter_kernel_size with bias;
 *  - heads by architectures[0]: ForCTC / ForMaskedLM a linear (o or h) ->
 *    vocab_size; ForSequenceClassification the layer weights (L + 1 with
 *    use_weighted_layer_sum), projector h -> classifier_proj_size and
 *    classifier -> labels; ForAudioFrameClassification the layer weights
 *    and h -> labels; wav2vec2 ForPreTraining the quantizer (codevectors
 *    G V x codevector_dim / G, weight_proj conv_dim[-1] -> G V) and
 *    project_hid h -> proj_codevector_dim, project_q codevector_dim -> it. */

enum { W2V_WAV2VEC2, W2V_HUBERT, W2V_WAVLM };

#define W2V_MAXCONV 16

/* A list of n whole numbers 1..max (conv_dim, conv_kernel, conv_stride),
 * or defaults when absent. */
static vf_status w2v_list(const cJSON *c, const char *key, int n, int64_t max, int64_t *out,
			  const char *what, struct vf_error *err)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(c, key);
	if (!j || cJSON_IsNull(j))
		return VF_OK;
	if (!cJSON_IsArray(j) || cJSON_GetArraySize(j) != n)
		return vf_error_set(err, VF_ERR, "%s: field %s: expected a list of %d (one per "
				    "feature-encoder layer)", what, key, n);
	for (int i = 0; i < n; i++) {
		int64_t x;
		if (!vf_json_number_is_i64(cJSON_GetArrayItem(j, i), &x) || x < 1 || x > max)
			return vf_error_set(err, VF_ERR, "%s: field %s: expected whole numbers 1-%lld",
					    what, key, (long long)max);
		out[i] = x;
	}
	return VF_OK;
}

/* Integer keys with defaults, each bounded. */
struct w2v_key {
	const char *key;
	int64_t val, max;
};

static vf_status w2v_ints(const cJSON *c, struct w2v_key *k, int n, const char *what,
			  struct vf_error *err)
{
	for (int i = 0; i < n; i++) {
		bool f;
		VF_TRY(vf__arch_get_int(c, k[i].key, 1, &k[i].val, &f, what, err));
		if (k[i].val > k[i].max)
			return vf_error_set(err, VF_ERR, "%s: field %s: above %lld", what, k[i].key,
					    (long long)k[i].max);
	}
	return VF_OK;
}

/* The feature encoder's parameters and its frames for `samples` of audio. */
static int64_t w2v_features(int n, const int64_t *dim, const int64_t *kern, const int64_t *stride,
			    bool conv_bias, bool layer_norm, int64_t samples, int64_t *frames)
{
	int64_t p = 0, in = 1, len = samples;
	for (int i = 0; i < n; i++) {
		p += in * dim[i] * kern[i] + (conv_bias ? dim[i] : 0);
		if (layer_norm || i == 0)
			p += 2 * dim[i]; /* LayerNorm each, or the first layer's GroupNorm */
		in = dim[i];
		len = len >= kern[i] ? (len - kern[i]) / stride[i] + 1 : 0;
	}
	*frames = len;
	return p;
}

/* The labels of a classification head: id2label's size, num_labels, 2. */
static vf_status w2v_labels(const cJSON *c, int64_t *n, const char *what, struct vf_error *err)
{
	const cJSON *ids = cJSON_GetObjectItemCaseSensitive(c, "id2label");
	bool f;
	*n = 2;
	if (cJSON_IsObject(ids) && cJSON_GetArraySize(ids) > 0) {
		*n = cJSON_GetArraySize(ids);
		return VF_OK;
	}
	VF_TRY(vf__arch_get_int(c, "num_labels", 1, n, &f, what, err));
	return *n > ((int64_t)1 << 24) ? vf_error_set(err, VF_ERR, "%s: field num_labels: too large", what)
				       : VF_OK;
}

/* A real-valued probability key > 0 (mask_time_prob, ...). */
static bool w2v_positive(const cJSON *c, const char *key, double dflt)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(c, key);
	return cJSON_IsNumber(j) ? j->valuedouble > 0 : dflt > 0;
}

/* The task head architectures[0] names; *named false for a head not read
 * here (named in v->unknown by the caller). */
static int64_t w2v_head(const cJSON *c, int fam, int64_t h, int64_t o, int64_t L, int64_t conv_last,
			const int64_t *x, int64_t labels, bool *named, char *task, size_t ntask)
{
	enum { VOCAB, CPS, G, V, CD, PCD };
	const cJSON *a = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(c, "architectures"), 0);
	const char *arch = cJSON_IsString(a) ? a->valuestring : "";
	bool wsum = false;
	const cJSON *ws = cJSON_GetObjectItemCaseSensitive(c, "use_weighted_layer_sum");
	if (cJSON_IsTrue(ws))
		wsum = true;
	snprintf(task, ntask, "%s", arch);
	*named = true;
	if (strstr(arch, "ForCTC") || strstr(arch, "ForMaskedLM"))
		return o * x[VOCAB] + x[VOCAB];
	if (strstr(arch, "ForSequenceClassification"))
		return (wsum ? L + 1 : 0) + h * x[CPS] + x[CPS] + x[CPS] * labels + labels;
	if (strstr(arch, "ForAudioFrameClassification"))
		return (wsum ? L + 1 : 0) + h * labels + labels;
	if (fam == W2V_WAV2VEC2 && strstr(arch, "ForPreTraining"))
		return x[G] * x[V] * (x[CD] / x[G]) + conv_last * x[G] * x[V] + x[G] * x[V] +
		       h * x[PCD] + x[PCD] + x[CD] * x[PCD] + x[PCD];
	size_t n = strlen(arch);
	*named = n == 0 || (n >= 5 && strcmp(arch + n - 5, "Model") == 0);
	if (*named)
		task[0] = '\0';
	return 0;
}

/* The feature encoder (conv_dim, conv_kernel, conv_stride lists of n,
 * conv_bias, feat_extract_norm) and the feature projection (HuBERT:
 * feat_proj_layer_norm): *params, the *frames 10 s of audio become, the
 * last conv width. */
static vf_status w2v_front(const cJSON *c, int fam, int n, int64_t h, int64_t *params, int64_t *frames,
			   int64_t *conv_last, const char *what, struct vf_error *err)
{
	int64_t dim[W2V_MAXCONV], kern[W2V_MAXCONV], stride[W2V_MAXCONV];
	static const int64_t dk[] = {10, 3, 3, 3, 3, 2, 2}, ds[] = {5, 2, 2, 2, 2, 2, 2};
	for (int i = 0; i < W2V_MAXCONV; i++) {
		dim[i] = 512;
		kern[i] = i < 7 ? dk[i] : 2;
		stride[i] = i < 7 ? ds[i] : 2;
	}
	VF_TRY(w2v_list(c, "conv_dim", n, CONV_MAX_W2V, dim, what, err));
	VF_TRY(w2v_list(c, "conv_kernel", n, 1024, kern, what, err));
	VF_TRY(w2v_list(c, "conv_stride", n, 1024, stride, what, err));
	bool conv_bias = false, proj_ln = true;
	VF_TRY(vf__arch_get_bool(c, "conv_bias", &conv_bias, what, err));
	if (fam == W2V_HUBERT)
		VF_TRY(vf__arch_get_bool(c, "feat_proj_layer_norm", &proj_ln, what, err));
	const char *norm = vf_json_get_str(c, "feat_extract_norm");
	if (norm && strcmp(norm, "group") != 0 && strcmp(norm, "layer") != 0)
		return vf_error_set(err, VF_ERR, "%s: field feat_extract_norm: expected \"group\" or "
				    "\"layer\"", what);
	bool layer_norm = norm && strcmp(norm, "layer") == 0;
	*conv_last = dim[n - 1];
	*params = w2v_features(n, dim, kern, stride, conv_bias, layer_norm, (int64_t)W2V_SECONDS * 16000,
			       frames);
	*params += (proj_ln ? 2 * *conv_last : 0) + *conv_last * h + h; /* feature projection */
	return VF_OK;
}

/* The one part of a speech encoder (trained), its kind and family, and
 * the audio it was sized for. */
static void w2v_model(struct vf_vision *v, const char *family, const struct vf_vision_part *p)
{
	snprintf(v->kind, sizeof v->kind, "speech");
	snprintf(v->family, sizeof v->family, "%s", family);
	v->stages = 1;
	v->nparts = 1;
	v->parts[0] = *p;
	snprintf(v->parts[0].name, sizeof v->parts[0].name, "encoder");
	v->parts[0].trained[0] = true;
	snprintf(v->assumed, sizeof v->assumed,
		 "%d s of 16 kHz audio per sample (%lld frames after the feature encoder)", W2V_SECONDS,
		 (long long)p->tokens);
}

vf_status vf__towers_read_wav2vec2(const cJSON *c, const char *what, struct vf_vision *v,
				   struct vf_error *err)
{
	const char *mt = vf_json_get_str(c, "model_type");
	int fam = strcmp(mt, "hubert") == 0 ? W2V_HUBERT : strcmp(mt, "wavlm") == 0 ? W2V_WAVLM : W2V_WAV2VEC2;
	/* Wav2Vec2Config / HubertConfig / WavLMConfig defaults (base models) */
	struct w2v_key k[] = {
		{"hidden_size", 768, WMAX}, {"num_hidden_layers", 12, 4096},
		{"num_attention_heads", 12, WMAX}, {"intermediate_size", 3072, WMAX},
		{"num_feat_extract_layers", 7, W2V_MAXCONV}, {"num_conv_pos_embeddings", 128, 4096},
		{"num_conv_pos_embedding_groups", 16, WMAX}, {"num_buckets", 320, 1 << 20},
		{"output_hidden_size", 0, WMAX}, {"num_adapter_layers", 3, 64},
		{"adapter_kernel_size", 3, 64},
	};
	enum { H, L, HEADS, F, NCONV, KPOS, GPOS, BUCKETS, OUT, NAD, KAD, NK };
	VF_TRY(w2v_ints(c, k, NK, what, err));
	struct w2v_key hk[] = {
		{"vocab_size", 32, 1 << 24},      {"classifier_proj_size", 256, WMAX},
		{"num_codevector_groups", 2, 1024}, {"num_codevectors_per_group", 320, 1 << 16},
		{"codevector_dim", 256, WMAX},    {"proj_codevector_dim", 256, WMAX},
	};
	VF_TRY(w2v_ints(c, hk, 6, what, err));
	int64_t h = k[H].val, nconv = k[NCONV].val, labels;
	VF_TRY(w2v_labels(c, &labels, what, err));
	if (h % k[HEADS].val != 0 || h % k[GPOS].val != 0)
		return vf_error_set(err, VF_ERR, "%s: hidden_size must be a multiple of "
				    "num_attention_heads and num_conv_pos_embedding_groups", what);
	bool stable = false, adapter = false, bn = false;
	VF_TRY(vf__arch_get_bool(c, "do_stable_layer_norm", &stable, what, err)); /* same count */
	if (fam != W2V_HUBERT)
		VF_TRY(vf__arch_get_bool(c, "add_adapter", &adapter, what, err));
	else
		VF_TRY(vf__arch_get_bool(c, "conv_pos_batch_norm", &bn, what, err));
	int64_t frames = 0, conv_last = 0, enc = 0, f = k[F].val, heads = k[HEADS].val;
	VF_TRY(w2v_front(c, fam, (int)nconv, h, &enc, &frames, &conv_last, what, err));
	if (w2v_positive(c, "mask_time_prob", 0.05) || w2v_positive(c, "mask_feature_prob", 0))
		enc += h; /* masked_spec_embed */
	/* pos conv: weight_v and bias, and weight_g (one per tap), or the
	 * BatchNorm before it: weight, bias, running mean and variance and
	 * the batch counter (the checkpoint holds them all) */
	enc += h * (h / k[GPOS].val) * k[KPOS].val + h + (bn ? 4 * h + 1 : k[KPOS].val);
	int64_t layer = 4 * (h * h + h) + 4 * h + h * f + f + f * h + h;
	if (fam == W2V_WAVLM)
		layer += heads + (h / heads) * 8 + 8; /* gru_rel_pos_const, gru_rel_pos_linear */
	enc += 2 * h + k[L].val * layer + (fam == W2V_WAVLM ? k[BUCKETS].val * heads : 0);
	int64_t o = h;
	if (adapter) {
		o = k[OUT].val ? k[OUT].val : h;
		if (o != h)
			enc += h * o + o + 2 * o;
		enc += k[NAD].val * (o * 2 * o * k[KAD].val + 2 * o);
	}
	int64_t hv[6];
	for (int i = 0; i < 6; i++)
		hv[i] = hk[i].val;
	bool named;
	char task[40];
	enc += w2v_head(c, fam, h, o, k[L].val, conv_last, hv, labels, &named, task, sizeof task);
	struct vf_vision_part enc_part = {.params = enc, .layers = k[L].val, .hidden = h, .heads = heads,
					  .ffn = f, .tokens = frames};
	w2v_model(v, fam == W2V_HUBERT ? "hubert" : fam == W2V_WAVLM ? "wavlm" : "wav2vec2", &enc_part);
	if (!named)
		snprintf(v->unknown, sizeof v->unknown, "architectures %.60s (head not counted)", task);
	if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(c, "adapter_attn_dim")))
		speech_note(v, "adapter_attn_dim");
	vf__towers_check_keys(c, v->family, "", v);
	return VF_OK;
}

/* ---- SpeechT5 text-to-speech ------------------------------------------------------ */

/* SpeechT5ForTextToSpeech (transformers models/speecht5/modeling_speecht5.py;
 * facts read, no code copied): the text encoder prenet (token table
 * vocab x h, the scaled positions' alpha), the encoder (a LayerNorm, per
 * layer q, k, v, out with biases, two LayerNorms, the FFN h -> f -> h with
 * biases; the relative position table 2 x encoder_max_relative_position x
 * head_dim), the speech decoder prenet (speech_decoder_prenet_layers
 * linears mel -> units -> units, the final linear units -> h, alpha, the
 * speaker projection speaker_embedding_dim + h -> h), the decoder (per
 * layer self- and cross-attention with biases, three LayerNorms, the FFN)
 * and the postnet (feat_out h -> mel x reduction, prob_out h ->
 * reduction, speech_decoder_postnet_layers convs without bias, mel ->
 * units -> ... -> mel, each with a BatchNorm: weight, bias and the running
 * statistics the checkpoint holds). */
vf_status vf__towers_read_speecht5(const cJSON *c, const char *what, struct vf_vision *v,
				   struct vf_error *err)
{
	/* SpeechT5Config defaults (microsoft/speecht5_tts) */
	struct w2v_key k[] = {
		{"vocab_size", 81, 1 << 24},          {"hidden_size", 768, WMAX},
		{"encoder_layers", 12, 4096},         {"encoder_attention_heads", 12, WMAX},
		{"encoder_ffn_dim", 3072, WMAX},      {"decoder_layers", 6, 4096},
		{"decoder_attention_heads", 12, WMAX}, {"decoder_ffn_dim", 3072, WMAX},
		{"num_mel_bins", 80, WMAX},           {"speech_decoder_prenet_layers", 2, 1024},
		{"speech_decoder_prenet_units", 256, WMAX}, {"speech_decoder_postnet_layers", 5, 1024},
		{"speech_decoder_postnet_units", 256, WMAX}, {"speech_decoder_postnet_kernel", 5, 1024},
		{"speaker_embedding_dim", 512, WMAX}, {"reduction_factor", 2, 1024},
		{"encoder_max_relative_position", 160, 1 << 20},
	};
	enum { VOC, H, LE, HE, FE, LD, HD, FD, MEL, PL, PU, QL, QU, QK, SPK, RED, REL, NK };
	VF_TRY(w2v_ints(c, k, NK, what, err));
	int64_t h = k[H].val, he = k[HE].val, mel = k[MEL].val, u = k[PU].val, q = k[QU].val;
	if (h % he != 0)
		return vf_error_set(err, VF_ERR, "%s: hidden_size must be a multiple of encoder_attention_heads",
				    what);
	int64_t attn = 4 * (h * h + h);
	int64_t enc = k[VOC].val * h + 1                                             /* prenet */
		      + 2 * h + k[LE].val * (attn + 4 * h + h * k[FE].val + k[FE].val + k[FE].val * h + h)
		      + 2 * k[REL].val * (h / he);                                  /* relative positions */
	int64_t dec = mel * u + u + (k[PL].val - 1) * (u * u + u) + u * h + h + 1 /* prenet */
		      + (k[SPK].val + h) * h + h                                    /* speaker projection */
		      + k[LD].val * (2 * attn + 6 * h + h * k[FD].val + k[FD].val + k[FD].val * h + h);
	int64_t post = h * mel * k[RED].val + mel * k[RED].val + h * k[RED].val + k[RED].val;
	for (int64_t i = 0; i < k[QL].val; i++) {
		int64_t in = i == 0 ? mel : q, out = i == k[QL].val - 1 ? mel : q;
		post += in * out * k[QK].val + 4 * out + 1; /* conv, BatchNorm */
	}
	snprintf(v->kind, sizeof v->kind, "speech");
	snprintf(v->family, sizeof v->family, "speecht5-tts");
	v->stages = 1;
	v->nparts = 2;
	struct vf_vision_part *pe = &v->parts[0], *pd = &v->parts[1];
	snprintf(pe->name, sizeof pe->name, "text_encoder");
	pe->params = enc;
	pe->layers = k[LE].val;
	pe->hidden = h;
	pe->heads = he;
	pe->ffn = k[FE].val;
	pe->tokens = 200;
	pe->trained[0] = true;
	snprintf(pd->name, sizeof pd->name, "speech_decoder");
	pd->params = dec + post;
	pd->layers = k[LD].val;
	pd->hidden = h;
	pd->heads = k[HD].val;
	pd->ffn = k[FD].val;
	/* 10 s of speech: 625 mel frames (16 ms hop), reduction_factor per step */
	pd->tokens = (625 + k[RED].val - 1) / k[RED].val;
	pd->trained[0] = true;
	snprintf(v->assumed, sizeof v->assumed,
		 "200 text tokens and 10 s of speech per sample (625 mel frames, %lld decoder steps)",
		 (long long)pd->tokens);
	vf__towers_check_keys(c, "speecht5", "", v);
	return VF_OK;
}
