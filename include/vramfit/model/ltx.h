/* ltx.h - the LTX-2 audio-video diffusion transformer from its own file:
 * the transformer config a checkpoint carries in __metadata__["config"]
 * (its "transformer" section) or, without one, what its tensor names and
 * shapes say; the exact parameter count of the block layout that the
 * public ltx-core model code builds from that config.
 *
 * Layout counted (facts read in ltx-core model/transformer/ (the .py files) and
 * model_configurator.py at commit 400fd31; no code copied):
 *  - an attention of query width q, context width c, h heads of d:
 *    q/k RMSNorm weights (2 x hd), to_q q->hd, to_k and to_v c->hd,
 *    to_out hd->q, all with bias; gated attention adds to_gate_logits q->h;
 *  - a block: video self- and text cross-attention (video heads), a GELU
 *    FFN 4x with or without bias, an AdaLN table of 6 (9 with
 *    cross-attention AdaLN) rows; the same for audio; audio->video and
 *    video->audio attention (audio heads, audio inner width) and two
 *    5-row tables; with cross-attention AdaLN a 2-row prompt table per
 *    stream;
 *  - per stream outside the blocks: patchify (in -> D), a caption
 *    projection (caption_channels -> D -> D) unless it sits before the
 *    connector, AdaLN-single (timestep 256 -> D -> D, then D -> k D), a
 *    prompt AdaLN-single (k 2) with cross-attention AdaLN, a 2-row output
 *    table, proj_out (D -> out); audio-video: four more AdaLN-singles
 *    (4, 4, 1, 1 rows).
 *
 * Outside the transformer, in the same single-file checkpoint (ltx-core
 * text_encoders/gemma/embeddings_connector.py, encoder_configurator.py and
 * the trainer's model_loader.py at commit 400fd31):
 *  - the video and audio embedding connectors
 *    (model.diffusion_model.{video,audio}_embeddings_connector.*): each
 *    N blocks of one self-attention (the attention above, gated with
 *    connector_apply_gated_attention) and a 4x GELU FFN (bias with
 *    connector_ff_bias, default true) over heads x head dim, plus 128
 *    learnable registers of that width; defaults 30 x 128, 2 blocks; the
 *    audio one falls back to the video one's keys;
 *  - the text projection (text_embedding_projection.*): one linear from
 *    the text encoder's stacked hidden states (hidden x (layers + 1)) to
 *    caption_channels without bias; with the caption projection before
 *    the connector, one to each stream's width, with bias;
 *  - the video VAE (vae.encoder.*, vae.decoder.*, vae.per_channel_
 *    statistics.*), the audio VAE (audio_vae.*) and the vocoder (vocoder.*). */
#ifndef VRAMFIT_MODEL_LTX_H
#define VRAMFIT_MODEL_LTX_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "vramfit/base/error.h"
#include "vramfit/model/safetensors.h"

struct vf_ltx_arch {
	int64_t layers;
	int64_t heads, head_dim;             /* video stream: width = heads x head_dim */
	int64_t in_channels, out_channels;
	int64_t cross_dim;                   /* video text cross-attention context width */
	int64_t caption_channels;            /* text features fed to the caption projection */
	bool audio;                          /* audio stream present (audio-video model) */
	int64_t audio_heads, audio_head_dim;
	int64_t audio_in_channels, audio_out_channels;
	int64_t audio_cross_dim;
	bool gated_attention;                /* apply_gated_attention */
	bool cross_attention_adaln;
	bool prompt_adaln;                   /* use_prompt_adaln_single */
	bool ff_bias, audio_ff_bias;
	bool caption_projection;             /* in the transformer (not caption_proj_before_connector) */
	bool keyframes_embedding;            /* use_keyframes_abs_pos_embedding */
	/* the embedding connectors (text connectors), video and audio */
	int64_t conn_layers, conn_heads, conn_head_dim, conn_registers;
	int64_t audio_conn_layers, audio_conn_heads, audio_conn_head_dim;
	bool conn_gated, conn_ff_bias;
	char source[16];                     /* "metadata" | "tensors" */
	char unknown[256];                   /* size-bearing keys or values not understood, ", "-joined */
	char assumed[256];                   /* fields the source did not give */
};

/* Whether a transformer config is an LTX one: its _class_name names the
 * LTX/AV transformer, or it carries the LTX-only audio/AV keys. */
bool vf_ltx_config_is(const cJSON *transformer);

/* Read a transformer config (the "transformer" object), with the public
 * code's defaults for absent keys; values that change the layout in ways
 * not counted are named in a->unknown. Errors name `what`. */
vf_status vf_ltx_from_config(const cJSON *transformer, const char *what, struct vf_ltx_arch *a,
			     struct vf_error *err);

/* The transformer config of a safetensors __metadata__ object (a "config"
 * value holding JSON with a "transformer" section), if it is an LTX one.
 * Returns true and fills *a when found. */
bool vf_ltx_from_metadata(const cJSON *metadata, struct vf_ltx_arch *a);

/* Whether a header's tensor names are the LTX transformer's (blocks with
 * attn1/attn2/ff and, for audio-video, audio_attn1 / audio_to_video_attn),
 * under any prefix (model.diffusion_model. in single-file checkpoints). */
bool vf_ltx_tensors_are(const struct vf_safetensors *const *files, size_t nfiles);

/* The architecture from tensor names and shapes alone; the head split is
 * known only with gated attention (its gate has one row per head), else
 * the public default head dims (128 video, 64 audio) are assumed. */
void vf_ltx_from_tensors(const struct vf_safetensors *const *files, size_t nfiles,
			 struct vf_ltx_arch *a);

/* The parts of a checkpoint, by tensor-name prefix (parameters); what no
 * prefix explains is `other`. */
struct vf_ltx_parts {
	int64_t transformer;       /* model.diffusion_model.* but the connectors */
	int64_t video_connector;   /* model.diffusion_model.video_embeddings_connector.* (or
				      the legacy embeddings_connector.*) */
	int64_t audio_connector;   /* model.diffusion_model.audio_embeddings_connector.* */
	int64_t text_projection;   /* text_embedding_projection.* */
	int64_t vae_decoder;       /* vae.decoder.* and vae.per_channel_statistics.* */
	int64_t vae_encoder;       /* vae.encoder.* */
	int64_t audio_vae;         /* audio_vae.* */
	int64_t vocoder;           /* vocoder.* */
	int64_t other;
};

/* Split the tensors of files into those parts. */
void vf_ltx_parts_from_tensors(const struct vf_safetensors *const *files, size_t nfiles,
			       struct vf_ltx_parts *parts);

/* The inspect --json "components" object. Caller owns; cJSON_Delete(). */
cJSON *vf_ltx_parts_to_json(const struct vf_ltx_parts *p);

/* Parameters of the video and audio embedding connectors of that config
 * (exact for the layout above; the audio one only with an audio stream). */
int64_t vf_ltx_connector_params(const struct vf_ltx_arch *a);

/* Parameters of the text projection (the feature extractor) for a text
 * encoder of `hidden` width and `layers` layers (hidden states of the
 * embeddings and every layer are stacked). */
int64_t vf_ltx_text_projection_params(const struct vf_ltx_arch *a, int64_t hidden, int64_t layers);

/* Parameters of that layout (exact). */
int64_t vf_ltx_params(const struct vf_ltx_arch *a);

/* The inspect --json "architecture" object. Caller owns; cJSON_Delete(). */
cJSON *vf_ltx_to_json(const struct vf_ltx_arch *a);

#endif
