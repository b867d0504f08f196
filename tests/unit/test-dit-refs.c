/* test-dit-refs.c - issue 11 (DiT / vision / refs half): the LTX transformer
 * config reader and its exact count (hand-checked against the fixture
 * header ../shared/fixtures/ltx2, 18,876,174,592 parameters), and every
 * training-time figure of the seed's reference notes in data/refs.json with
 * an implied MFU or a stated reason. */
#include <math.h>
#include <string.h>

#include "vf_test.h"
#include "vramfit/estimate/estimate.h"
#include "vramfit/estimate/refs.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/model/ltx.h"
#include "vramfit/model/models.h"
#include "vramfit/model/vision.h"

static int64_t count_of(const char *json, struct vf_ltx_arch *a)
{
	struct vf_error err = {0};
	cJSON *j = cJSON_Parse(json);
	CHECK(j != NULL);
	vf_status st = vf_ltx_from_config(j, "t", a, &err);
	cJSON_Delete(j);
	CHECK(st == VF_OK);
	return st == VF_OK ? vf_ltx_params(a) : -1;
}

static void test_ltx_counts(void)
{
	struct vf_ltx_arch a;
	/* the fixture's config (every layout key at the public default) */
	CHECK_INT(count_of("{\"_class_name\": \"AVTransformer3DModel\", \"num_layers\": 48, "
			   "\"num_attention_heads\": 32, \"attention_head_dim\": 128, "
			   "\"cross_attention_dim\": 4096, \"caption_channels\": 3840, "
			   "\"audio_num_attention_heads\": 32, \"audio_attention_head_dim\": 64, "
			   "\"audio_cross_attention_dim\": 2048, \"activation_fn\": \"gelu-approximate\", "
			   "\"attention_bias\": true, \"qk_norm\": \"rms_norm\", "
			   "\"norm_elementwise_affine\": false, \"rope_type\": \"split\"}", &a),
		  18876174592LL);
	CHECK_STR(a.unknown, "");
	/* 2.3-style settings: ~19.0B, not 22B */
	CHECK_INT(count_of("{\"apply_gated_attention\": true, \"cross_attention_adaln\": true, "
			   "\"caption_proj_before_connector\": true, \"ff_bias\": false, "
			   "\"audio_ff_bias\": false}", &a),
		  18987363584LL);
	/* issue 30: the embedding connectors and text projection of a config,
	 * by hand. Defaults: two connectors of 2 blocks of 30 x 128, no gate:
	 * each block attention 2d + 4 (d^2 + d) and FFN 8 d^2 + 5 d, plus 128
	 * registers of width d; the projection 3840 x 49 -> 3840 */
	int64_t d0 = 3840;
	count_of("{}", &a);
	CHECK_INT(vf_ltx_connector_params(&a), 2 * (2 * (2 * d0 + 4 * (d0 * d0 + d0) + 8 * d0 * d0 + 5 * d0) + 128 * d0));
	CHECK_INT(vf_ltx_text_projection_params(&a, 3840, 48), 3840LL * 49 * 3840);
	/* 2.3: 8 gated blocks of 32 x 128 and (the audio keys) 32 x 64; the
	 * projection before the connector: one per stream, with bias */
	count_of("{\"caption_proj_before_connector\": true, \"connector_num_layers\": 8, "
		 "\"connector_num_attention_heads\": 32, \"connector_apply_gated_attention\": true, "
		 "\"audio_connector_num_attention_heads\": 32, \"audio_connector_attention_head_dim\": 64, "
		 "\"caption_projection_first_linear\": false, \"use_embeddings_connector\": true}", &a);
	CHECK_STR(a.unknown, "");
	int64_t v = 4096, au = 2048;
	int64_t cv = 8 * (2 * v + 4 * (v * v + v) + v * 32 + 32 + 8 * v * v + 5 * v) + 128 * v;
	int64_t ca = 8 * (2 * au + 4 * (au * au + au) + au * 32 + 32 + 8 * au * au + 5 * au) + 128 * au;
	CHECK_INT(vf_ltx_connector_params(&a), cv + ca);
	CHECK_INT(vf_ltx_connector_params(&a), 2016166400);
	CHECK_INT(vf_ltx_text_projection_params(&a, 3840, 48), 188160LL * 4096 + 4096 + 188160LL * 2048 + 2048);
	/* a value the V2 projection does not allow is named */
	count_of("{\"caption_projection_first_linear\": true}", &a);
	CHECK_CONTAINS(a.unknown, "caption_projection_first_linear");
	/* one block by hand: video self-attention 4 x (4096^2 + 4096) + 2 x 4096 norms */
	int64_t one = count_of("{\"num_layers\": 1}", &a);
	int64_t two = count_of("{\"num_layers\": 2}", &a);
	int64_t attn_v = 4 * (4096LL * 4096 + 4096) + 2 * 4096;
	int64_t ff_v = 2 * 4096LL * 16384 + 16384 + 4096;
	int64_t attn_a = 4 * (2048LL * 2048 + 2048) + 2 * 2048;
	int64_t ff_a = 2 * 2048LL * 8192 + 8192 + 2048;
	int64_t a2v = 2048LL * 4096 + 2048 + 2 * (2048LL * 2048 + 2048) + 2048LL * 4096 + 4096 + 2 * 2048;
	int64_t v2a = 2048LL * 2048 + 2048 + 2 * (4096LL * 2048 + 2048) + 2048LL * 2048 + 2048 + 2 * 2048;
	int64_t block = 2 * attn_v + ff_v + 6 * 4096 + 2 * attn_a + ff_a + 6 * 2048 + a2v + v2a +
			5 * 4096 + 5 * 2048;
	CHECK_INT(two - one, block);
	/* sizes the count does not know are named, never silently counted */
	count_of("{\"share_ff\": true, \"num_experts\": 8, \"dropout\": 0.1}", &a);
	CHECK_CONTAINS(a.unknown, "share_ff");
	CHECK_CONTAINS(a.unknown, "num_experts");
	CHECK(strstr(a.unknown, "dropout") == NULL);
	/* bad values are errors naming the field */
	struct vf_error err = {0};
	cJSON *j = cJSON_Parse("{\"num_layers\": -3}");
	CHECK(vf_ltx_from_config(j, "model.safetensors", &a, &err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "model.safetensors: transformer config: field num_layers");
	cJSON_Delete(j);
	/* recognised by class name or LTX-only keys; an LLM config is not */
	j = cJSON_Parse("{\"hidden_size\": 4096, \"num_hidden_layers\": 32}");
	CHECK(!vf_ltx_config_is(j));
	cJSON_Delete(j);
	j = cJSON_Parse("{\"audio_cross_attention_dim\": 2048}");
	CHECK(vf_ltx_config_is(j));
	cJSON_Delete(j);
}

static void test_ltx_dit_from_catalog(void)
{
	struct vf_error err = {0};
	CHECK(vf_models_load(&err) == VF_OK);
	const struct vf_model_entry *m = vf_models_find("ltx-2-19b");
	CHECK(m != NULL);
	if (!m)
		return;
	struct vf_dit d;
	CHECK(vf_dit_from_json(m->raw, "ltx2", &d, &err) == VF_OK);
	CHECK_INT(d.params, 18876174592LL);
	CHECK_INT(d.layers, 48);
	CHECK_INT(d.video_hidden, 4096);
	CHECK_INT(d.audio_hidden, 2048);
	CHECK_INT(d.audio_text_dim, 2048);
	CHECK_INT(d.text_dim, 4096);
	/* a params value the layout does not count is refused */
	cJSON *e = cJSON_Duplicate(m->raw, 1);
	cJSON_ReplaceItemInObjectCaseSensitive(e, "params", cJSON_CreateNumber(22e9));
	CHECK(vf_dit_from_json(e, "ltx2", &d, &err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "layout counts 18876174592");
	cJSON_Delete(e);
}

/* Every training-time figure of the seed's reference notes (003_*.txt). */
static void test_refs_seed_figures(void)
{
	struct vf_refs set;
	struct vf_error err = {0};
	CHECK(vf_refs_load(&set, &err) == VF_OK);
	static const struct {
		const char *id;
		bool mfu; /* an implied MFU; else a stated reason */
	} want[] = {
		{"tinygpt-v-stage1", false},      {"tinygpt-v-stage2", false},
		{"tinygpt-v-stage3", false},      {"tinygpt-v-stage4", false},
		{"clip-400m", true},              {"clip-rn50-cc3m-8xv100", true},
		{"clip-rn50-cc12m-4xv100", true}, {"clip-rn50-20m-8xv100", true},
		{"latte-video-dit", false},       {"moondream-run", false},
		{"obsidian-3b-pretrain", true},   {"llava-v1.5-13b-pretrain", true},
		{"llava-v1.5-7b-pretrain", true}, {"llava-7b-pretrain-v100", true},
		{"minigpt4-stage1", true},        {"minigpt4-stage2", true},
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		const struct vf_ref *r = vf_refs_find(&set, want[i].id);
		CHECK(r != NULL);
		if (!r)
			continue;
		CHECK(r->hours > 0);
		CHECK(r->model_name[0] != 0);
		struct vf_ref_eval e;
		CHECK(vf_ref_evaluate(&set, r, vf_gpu_catalog_find(r->gpu), NULL, 0, -1, &e, &err) == VF_OK);
		if (want[i].mfu)
			CHECK(e.implied_mfu > 0.05 && e.implied_mfu < 0.7);
		else
			CHECK(e.implied_mfu < 0 && strstr(r->note, "No MFU") != NULL);
	}
	/* the RN50 20M-sample epoch by hand: 20e6 x 46.7 GFLOP / (8 x 125 TFLOPS x 7200 s) */
	const struct vf_ref *r = vf_refs_find(&set, "clip-rn50-20m-8xv100");
	if (r) {
		struct vf_ref_eval e;
		CHECK(vf_ref_evaluate(&set, r, vf_gpu_catalog_find(r->gpu), NULL, 0, -1, &e, &err) == VF_OK);
		CHECK(fabs(e.implied_mfu - 20e6 * 4.67e10 / (8 * 125e12 * 7200)) < 1e-9);
	}
	vf_refs_release(&set);
}

static vf_status vision_of(const char *json, struct vf_vision *v)
{
	struct vf_error err = {0};
	cJSON *j = cJSON_Parse(json);
	vf_status st = vf_vision_from_config(j, "config.json", v, &err);
	cJSON_Delete(j);
	return st;
}

/* Counts by hand from the layouts (published totals in tests/cli/vision.sh). */
static void test_vision_counts(void)
{
	struct vf_vision v;
	/* CLIP ViT-B/32 with the library defaults */
	CHECK(vision_of("{\"model_type\": \"clip\"}", &v) == VF_OK);
	int64_t h = 768, f = 3072, vl = 4 * (h * h + h) + 4 * h + 2 * h * f + f + h;
	int64_t vision = 3 * 32 * 32 * h + h + 50 * h + 2 * h + 12 * vl + 2 * h + h * 512;
	int64_t th = 512, tf = 2048, tl = 4 * (th * th + th) + 4 * th + 2 * th * tf + tf + th;
	int64_t text = 49408 * th + 77 * th + 12 * tl + 2 * th + th * 512 + 1;
	CHECK_INT(v.params, vision + text);
	CHECK_INT(v.params, 151277313);
	CHECK_INT(v.image_tokens, 50);
	CHECK_INT(vf_vision_tokens(&v, 448, 448, 0), 14 * 14 + 1);
	/* PixArt-alpha 1024: 28 blocks of 1152, additional conditions */
	CHECK(vision_of("{\"_class_name\": \"PixArtTransformer2DModel\", \"num_attention_heads\": 16, "
			"\"attention_head_dim\": 72, \"out_channels\": 8, \"cross_attention_dim\": 1152, "
			"\"sample_size\": 128}", &v) == VF_OK);
	int64_t D = 1152;
	int64_t block = 2 * (4 * (D * D + D)) + 2 * 4 * D * D + 5 * D + 6 * D;
	int64_t emb = (256 * D + D + D * D + D) + 6 * D * D + 6 * D + 2 * (256 * 384 + 384 + 384 * 384 + 384);
	int64_t top = 4 * 4 * D + D + emb + 4096 * D + D + D * D + D + 2 * D + D * 32 + 32;
	CHECK_INT(v.params, 28 * block + top);
	CHECK_INT(v.params, 611349152);
	CHECK_INT(vf_vision_tokens(&v, 0, 0, 0), 64 * 64);
	/* Latte: frames x patches; LTX-Video: the first frame, then 8 per latent */
	CHECK(vision_of("{\"_class_name\": \"LatteTransformer3DModel\", \"num_attention_heads\": 16, "
			"\"attention_head_dim\": 72}", &v) == VF_OK);
	CHECK_INT(vf_vision_tokens(&v, 256, 256, 16), 16 * 16 * 16);
	CHECK_INT(v.dit_layers, 56);
	CHECK(vision_of("{\"_class_name\": \"LTXVideoTransformer3DModel\"}", &v) == VF_OK);
	CHECK_INT(vf_vision_tokens(&v, 768, 512, 121), 24 * 16 * 16);
	/* a width product past the limit is an error, not an overflow */
	CHECK(vision_of("{\"_class_name\": \"FluxTransformer2DModel\", \"num_attention_heads\": 200000, "
			"\"attention_head_dim\": 200000}", &v) == VF_ERR);
	/* not a vision config */
	CHECK(vision_of("{\"model_type\": \"llama\"}", &v) == VF_ENOTFOUND);
}

/* The CLIP estimate grows with the batch and counts what it trains. */
static void test_vision_estimate(void)
{
	struct vf_vision v;
	CHECK(vision_of("{\"model_type\": \"clip\"}", &v) == VF_OK);
	struct vf_setup s;
	vf_setup_defaults(&s);
	s.mode = VF_MODE_FULL;
	s.precision = VF_PREC_BF16;
	s.video_width = s.video_height = 224;
	struct vf_estimate a, b;
	s.batch = 64;
	vf_estimate_vit(&v, &s, NULL, &a);
	s.batch = 128;
	vf_estimate_vit(&v, &s, NULL, &b);
	CHECK(b.peak_bytes > a.peak_bytes);
	CHECK_INT(a.weights_full, 2 * 151277313LL);
	CHECK_INT(a.trainable_params, 151277313LL);
	s.mode = VF_MODE_INFER;
	vf_estimate_vit(&v, &s, NULL, &b);
	CHECK(b.peak_bytes < a.peak_bytes && b.gradients_bytes == 0);
}

int main(void)
{
	RUN(test_vision_counts);
	RUN(test_vision_estimate);
	RUN(test_ltx_counts);
	RUN(test_ltx_dit_from_catalog);
	RUN(test_refs_seed_figures);
	return vf_test_done();
}
