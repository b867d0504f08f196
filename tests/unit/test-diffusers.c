/* test-diffusers.c - issue 23 (the diffusion half): diffusers component
 * configs counted exactly (Wan, UNet2DConditionModel in its config forms,
 * AutoencoderKL, AutoencoderKLWan), encoders as what they are (T5 / UMT5
 * encoder stacks, encoder task heads), classes not understood named; a
 * pipeline folder planned as a training run (pipeline.h) and estimated
 * with its encoders and VAE as loaded. Counts here are written out by hand
 * from the modules each constructor builds, independently of
 * lib/model/diffusers.c, and agree with the published totals in the
 * comments (tests/cli/diffusers.sh checks them against generated headers). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vf_test.h"
#include "vramfit/base/json.h"
#include "vramfit/estimate/estimate.h"
#include "vramfit/estimate/pipeline.h"
#include "vramfit/model/arch.h"
#include "vramfit/model/model.h"
#include "vramfit/model/vision.h"

typedef int64_t I;

static vf_status vision_of(const char *json, struct vf_vision *v)
{
	cJSON *j = cJSON_Parse(json);
	struct vf_error err = {0};
	CHECK(j != NULL);
	CHECK(vf_vision_config_is(j));
	vf_status st = vf_vision_from_config(j, "config.json", v, &err);
	cJSON_Delete(j);
	return st;
}

static I arch_count(const char *json, struct vf_arch *a)
{
	cJSON *j = cJSON_Parse(json);
	struct vf_error err = {0};
	struct vf_param_groups g;
	CHECK(j != NULL);
	vf_status st = vf_arch_from_config(j, "config.json", a, &err);
	cJSON_Delete(j);
	CHECK_INT(st, VF_OK);
	return st == VF_OK && vf_arch_param_groups(a, &g) ? g.total : -1;
}

/* Wan 2.1 T2V 14B: 14,288,491,584 (the checkpoint's total). */
static void test_wan(void)
{
	struct vf_vision v;
	CHECK_INT(vision_of("{\"_class_name\":\"WanTransformer3DModel\",\"num_attention_heads\":40,"
			    "\"attention_head_dim\":128,\"ffn_dim\":13824,\"num_layers\":40,\"patch_size\":[1,2,2]}",
			    &v),
		  VF_OK);
	I D = 5120, F = 13824;
	/* per block: two attentions (q k v out with biases, q/k norms), the
	 * cross-attention norm, the FFN, the modulation table */
	I block = 2 * (4 * (D * D + D) + 2 * D) + 2 * D + (D * F + F) + (F * D + D) + 6 * D;
	I total = 16 * 4 * D + D                       /* patch conv 1x2x2 */
		  + (256 * D + D) + (D * D + D)        /* time embedder */
		  + (D * 6 * D + 6 * D)                /* time projection */
		  + (4096 * D + D) + (D * D + D)       /* text embedder */
		  + 40 * block + (D * 64 + 64) + 2 * D; /* blocks, proj_out, table */
	CHECK_INT(total, 14288491584LL);
	CHECK_INT(v.params, total);
	CHECK_STR(v.kind, "dit");
	CHECK_STR(v.family, "wan");
	CHECK_INT(v.unknown[0], 0);
	/* 832x480x81: 52 x 30 x (1 + 80 / 4) tokens */
	CHECK_INT(vf_vision_tokens(&v, 832, 480, 81), 52 * 30 * 21);
}

/* SD 1.5: 859,520,964 (down 3 cross-attention blocks and a plain one,
 * 768-wide text); SDXL: 2,567,463,684 (lists per block, text_time). */
static void test_unet(void)
{
	struct vf_vision v;
	CHECK_INT(vision_of("{\"_class_name\":\"UNet2DConditionModel\",\"cross_attention_dim\":768}", &v), VF_OK);
	CHECK_INT(v.params, 859520964LL);
	CHECK_STR(v.kind, "unet");
	CHECK_INT(v.nlevels, 4);
	/* blocks at 320: 2 down + 3 up; the mid block's one at the last level */
	CHECK_INT(v.levels[0].attn_blocks, 5);
	CHECK_INT(v.levels[3].attn_blocks, 1);
	CHECK_INT(v.levels[3].resnets, 2 + 3 + 2);
	I sum = 0;
	for (int i = 0; i < v.nlevels; i++)
		sum += v.levels[i].params;
	CHECK(sum < v.params); /* the level params leave out conv_in, embeddings, conv_out */
	CHECK_INT(vision_of("{\"_class_name\":\"UNet2DConditionModel\",\"addition_embed_type\":\"text_time\","
			    "\"addition_time_embed_dim\":256,\"attention_head_dim\":[5,10,20],"
			    "\"block_out_channels\":[320,640,1280],\"cross_attention_dim\":2048,"
			    "\"down_block_types\":[\"DownBlock2D\",\"CrossAttnDownBlock2D\",\"CrossAttnDownBlock2D\"],"
			    "\"up_block_types\":[\"CrossAttnUpBlock2D\",\"CrossAttnUpBlock2D\",\"UpBlock2D\"],"
			    "\"projection_class_embeddings_input_dim\":2816,\"transformer_layers_per_block\":[1,2,10],"
			    "\"use_linear_projection\":true,\"sample_size\":128}",
			    &v),
		  VF_OK);
	CHECK_INT(v.params, 2567463684LL);
	CHECK_INT(v.unknown[0], 0);
	CHECK_INT(v.levels[2].attn_blocks, 2 * 10 + 3 * 10 + 10);
	CHECK_INT(vf_vision_tokens(&v, 1024, 1024, 1), 128 * 128);
	/* a tiny UNet with one block of each kind, counted by hand: conv_in,
	 * time embedding (32 -> 128 -> 128), down: one residual block 32->32
	 * and a transformer (inner 32, text 16), no downsampler (last block);
	 * mid: two residual blocks around a transformer; up: two residual
	 * blocks (64 -> 32 with the skip) each with a transformer; GroupNorm,
	 * conv_out */
	CHECK_INT(vision_of("{\"_class_name\":\"UNet2DConditionModel\",\"block_out_channels\":[32],"
			    "\"down_block_types\":[\"CrossAttnDownBlock2D\"],\"up_block_types\":[\"CrossAttnUpBlock2D\"],"
			    "\"layers_per_block\":1,\"cross_attention_dim\":16,\"attention_head_dim\":4,"
			    "\"norm_num_groups\":8}",
			    &v),
		  VF_OK);
	I C = 32, T = 128, X = 16;
	I res_same = 2 * C + C * C * 9 + C + T * C + C + 2 * C + C * C * 9 + C;
	I res_skip = 2 * 2 * C + 2 * C * C * 9 + C + T * C + C + 2 * C + C * C * 9 + C + 2 * C * C + C;
	I blk = 2 * C + 3 * C * C + C * C + C + 2 * C + C * C + 2 * X * C + C * C + C + 2 * C + C * 8 * C + 8 * C +
		4 * C * C + C;
	I tr = 2 * C + C * C + C + blk + C * C + C;
	I tiny = 4 * C * 9 + C + C * T + T + T * T + T + res_same + tr + (2 * res_same + tr) + 2 * (res_skip + tr) +
		 2 * C + C * 4 * 9 + 4;
	CHECK_INT(v.params, tiny);
	/* a list of the wrong length is an error naming the field */
	CHECK_INT(vision_of("{\"_class_name\":\"UNet2DConditionModel\",\"attention_head_dim\":[8,8]}", &v), VF_ERR);
	/* the largest values accepted count without overflow */
	CHECK_INT(vision_of("{\"_class_name\":\"UNet2DConditionModel\",\"block_out_channels\":[65536,65536,65536,65536],"
			    "\"layers_per_block\":1024,\"transformer_layers_per_block\":1024,"
			    "\"cross_attention_dim\":65536,\"attention_head_dim\":1}",
			    &v),
		  VF_OK);
	CHECK(v.params > 0);
}

/* AutoencoderKL (SD / SDXL): 83,653,863; AutoencoderKLWan (Wan 2.1):
 * 126,892,531. */
static void test_vaes(void)
{
	struct vf_vision v;
	CHECK_INT(vision_of("{\"_class_name\":\"AutoencoderKL\",\"block_out_channels\":[128,256,512,512],"
			    "\"down_block_types\":[\"DownEncoderBlock2D\",\"DownEncoderBlock2D\",\"DownEncoderBlock2D\","
			    "\"DownEncoderBlock2D\"],\"up_block_types\":[\"UpDecoderBlock2D\",\"UpDecoderBlock2D\","
			    "\"UpDecoderBlock2D\",\"UpDecoderBlock2D\"],\"layers_per_block\":2,\"latent_channels\":4}",
			    &v),
		  VF_OK);
	CHECK_INT(v.params, 83653863LL);
	CHECK_STR(v.kind, "vae");
	CHECK_INT(v.spatial_compression, 8);
	CHECK_INT(v.parts[1].params, 49490199LL); /* the decoder (and post_quant_conv) */
	CHECK_INT(vision_of("{\"_class_name\":\"AutoencoderKLWan\",\"base_dim\":96,\"z_dim\":16}", &v), VF_OK);
	CHECK_INT(v.params, 126892531LL);
	CHECK_INT(v.parts[1].hidden, 96);
	CHECK_INT(v.temporal_compression, 4);
	/* a one-level Wan VAE by hand: conv_in 3->8, one residual block,
	 * mid (two residual blocks around attention), norm_out, conv_out to
	 * 2z, quant convs; decoder: conv_in z->8, mid, two residual blocks,
	 * norm_out, conv_out */
	CHECK_INT(vision_of("{\"_class_name\":\"AutoencoderKLWan\",\"base_dim\":8,\"z_dim\":2,\"dim_mult\":[1],"
			    "\"num_res_blocks\":1,\"temperal_downsample\":[]}",
			    &v),
		  VF_OK);
	I d = 8, z = 2;
	I res = d + d * d * 27 + d + d + d * d * 27 + d;
	I attn = d + d * 3 * d + 3 * d + d * d + d;
	I enc = 3 * d * 27 + d + res + 2 * res + attn + d + d * 2 * z * 27 + 2 * z + 4 * z * z + 2 * z;
	I dec = z * z + z + z * d * 27 + d + 2 * res + attn + 2 * res + d + d * 3 * 27 + 3;
	CHECK_INT(v.params, enc + dec);
}

/* A class not read: named, not counted, never an error. */
static void test_unknown_class(void)
{
	struct vf_vision v;
	CHECK_INT(vision_of("{\"_class_name\":\"LuminaNextDiT2DModel\",\"num_layers\":20}", &v), VF_OK);
	CHECK_STR(v.kind, "unknown");
	CHECK_INT(v.params, 0);
	CHECK_CONTAINS(v.unknown, "LuminaNextDiT2DModel");
	/* keys no reader judged are named */
	CHECK_INT(vision_of("{\"_class_name\":\"WanTransformer3DModel\",\"num_experts\":8}", &v), VF_OK);
	CHECK_STR(v.unknown, "num_experts");
}

/* T5 v1.1 XXL as T5EncoderModel: 4,762,310,656 (was the whole
 * encoder-decoder, +134 %); UMT5-XXL as UMT5EncoderModel: 5,680,910,336
 * (a relative table in every layer); XLM-R heads. */
static void test_encoders(void)
{
	struct vf_arch a;
	/* a decoder's bare backbone (a pipeline's text encoder): no lm_head */
	I bb = arch_count("{\"architectures\":[\"LlamaModel\"],\"model_type\":\"llama\",\"hidden_size\":64,"
			  "\"intermediate_size\":96,\"num_hidden_layers\":2,\"num_attention_heads\":4,"
			  "\"vocab_size\":100,\"tie_word_embeddings\":false}",
			  &a);
	CHECK_INT(bb, 100 * 64 + 2 * (4 * 64 * 64 + 3 * 64 * 96 + 2 * 64) + 64);
	CHECK_STR(a.task, "LlamaModel");
	I H = 4096, F = 10240, L = 24, N = 64;
	I t5 = arch_count("{\"architectures\":[\"T5EncoderModel\"],\"model_type\":\"t5\",\"d_model\":4096,"
			  "\"d_kv\":64,\"d_ff\":10240,\"num_layers\":24,\"num_decoder_layers\":24,\"num_heads\":64,"
			  "\"feed_forward_proj\":\"gated-gelu\",\"tie_word_embeddings\":false,\"vocab_size\":32128}",
			  &a);
	CHECK_INT(t5, 32128 * H + L * (4 * H * H + 3 * H * F + 2 * H) + 32 * N + H);
	CHECK_INT(t5, 4762310656LL);
	CHECK_INT(a.decoder_layers, 0);
	CHECK_STR(a.task, "T5EncoderModel");
	I umt5 = arch_count("{\"architectures\":[\"UMT5EncoderModel\"],\"model_type\":\"umt5\",\"d_model\":4096,"
			    "\"d_kv\":64,\"d_ff\":10240,\"num_layers\":24,\"num_heads\":64,"
			    "\"feed_forward_proj\":\"gated-gelu\",\"vocab_size\":256384}",
			    &a);
	CHECK_INT(umt5, 256384 * H + L * (4 * H * H + 3 * H * F + 2 * H + 32 * N) + H);
	CHECK_INT(a.approximate, false);
	/* the whole UMT5 (encoder-decoder, untied by default): both stacks'
	 * tables in every self-attention, and the lm_head */
	I full = arch_count("{\"model_type\":\"umt5\",\"d_model\":64,\"d_kv\":8,\"d_ff\":128,\"num_layers\":2,"
			    "\"num_heads\":8,\"vocab_size\":100}",
			    &a);
	I h = 64, f = 128;
	CHECK_INT(full, 2 * 100 * h + 2 * (4 * h * h + 2 * h * f + 2 * h + 32 * 8) + h +
				2 * (8 * h * h + 2 * h * f + 3 * h + 32 * 8) + h);
	H = 768;
	I base = 250002 * H + 514 * H + H + 2 * H + 12 * (4 * (H * H + H) + 2 * H * 3072 + 3072 + H + 4 * H);
	const char *x = "\"model_type\":\"xlm-roberta\",\"hidden_size\":768,\"intermediate_size\":3072,"
			"\"max_position_embeddings\":514,\"num_attention_heads\":12,\"num_hidden_layers\":12,"
			"\"type_vocab_size\":1,\"vocab_size\":250002";
	char buf[512];
	snprintf(buf, sizeof buf, "{\"architectures\":[\"XLMRobertaForMaskedLM\"],%s}", x);
	CHECK_INT(arch_count(buf, &a), base + H * H + H + 2 * H + 250002); /* no pooler; the head */
	snprintf(buf, sizeof buf, "{\"architectures\":[\"XLMRobertaForSequenceClassification\"],\"id2label\":"
				  "{\"0\":\"a\",\"1\":\"b\",\"2\":\"c\"},%s}", x);
	CHECK_INT(arch_count(buf, &a), base + H * H + H + H * 3 + 3);
	snprintf(buf, sizeof buf, "{\"architectures\":[\"XLMRobertaModel\"],%s}", x);
	CHECK_INT(arch_count(buf, &a), base + H * H + H); /* the pooler */
	snprintf(buf, sizeof buf, "{\"architectures\":[\"XLMRobertaForCausalLM\"],%s}", x);
	arch_count(buf, &a);
	CHECK(a.approximate);
	CHECK_CONTAINS(a.not_understood, "XLMRobertaForCausalLM");
	/* CLIP-L text with its projection: 123,060,480 + 768 x 768 */
	struct vf_vision v;
	CHECK_INT(vision_of("{\"architectures\":[\"CLIPTextModelWithProjection\"],\"model_type\":\"clip_text_model\","
			    "\"hidden_size\":768,\"intermediate_size\":3072,\"num_attention_heads\":12,"
			    "\"num_hidden_layers\":12,\"projection_dim\":768}",
			    &v),
		  VF_OK);
	CHECK_INT(v.params, 123060480LL + 768 * 768);
	CHECK_INT(v.unknown[0], 0);
}

/* ---- a pipeline folder ---------------------------------------------------- */

static char dir[64];

static const char *path(const char *rel)
{
	static char buf[8][256];
	static int k;
	k = (k + 1) % 8;
	snprintf(buf[k], sizeof buf[k], "%s/%s", dir, rel);
	return buf[k];
}

static void put(const char *rel, const char *text)
{
	FILE *f = fopen(path(rel), "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void test_pipeline(void)
{
	snprintf(dir, sizeof dir, "/tmp/vf-diffusers.XXXXXX");
	CHECK(mkdtemp(dir) != NULL);
	mkdir(path("transformer"), 0755);
	mkdir(path("transformer_2"), 0755);
	mkdir(path("text_encoder"), 0755);
	mkdir(path("vae"), 0755);
	mkdir(path("scheduler"), 0755);
	put("model_index.json", "{\"_class_name\":\"WanPipeline\"}");
	put("scheduler/scheduler_config.json", "{}");
	const char *wan = "{\"_class_name\":\"WanTransformer3DModel\",\"num_attention_heads\":12,"
			  "\"attention_head_dim\":128,\"ffn_dim\":8960,\"num_layers\":30}";
	put("transformer/config.json", wan);
	put("transformer_2/config.json", wan);
	put("text_encoder/config.json",
	    "{\"architectures\":[\"UMT5EncoderModel\"],\"model_type\":\"umt5\",\"d_model\":4096,\"d_kv\":64,"
	    "\"d_ff\":10240,\"num_layers\":24,\"num_heads\":64,\"feed_forward_proj\":\"gated-gelu\","
	    "\"vocab_size\":256384}");
	put("vae/config.json", "{\"_class_name\":\"AutoencoderKLWan\",\"base_dim\":96,\"z_dim\":16}");
	struct vf_model *m = NULL;
	struct vf_error err = {0};
	CHECK_INT(vf_model_load(dir, &m, &err), VF_OK);
	if (!m)
		return;
	CHECK_STR(m->format, "diffusers");
	CHECK_INT(m->ncomponents, 4);
	CHECK_INT(m->files, -1); /* configs alone */
	CHECK(vf_pipeline_is(m));
	struct vf_pipeline p;
	struct vf_dit d;
	struct vf_pipeline_opts o = {0};
	CHECK_INT(vf_pipeline_plan(m, &o, &p, &d, &err), VF_OK);
	CHECK_STR(p.denoiser->name, "transformer");
	CHECK_INT(d.params, 1418996800LL);
	CHECK_INT(d.resident_te_params, 5680910336LL);
	CHECK_INT(d.resident_te_embedding, 256384LL * 4096);
	CHECK_INT(d.resident_vae_params, 126892531LL);
	CHECK_INT(d.vae_params, 73295603LL);
	CHECK_INT(d.vae_encoder_channels, 96);
	CHECK_INT(d.spatial_compression, 16);
	CHECK_INT(d.temporal_compression, 4);
	for (size_t i = 0; i < p.nparts; i++)
		if (strcmp(p.parts[i].m->name, "transformer_2") == 0)
			CHECK_INT(p.parts[i].role, VF_ROLE_NOT_LOADED);
	CHECK_CONTAINS(p.about, "transformer_2 not loaded");
	/* the setup: LoRA r16 on q k v o, bf16, checkpointing */
	struct vf_setup s;
	vf_setup_defaults(&s);
	CHECK_INT(vf_setup_set(&s, "mode", "lora", &err), VF_OK);
	CHECK_INT(vf_setup_set(&s, "precision", "bf16", &err), VF_OK);
	CHECK_INT(vf_setup_set(&s, "video", "832x480x81", &err), VF_OK);
	s.lora_targets = VF_LORA_Q | VF_LORA_K | VF_LORA_V | VF_LORA_O;
	s.grad_ckpt = true;
	s.audio = false;
	CHECK_INT(vf_setup_finish(&s, &err), VF_OK);
	struct vf_estimate with, without;
	vf_estimate_dit(&d, &s, NULL, &with);
	/* the encoders and the VAE are weights of the step, in bf16 */
	I lora = 30 * 2 * 4 * 16 * (1536 + 1536);
	CHECK_INT(with.trainable_params, lora);
	CHECK_INT(with.weights_full, 2 * (1418996800LL + 5680910336LL + 126892531LL) + 4 * lora);
	o.precomputed_embeddings = o.precomputed_latents = true;
	CHECK_INT(vf_pipeline_plan(m, &o, &p, &d, &err), VF_OK);
	CHECK_INT(d.resident_te_params, 0);
	CHECK_INT(d.resident_vae_params, 0);
	CHECK_INT(d.vae_encoder_channels, 0);
	vf_estimate_dit(&d, &s, NULL, &without);
	CHECK_INT(without.weights_full, 2 * 1418996800LL + 4 * lora);
	CHECK(without.peak_bytes < with.peak_bytes);
	/* --train: another expert, or a name that is not there */
	o.train = "transformer_2";
	CHECK_INT(vf_pipeline_plan(m, &o, &p, &d, &err), VF_OK);
	CHECK_STR(p.denoiser->name, "transformer_2");
	o.train = "unet";
	CHECK_INT(vf_pipeline_plan(m, &o, &p, &d, &err), VF_EUSAGE);
	CHECK_CONTAINS(err.msg, "components: text_encoder, transformer, transformer_2, vae");
	o.train = "vae";
	CHECK_INT(vf_pipeline_plan(m, &o, &p, &d, &err), VF_ERR);
	CHECK_CONTAINS(err.msg, "not understood as a denoiser");
	vf_model_free(m);
	const char *rels[] = {"transformer/config.json", "transformer_2/config.json", "text_encoder/config.json",
			      "vae/config.json", "scheduler/scheduler_config.json", "model_index.json",
			      "transformer", "transformer_2", "text_encoder", "vae", "scheduler"};
	for (size_t i = 0; i < sizeof rels / sizeof rels[0]; i++)
		remove(path(rels[i]));
	rmdir(dir);
}

/* A UNet by level: activations grow with the resolution, and without
 * checkpointing hold more than with it. */
static void test_unet_estimate(void)
{
	struct vf_vision v;
	CHECK_INT(vision_of("{\"_class_name\":\"UNet2DConditionModel\",\"cross_attention_dim\":768}", &v), VF_OK);
	struct vf_dit d;
	const char *about;
	struct vf_error err = {0};
	CHECK_INT(vf_dit_from_vision(&v, v.params, &d, &about, &err), VF_OK);
	CHECK_INT(d.nlevels, 4);
	CHECK_INT(d.text_encoder_params, 123060480LL); /* SD 1.5's CLIP-L by its 768-wide text */
	struct vf_setup s;
	vf_setup_defaults(&s);
	CHECK_INT(vf_setup_set(&s, "mode", "lora", &err), VF_OK);
	CHECK_INT(vf_setup_set(&s, "video", "512x512x1", &err), VF_OK);
	s.lora_targets = VF_LORA_Q | VF_LORA_K | VF_LORA_V | VF_LORA_O;
	s.grad_ckpt = true;
	CHECK_INT(vf_setup_finish(&s, &err), VF_OK);
	struct vf_estimate a, b, c;
	vf_estimate_dit(&d, &s, NULL, &a);
	/* LoRA on the 16 transformer blocks: 2 x 320-wide at the first
	 * level's 5, ..., 768-wide text */
	I r = 0;
	int w[4] = {320, 640, 1280, 1280};
	for (int l = 0; l < 4; l++)
		r += v.levels[l].attn_blocks * (8 * w[l] + 2 * (w[l] + w[l]) + 2 * (768 + w[l]));
	CHECK_INT(a.trainable_params, 16 * r);
	CHECK_INT(vf_dit_video_tokens(&d, 512, 512, 1), 64 * 64);
	CHECK_INT(vf_setup_set(&s, "video", "1024x1024x1", &err), VF_OK);
	vf_estimate_dit(&d, &s, NULL, &b);
	CHECK(b.activations_full > 3 * a.activations_full);
	s.grad_ckpt = false;
	vf_estimate_dit(&d, &s, NULL, &c);
	CHECK(c.activations_full > b.activations_full);
	CHECK(c.step_seconds > 0 && b.flops_per_step > 0);
}

int main(void)
{
	RUN(test_wan);
	RUN(test_unet);
	RUN(test_vaes);
	RUN(test_unknown_class);
	RUN(test_encoders);
	RUN(test_pipeline);
	RUN(test_unet_estimate);
	return vf_test_done();
}
