/* test-model.c - vf_model_load on every layout: catalog ids, config.json,
 * the fixture checkpoints (counts of ../shared/fixtures/models/EXPECTED.json),
 * inference without config.json, generated sharded / diffusers / metadata
 * layouts and their errors, and the inspect JSON. */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vf_test.h"
#include "vramfit/base/buf.h"
#include "vramfit/base/json.h"
#include "vramfit/model/model.h"

static char fixtures[1024];
static char tmpdir[] = "/tmp/vf-test-model-XXXXXX";

static const char *fx(const char *rel)
{
	static char buf[4][1200];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof buf[k], "%s/%s", fixtures, rel);
	return buf[k];
}

static const char *tmp(const char *rel)
{
	static char buf[4][1200];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, rel);
	return buf[k];
}

static void copy_file(const char *from, const char *to)
{
	struct vf_buf b;
	struct vf_error err = {0};
	vf_buf_init(&b, 0);
	CHECK(vf_buf_read_file(&b, from, 64u << 20, &err) == VF_OK);
	CHECK(vf_write_file_atomic(to, b.data, b.len, &err) == VF_OK);
	vf_buf_release(&b);
}

static void write_text(const char *path, const char *text)
{
	struct vf_error err = {0};
	CHECK(vf_write_file_atomic(path, text, strlen(text), &err) == VF_OK);
}

/* A valid safetensors file of F32 tensors "name:n,name:rows:cols,..." (1-D
 * or 2-D). */
static void write_st(const char *path, const char *spec, const char *metadata_json)
{
	static char hdr[65536];
	size_t o = 0;
	uint64_t off = 0;
	o += (size_t)snprintf(hdr + o, sizeof hdr - o, "{");
	if (metadata_json)
		o += (size_t)snprintf(hdr + o, sizeof hdr - o, "\"__metadata__\":%s,",
				      metadata_json);
	char *s = strdup(spec), *save = NULL;
	for (char *tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');
		*colon = 0;
		long n = atol(colon + 1), cols = 0; /* "name:rows:cols" is 2-D */
		char *second = strchr(colon + 1, ':');
		char shape[64];
		if (second)
			cols = atol(second + 1);
		if (cols > 0)
			snprintf(shape, sizeof shape, "%ld,%ld", n, cols);
		else
			snprintf(shape, sizeof shape, "%ld", n);
		if (cols > 0)
			n *= cols;
		o += (size_t)snprintf(hdr + o, sizeof hdr - o,
				      "\"%s\":{\"dtype\":\"F32\",\"shape\":[%s],\"data_offsets\":[%llu,"
				      "%llu]},",
				      tok, shape, (unsigned long long)off,
				      (unsigned long long)(off + 4 * (uint64_t)n));
		off += 4 * (uint64_t)n;
	}
	free(s);
	if (hdr[o - 1] == ',')
		o--;
	o += (size_t)snprintf(hdr + o, sizeof hdr - o, "}");
	FILE *f = fopen(path, "wb");
	unsigned char le[8];
	for (int i = 0; i < 8; i++)
		le[i] = (unsigned char)((uint64_t)o >> (8 * i));
	fwrite(le, 1, 8, f);
	fwrite(hdr, 1, o, f);
	fclose(f);
	CHECK(truncate(path, (off_t)(8 + o + off)) == 0);
}

static struct vf_model *load_ok(const char *path)
{
	struct vf_model *m = NULL;
	struct vf_error err = {0};
	vf_status st = vf_model_load(path, &m, &err);
	if (st != VF_OK)
		fprintf(stderr, "  %s\n", err.msg);
	CHECK(st == VF_OK);
	return m;
}

static void load_bad(const char *path, const char *needle)
{
	struct vf_model *m = NULL;
	struct vf_error err = {0};
	CHECK(vf_model_load(path, &m, &err) != VF_OK);
	CHECK(m == NULL);
	CHECK_CONTAINS(err.msg, needle);
	CHECK(strchr(err.msg, '\n') == NULL);
}

static void test_catalog_id(void)
{
	struct vf_model *m = load_ok("llama2-7b");
	CHECK_STR(m ? m->format : NULL, "catalog");
	CHECK(m && m->params == 6738415616LL && m->has_arch && m->has_groups);
	CHECK(m && m->entry && m->arch.hidden == 4096);
	CHECK(m && m->files == -1);
	vf_model_free(m);
	load_bad("no-such-model-xyz", "no-such-model-xyz: no such file, directory or catalog model");
	load_bad("./no/such/path", "./no/such/path: No such file");
}

static void test_config_file(void)
{
	struct vf_model *m = load_ok(fx("tiny-llama-bf16/config.json"));
	CHECK_STR(m ? m->format : NULL, "config");
	CHECK(m && m->params == 218944);
	CHECK_STR(m ? m->arch.source : NULL, "config.json");
	vf_model_free(m);
}

/* The acceptance counts, and tensor-name groups = architecture groups. */
static void test_fixtures(void)
{
	static const struct {
		const char *dir, *format;
		int64_t files, tensors, params;
	} cases[] = {
		{"tiny-llama-bf16", "hf-dir", 1, 21, 218944},
		{"small-llama-bf16-sharded", "sharded", 4, 39, 1840256},
		{"tiny-gpt2-fp32", "hf-dir", 1, 28, 172288},
		{"tiny-t5-fp32", "hf-dir", 1, 47, 196864},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct vf_model *m = load_ok(fx(cases[i].dir));
		if (!m)
			continue;
		CHECK_STR(m->format, cases[i].format);
		CHECK_INT(m->files, cases[i].files);
		CHECK_INT(m->tensors, cases[i].tensors);
		CHECK_INT(m->params, cases[i].params);
		CHECK_STR(m->arch.source, "config.json");
		struct vf_param_groups g;
		CHECK(vf_arch_param_groups(&m->arch, &g));
		CHECK_INT(g.total, m->params);
		CHECK_INT(m->groups.embedding, g.embedding);
		CHECK_INT(m->groups.attention, g.attention);
		CHECK_INT(m->groups.mlp, g.mlp);
		CHECK_INT(m->groups.norm, g.norm);
		CHECK_INT(m->groups.other, 0);
		vf_model_free(m);
	}
	struct vf_model *m = load_ok(fx("tiny-llama-bf16"));
	CHECK(m && m->dtype_params[VF_DT_BF16] == 218944 && m->bytes == 437888);
	vf_model_free(m);
	m = load_ok(fx("small-llama-bf16-sharded/model.safetensors.index.json"));
	CHECK_STR(m ? m->format : NULL, "sharded");
	CHECK(m && m->params == 1840256 && m->files == 4 && m->bytes == 3680512);
	CHECK_STR(m ? m->arch.source : NULL, "config.json");
	vf_model_free(m);
	m = load_ok(fx("tiny-gpt2-fp32"));
	CHECK(m && m->arch.tied_embeddings && m->groups.embedding == 1000 * 64 + 128 * 64);
	vf_model_free(m);
	/* the adapter: r=8, alpha=16, q_proj and v_proj, 3584 */
	m = load_ok(fx("tiny-llama-lora-r8"));
	CHECK_STR(m ? m->format : NULL, "peft-adapter");
	CHECK(m && m->has_adapter && m->adapter.rank == 8 && m->adapter.alpha == 16);
	CHECK(m && m->adapter.ntargets == 2);
	CHECK_STR(m && m->adapter.ntargets == 2 ? m->adapter.targets[0] : NULL, "q_proj");
	CHECK_STR(m && m->adapter.ntargets == 2 ? m->adapter.targets[1] : NULL, "v_proj");
	CHECK(m && m->adapter.params == 3584 && m->params == 3584);
	vf_model_free(m);
	/* dtypes.safetensors: 13 tensors, 117 params, its metadata */
	m = load_ok(fx("dtypes.safetensors"));
	CHECK_STR(m ? m->format : NULL, "safetensors");
	CHECK(m && m->tensors == 13 && m->params == 117 && m->dtype_params[VF_DT_BOOL] == 3);
	CHECK_STR(m ? vf_json_get_str(m->metadata, "note") : NULL, "fixture");
	vf_model_free(m);
	/* the LTX-2 trainer's LoRA file: an adapter found from tensor names */
	m = load_ok(fx("lora_weights_step_00050.safetensors"));
	CHECK(m && m->has_adapter && m->adapter.rank == 16 && m->adapter.params == 4096);
	CHECK_STR(m && m->adapter.ntargets ? m->adapter.targets[0] : NULL, "to_q");
	vf_model_free(m);
}

/* config.json removed: the inferred fields are right and marked. */
static void test_inferred(void)
{
	CHECK(mkdir(tmp("llama"), 0755) == 0);
	copy_file(fx("tiny-llama-bf16/model.safetensors"), tmp("llama/model.safetensors"));
	struct vf_model *m = load_ok(tmp("llama"));
	if (m) {
		const struct vf_arch *a = &m->arch;
		CHECK_STR(m->format, "safetensors");
		CHECK_STR(a->source, "tensors");
		CHECK_STR(a->family, "llama");
		CHECK_INT(a->hidden, 64);
		CHECK_INT(a->layers, 2);
		CHECK_INT(a->vocab, 1000);
		CHECK_INT(a->ffn, 172);
		CHECK(!a->tied_embeddings);
		unsigned want = VF_ARCH_F_FAMILY | VF_ARCH_F_HIDDEN | VF_ARCH_F_LAYERS |
				VF_ARCH_F_VOCAB | VF_ARCH_F_FFN | VF_ARCH_F_TIED;
		CHECK((a->inferred & want) == want);
		CHECK(a->inferred == a->known);
		CHECK(!(a->known & VF_ARCH_F_HEADS)); /* not derivable here */
		CHECK_INT(m->params, 218944);
		cJSON *j = vf_model_to_json(m);
		cJSON *arch = cJSON_GetObjectItem(j, "architecture");
		CHECK_STR(vf_json_get_str(arch, "source"), "tensors");
		CHECK(cJSON_IsArray(cJSON_GetObjectItem(arch, "inferred")));
		CHECK(cJSON_IsNull(cJSON_GetObjectItem(arch, "heads")));
		cJSON_Delete(j);
	}
	vf_model_free(m);

	CHECK(mkdir(tmp("gpt2"), 0755) == 0);
	copy_file(fx("tiny-gpt2-fp32/model.safetensors"), tmp("gpt2/model.safetensors"));
	m = load_ok(tmp("gpt2/model.safetensors"));
	if (m) {
		CHECK_STR(m->arch.family, "gpt2");
		CHECK_INT(m->arch.hidden, 64);
		CHECK_INT(m->arch.layers, 2);
		CHECK_INT(m->arch.vocab, 1000);
		CHECK_INT(m->arch.ffn, 256);
		CHECK_INT(m->arch.max_positions, 128);
		CHECK(m->arch.tied_embeddings && (m->arch.inferred & VF_ARCH_F_TIED));
		CHECK(m->arch.inferred & VF_ARCH_F_MAX_POSITIONS);
	}
	vf_model_free(m);

	CHECK(mkdir(tmp("t5"), 0755) == 0);
	copy_file(fx("tiny-t5-fp32/model.safetensors"), tmp("t5/model.safetensors"));
	m = load_ok(tmp("t5"));
	if (m) {
		CHECK_STR(m->arch.family, "t5");
		CHECK_INT(m->arch.hidden, 64);
		CHECK_INT(m->arch.layers, 2);
		CHECK_INT(m->arch.decoder_layers, 2);
		CHECK_INT(m->arch.heads, 4); /* from the relative attention bias */
		CHECK_INT(m->arch.head_dim, 16);
		CHECK_INT(m->arch.ffn, 128);
		CHECK_INT(m->arch.vocab, 500);
		CHECK(m->arch.tied_embeddings);
		CHECK(m->arch.inferred & VF_ARCH_F_HEADS);
	}
	vf_model_free(m);

	/* the sharded checkpoint without config.json */
	CHECK(mkdir(tmp("shards"), 0755) == 0);
	static const char *files[] = {"model-00001-of-00004.safetensors",
				      "model-00002-of-00004.safetensors",
				      "model-00003-of-00004.safetensors",
				      "model-00004-of-00004.safetensors",
				      "model.safetensors.index.json"};
	char from[1300], to[1300];
	for (size_t i = 0; i < 5; i++) {
		snprintf(from, sizeof from, "small-llama-bf16-sharded/%s", files[i]);
		snprintf(to, sizeof to, "shards/%s", files[i]);
		copy_file(fx(from), tmp(to));
	}
	m = load_ok(tmp("shards"));
	if (m) {
		CHECK_STR(m->format, "sharded");
		CHECK_INT(m->params, 1840256);
		CHECK_STR(m->arch.source, "tensors");
		CHECK_INT(m->arch.hidden, 128);
		CHECK_INT(m->arch.layers, 4);
		CHECK_INT(m->arch.vocab, 4096);
		CHECK_INT(m->arch.ffn, 344);
		CHECK(!m->arch.tied_embeddings && (m->arch.inferred & VF_ARCH_F_TIED));
	}
	vf_model_free(m);
}

/* Index cross-checks. */
static void test_index_errors(void)
{
	CHECK(mkdir(tmp("idx"), 0755) == 0);
	write_st(tmp("idx/a.safetensors"), "x:4,y:2", NULL);
	write_st(tmp("idx/b.safetensors"), "z:3", NULL);
	write_text(tmp("idx/model.safetensors.index.json"),
		   "{\"weight_map\":{\"x\":\"a.safetensors\",\"y\":\"a.safetensors\","
		   "\"z\":\"b.safetensors\"}}");
	struct vf_model *m = load_ok(tmp("idx"));
	CHECK(m && m->params == 9 && m->files == 2 && m->tensors == 3);
	vf_model_free(m);
	/* a missing shard */
	write_text(tmp("idx/model.safetensors.index.json"),
		   "{\"weight_map\":{\"x\":\"a.safetensors\",\"y\":\"a.safetensors\","
		   "\"z\":\"c.safetensors\"}}");
	load_bad(tmp("idx"), "model.safetensors.index.json: names shard c.safetensors, which does "
			     "not exist");
	/* a tensor the index does not list */
	write_text(tmp("idx/model.safetensors.index.json"),
		   "{\"weight_map\":{\"x\":\"a.safetensors\",\"z\":\"b.safetensors\"}}");
	load_bad(tmp("idx"), "shard a.safetensors holds tensor 'y', which the index does not list");
	/* mapped to the wrong shard */
	write_text(tmp("idx/model.safetensors.index.json"),
		   "{\"weight_map\":{\"x\":\"b.safetensors\",\"y\":\"a.safetensors\","
		   "\"z\":\"b.safetensors\"}}");
	load_bad(tmp("idx"), "maps tensor 'x' to b.safetensors, but it is in a.safetensors");
	/* a listed tensor no shard has */
	write_text(tmp("idx/model.safetensors.index.json"),
		   "{\"weight_map\":{\"x\":\"a.safetensors\",\"y\":\"a.safetensors\","
		   "\"z\":\"b.safetensors\",\"w\":\"b.safetensors\"}}");
	load_bad(tmp("idx"), "maps tensor 'w' to b.safetensors, which has no such tensor");
	/* several: the first in name order is named, whatever the map's order */
	write_text(tmp("idx/model.safetensors.index.json"),
		   "{\"weight_map\":{\"x\":\"a.safetensors\",\"y\":\"a.safetensors\","
		   "\"z\":\"b.safetensors\",\"w\":\"b.safetensors\",\"v\":\"b.safetensors\"}}");
	load_bad(tmp("idx"), "maps tensor 'v' to b.safetensors, which has no such tensor");
	/* a tensor named twice (the first in name order) */
	write_text(tmp("idx/model.safetensors.index.json"),
		   "{\"weight_map\":{\"z\":\"b.safetensors\",\"y\":\"a.safetensors\","
		   "\"x\":\"a.safetensors\",\"z\":\"b.safetensors\",\"x\":\"a.safetensors\"}}");
	load_bad(tmp("idx"), "weight_map names tensor 'x' twice");
	/* paths outside the folder, bad shapes */
	write_text(tmp("idx/model.safetensors.index.json"),
		   "{\"weight_map\":{\"x\":\"../a.safetensors\"}}");
	load_bad(tmp("idx"), "is not a file name in the index's folder");
	write_text(tmp("idx/model.safetensors.index.json"), "{\"weight_map\":[]}");
	load_bad(tmp("idx"), "field weight_map: expected an object");
	write_text(tmp("idx/model.safetensors.index.json"), "{\"weight_map\":{\"x\":1}}");
	load_bad(tmp("idx"), "weight_map['x']: expected a file name");
	write_text(tmp("idx/model.safetensors.index.json"), "{\"weight_map\":");
	load_bad(tmp("idx"), "model.safetensors.index.json: invalid JSON");
	/* the index is scanned, not parsed into a tree: escapes decoded, other
	 * fields skipped, the first weight_map read, nothing after the object */
	write_text(tmp("idx/model.safetensors.index.json"),
		   "{\"metadata\":{\"total_size\":36,\"x\":[1,{\"y\":null}]},\"weight_map\":"
		   "{\"\\u0078\":\"a.safe\\u0074ensors\",\"y\":\"a.safetensors\","
		   "\"z\":\"b.safetensors\"},\"weight_map\":{}} \n");
	struct vf_model *m2 = load_ok(tmp("idx"));
	CHECK(m2 && m2->params == 9 && m2->files == 2);
	vf_model_free(m2);
	write_text(tmp("idx/model.safetensors.index.json"),
		   "{\"weight_map\":{\"x\":\"a.safetensors\",\"y\":\"a.safetensors\","
		   "\"z\":\"b.safetensors\"}} x");
	load_bad(tmp("idx"), "model.safetensors.index.json: invalid JSON near byte 77 (data after");
	/* many shards (read by several threads): the whole model, and of two
	 * broken shards the first in file order is named */
	CHECK(mkdir(tmp("many"), 0755) == 0);
	char spec[32], name[64], map[4096] = "{\"weight_map\":{";
	for (int i = 0; i < 12; i++) {
		snprintf(spec, sizeof spec, "t%02d:%d", i, i + 1);
		snprintf(name, sizeof name, "many/s%02d.safetensors", i);
		write_st(tmp(name), spec, NULL);
		snprintf(map + strlen(map), sizeof map - strlen(map),
			 "%s\"t%02d\":\"s%02d.safetensors\"", i ? "," : "", i, i);
	}
	strcat(map, "}}");
	write_text(tmp("many/model.safetensors.index.json"), map);
	struct vf_model *m3 = load_ok(tmp("many"));
	CHECK(m3 && m3->files == 12 && m3->tensors == 12 && m3->params == 78);
	vf_model_free(m3);
	write_text(tmp("many/s09.safetensors"), "not a header");
	write_text(tmp("many/s05.safetensors"), "not a header either");
	for (int r = 0; r < 20; r++) /* whichever thread gets there first */
		load_bad(tmp("many"), "s05.safetensors: not a safetensors file: it starts with text");
	write_text(tmp("idx/model.safetensors.index.json"), "[1]");
	load_bad(tmp("idx"), "field weight_map: expected an object");
	write_text(tmp("idx/model.safetensors.index.json"),
		   "{\"weight_map\":{\"x\":1,\"y\":[}}");
	load_bad(tmp("idx"), "model.safetensors.index.json: invalid JSON");
}

/* Directories: symlink loops, diffusers components, metadata architecture,
 * nothing to read. */
static void test_dirs(void)
{
	/* a symlink loop inside a model directory */
	CHECK(mkdir(tmp("loop"), 0755) == 0);
	write_st(tmp("loop/model.safetensors"), "x:4", NULL);
	CHECK(symlink("a", tmp("loop/b")) == 0);
	CHECK(symlink("b", tmp("loop/a")) == 0);
	load_bad(tmp("loop"), "symlink loop");
	load_bad(tmp("loop/a"), "loop/a: symlink loop");
	/* a folder symlinked to its parent is not followed forever */
	CHECK(mkdir(tmp("cyc"), 0755) == 0);
	CHECK(mkdir(tmp("cyc/transformer"), 0755) == 0);
	write_st(tmp("cyc/transformer/diffusion_pytorch_model.safetensors"),
		 "transformer_blocks.0.attn1.to_q.weight:16,transformer_blocks.1.attn1.to_q.weight:16",
		 NULL);
	CHECK(symlink("..", tmp("cyc/transformer/up")) == 0);
	struct vf_model *m = load_ok(tmp("cyc"));
	CHECK_STR(m ? m->format : NULL, "diffusers");
	vf_model_free(m);

	/* diffusers: components and the total */
	CHECK(mkdir(tmp("diff"), 0755) == 0);
	CHECK(mkdir(tmp("diff/transformer"), 0755) == 0);
	CHECK(mkdir(tmp("diff/vae"), 0755) == 0);
	CHECK(mkdir(tmp("diff/scheduler"), 0755) == 0);
	write_text(tmp("diff/model_index.json"), "{\"_class_name\":\"LTXPipeline\"}");
	write_text(tmp("diff/scheduler/scheduler_config.json"), "{}");
	write_text(tmp("diff/transformer/config.json"),
		   "{\"_class_name\":\"LTXVideoTransformer3DModel\",\"num_attention_heads\":2,"
		   "\"attention_head_dim\":8,\"num_layers\":2}");
	write_st(tmp("diff/transformer/diffusion_pytorch_model.safetensors"),
		 "transformer_blocks.0.attn1.to_q.weight:256,transformer_blocks.1.attn1.to_q.weight:"
		 "256,transformer_blocks.0.norm1.weight:16",
		 NULL);
	write_st(tmp("diff/vae/diffusion_pytorch_model.safetensors"), "decoder.conv.weight:100",
		 NULL);
	write_text(tmp("diff/vae/config.json"), "{\"_class_name\":\"AutoencoderKL\",\"in_channels\":3}");
	m = load_ok(tmp("diff"));
	if (m) {
		CHECK_STR(m->format, "diffusers");
		CHECK_INT(m->ncomponents, 2);
		CHECK_INT(m->params, 628);
		CHECK_INT(m->files, 2);
		CHECK_STR(m->components[0]->name, "transformer");
		CHECK_INT(m->components[0]->params, 528);
		/* a diffusers DiT config (issue 11): the vision/DiT reader, not an LLM */
		CHECK(m->components[0]->has_vision && !m->components[0]->has_arch);
		CHECK_STR(m->components[0]->vision.family, "ltx-video");
		CHECK_INT(m->components[0]->vision.parts[0].hidden, 16);
		CHECK_INT(m->components[0]->vision.dit_layers, 2);
		CHECK_INT(m->components[0]->groups.attention, 512);
		CHECK_STR(m->components[1]->name, "vae");
		CHECK_INT(m->components[1]->params, 100);
		CHECK_STR(m->components[1]->format, "hf-dir");
		/* issue 23: a VAE's config is read as what it is (its layout
		 * counted from the config; the files keep the exact count) */
		CHECK(m->components[1]->has_vision && !m->components[1]->has_arch);
		CHECK_STR(m->components[1]->vision.kind, "vae");
		CHECK_STR(m->components[1]->vision.family, "autoencoder-kl");
		cJSON *j = vf_model_to_json(m);
		CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(j, "components")), 2);
		cJSON_Delete(j);
	}
	vf_model_free(m);

	/* a single file whose architecture lives in __metadata__ (LTX-2 style) */
	write_st(tmp("ltx.safetensors"),
		 "transformer_blocks.0.attn1.to_q.weight:64,transformer_blocks.1.attn1.to_q.weight:64",
		 "{\"config\":\"{\\\"transformer\\\":{\\\"_class_name\\\":\\\"AVTransformer3DModel\\\","
		 "\\\"num_attention_heads\\\":32,\\\"attention_head_dim\\\":128,\\\"num_layers\\\":"
		 "48}}\"}");
	m = load_ok(tmp("ltx.safetensors"));
	if (m) {
		/* an LTX DiT (issue 11), not a language model */
		CHECK(m->has_ltx && !m->has_arch);
		CHECK_STR(m->ltx.source, "metadata");
		CHECK_INT(m->ltx.heads * m->ltx.head_dim, 4096);
		CHECK_INT(m->ltx.layers, 48);
		CHECK_INT(m->ltx.heads, 32);
		CHECK_INT(m->params, 128);
	}
	vf_model_free(m);

	/* pickles are not read */
	write_text(tmp("pytorch_model.bin"), "PK");
	load_bad(tmp("pytorch_model.bin"), "pytorch_model.bin: not a safetensors file");
	/* nothing to read; several files without an index; a missing adapter */
	CHECK(mkdir(tmp("empty"), 0755) == 0);
	load_bad(tmp("empty"), "no model files");
	CHECK(mkdir(tmp("two"), 0755) == 0);
	write_st(tmp("two/a.safetensors"), "x:1", NULL);
	write_st(tmp("two/b.safetensors"), "x:1", NULL);
	load_bad(tmp("two"), "2 .safetensors files and no *.safetensors.index.json");
	CHECK(mkdir(tmp("peft"), 0755) == 0);
	write_text(tmp("peft/adapter_config.json"), "{\"r\":4,\"lora_alpha\":8}");
	load_bad(tmp("peft"), "adapter_model.safetensors is missing");
	/* a config.json with a wrong-typed field is an error, not a fallback */
	CHECK(mkdir(tmp("badcfg"), 0755) == 0);
	write_st(tmp("badcfg/model.safetensors"), "x:4", NULL);
	write_text(tmp("badcfg/config.json"), "{\"model_type\":\"llama\",\"hidden_size\":\"x\"}");
	load_bad(tmp("badcfg"), "badcfg/config.json: field hidden_size: expected an integer");
	write_text(tmp("peft/adapter_config.json"), "{\"r\":\"four\"}");
	load_bad(tmp("peft"), "adapter_config.json: field r: expected a positive integer rank");
	write_text(tmp("peft/adapter_config.json"), "{\"r\":-1}");
	load_bad(tmp("peft"), "adapter_config.json: field r: expected a positive integer rank");
	write_text(tmp("peft/adapter_config.json"), "{\"r\":0}");
	load_bad(tmp("peft"), "adapter_config.json: field r: expected a positive integer rank");
	/* a bad shard inside a directory names the shard */
	CHECK(mkdir(tmp("badfile"), 0755) == 0);
	write_text(tmp("badfile/model.safetensors"), "\xff\xff\xff\xff\xff\xff\xff\x7f{}xx");
	load_bad(tmp("badfile"), "badfile/model.safetensors: header length 9223372036854775807 "
				 "exceeds the limit");
}

/* ---- generated checkpoints of MoE and MLA layouts ------------------------
 * The tensors the transformers modeling code of each family builds (names
 * and element counts), written as a safetensors header next to a
 * config.json: the header count must equal the config count. */

static char spec_buf[32768];
static size_t spec_len;

/* A tensor [rows, cols] (cols 0: 1-D [rows]); weights are [out, in]. */
static void t_add(const char *name, long rows, long cols)
{
	spec_len += (size_t)snprintf(spec_buf + spec_len, sizeof spec_buf - spec_len, "%s%s:%ld:%ld",
				     spec_len ? "," : "", name, rows, cols);
}

static void t_addf(long rows, long cols, const char *fmt, int i, int j)
{
	char name[160];
	snprintf(name, sizeof name, fmt, i, j);
	t_add(name, rows, cols);
}

/* Qwen3-MoE: H 32, 2 layers, 4 heads / 2 kv of head_dim 8, 4 experts of
 * width 16, layer 1 dense (mlp_only_layers) of width 48, vocab 50. */
static void gen_qwen3_moe(void)
{
	const long H = 32, V = 50, E = 4, FE = 16, F = 48, HD = 8;
	spec_len = 0;
	t_add("model.embed_tokens.weight", V, H);
	t_add("lm_head.weight", V, H);
	t_add("model.norm.weight", H, 0);
	for (int l = 0; l < 2; l++) {
		t_addf(4 * HD, H, "model.layers.%d.self_attn.q_proj.weight", l, 0);
		t_addf(2 * HD, H, "model.layers.%d.self_attn.k_proj.weight", l, 0);
		t_addf(2 * HD, H, "model.layers.%d.self_attn.v_proj.weight", l, 0);
		t_addf(H, 4 * HD, "model.layers.%d.self_attn.o_proj.weight", l, 0);
		t_addf(HD, 0, "model.layers.%d.self_attn.q_norm.weight", l, 0);
		t_addf(HD, 0, "model.layers.%d.self_attn.k_norm.weight", l, 0);
		t_addf(H, 0, "model.layers.%d.input_layernorm.weight", l, 0);
		t_addf(H, 0, "model.layers.%d.post_attention_layernorm.weight", l, 0);
		if (l == 1) {
			t_addf(F, H, "model.layers.%d.mlp.gate_proj.weight", l, 0);
			t_addf(F, H, "model.layers.%d.mlp.up_proj.weight", l, 0);
			t_addf(H, F, "model.layers.%d.mlp.down_proj.weight", l, 0);
			continue;
		}
		t_addf(E, H, "model.layers.%d.mlp.gate.weight", l, 0);
		for (int e = 0; e < E; e++) {
			t_addf(FE, H, "model.layers.%d.mlp.experts.%d.gate_proj.weight", l, e);
			t_addf(FE, H, "model.layers.%d.mlp.experts.%d.up_proj.weight", l, e);
			t_addf(H, FE, "model.layers.%d.mlp.experts.%d.down_proj.weight", l, e);
		}
	}
}

/* DeepSeek-V3: H 32, 3 layers (first dense), 2 heads, q_lora 12, kv_lora
 * 8, nope 6, rope 4, v 6; 4 routed experts of 8 + 1 shared; router with
 * its score correction bias; dense width 40; vocab 50. */
static void gen_deepseek_v3(void)
{
	const long H = 32, V = 50, N = 2, QR = 12, KR = 8, NO = 6, RO = 4, VD = 6, E = 4, FE = 8,
		   F = 40;
	spec_len = 0;
	t_add("model.embed_tokens.weight", V, H);
	t_add("lm_head.weight", V, H);
	t_add("model.norm.weight", H, 0);
	for (int l = 0; l < 3; l++) {
		t_addf(QR, H, "model.layers.%d.self_attn.q_a_proj.weight", l, 0);
		t_addf(QR, 0, "model.layers.%d.self_attn.q_a_layernorm.weight", l, 0);
		t_addf(N * (NO + RO), QR, "model.layers.%d.self_attn.q_b_proj.weight", l, 0);
		t_addf(KR + RO, H, "model.layers.%d.self_attn.kv_a_proj_with_mqa.weight", l, 0);
		t_addf(KR, 0, "model.layers.%d.self_attn.kv_a_layernorm.weight", l, 0);
		t_addf(N * (NO + VD), KR, "model.layers.%d.self_attn.kv_b_proj.weight", l, 0);
		t_addf(H, N * VD, "model.layers.%d.self_attn.o_proj.weight", l, 0);
		t_addf(H, 0, "model.layers.%d.input_layernorm.weight", l, 0);
		t_addf(H, 0, "model.layers.%d.post_attention_layernorm.weight", l, 0);
		if (l == 0) {
			t_addf(F, H, "model.layers.%d.mlp.gate_proj.weight", l, 0);
			t_addf(F, H, "model.layers.%d.mlp.up_proj.weight", l, 0);
			t_addf(H, F, "model.layers.%d.mlp.down_proj.weight", l, 0);
			continue;
		}
		t_addf(E, H, "model.layers.%d.mlp.gate.weight", l, 0);
		t_addf(E, 0, "model.layers.%d.mlp.gate.e_score_correction_bias", l, 0);
		for (int e = 0; e < E; e++) {
			t_addf(FE, H, "model.layers.%d.mlp.experts.%d.gate_proj.weight", l, e);
			t_addf(FE, H, "model.layers.%d.mlp.experts.%d.up_proj.weight", l, e);
			t_addf(H, FE, "model.layers.%d.mlp.experts.%d.down_proj.weight", l, e);
		}
		t_addf(FE, H, "model.layers.%d.mlp.shared_experts.gate_proj.weight", l, 0);
		t_addf(FE, H, "model.layers.%d.mlp.shared_experts.up_proj.weight", l, 0);
		t_addf(H, FE, "model.layers.%d.mlp.shared_experts.down_proj.weight", l, 0);
	}
}

static void check_generated(const char *dir, const char *config)
{
	char rel[256], path[1024], cfgp[1100], stp[1100];
	CHECK(mkdir(tmp(dir), 0755) == 0);
	snprintf(rel, sizeof rel, "%s/config.json", dir);
	snprintf(cfgp, sizeof cfgp, "%s", tmp(rel));
	snprintf(rel, sizeof rel, "%s/model.safetensors", dir);
	snprintf(stp, sizeof stp, "%s", tmp(rel));
	snprintf(path, sizeof path, "%s", cfgp);
	*strrchr(path, '/') = 0;
	write_text(cfgp, config);
	write_st(stp, spec_buf, NULL);
	struct vf_model *files = load_ok(path), *cfg = load_ok(cfgp);
	if (!files || !cfg) {
		vf_model_free(files);
		vf_model_free(cfg);
		return;
	}
	/* header count == config count; nothing left not understood */
	CHECK_INT(files->params, cfg->params);
	CHECK(!files->arch.approximate && !cfg->arch.approximate);
	CHECK_INT(files->arch.params_exact, files->params);
	/* the tensor groups put the routed experts and router in "experts" */
	CHECK(files->groups.experts > 0);
	/* without the config: the layout inferred from the names and shapes */
	struct vf_model *alone = load_ok(stp);
	if (alone) {
		CHECK_STR(alone->arch.family, cfg->arch.family);
		CHECK(alone->arch.inferred & VF_ARCH_F_FAMILY);
		CHECK_INT(alone->arch.experts, cfg->arch.experts);
		CHECK_INT(alone->arch.moe_ffn, cfg->arch.moe_ffn);
		CHECK_INT(alone->arch.heads, cfg->arch.heads);
		CHECK_INT(alone->arch.kv_lora_rank, cfg->arch.kv_lora_rank);
		CHECK_INT(alone->arch.q_lora_rank, cfg->arch.q_lora_rank);
		CHECK_INT(alone->arch.qk_nope_dim, cfg->arch.qk_nope_dim);
		CHECK_INT(alone->arch.v_head_dim, cfg->arch.v_head_dim);
		CHECK_INT(alone->params, files->params);
	}
	vf_model_free(alone);
	vf_model_free(files);
	vf_model_free(cfg);
}

/* Names repeated layer after layer are worked out once (index blanked):
 * the largest layer still counts, the last wpe still wins, and a name
 * first seen past layer 0 still fills the layer-0 slots when layer 0
 * comes later. */
static void test_repeated_names(void)
{
	static int64_t sh_wpe1[] = {1024, 64}, sh_wpe2[] = {2048, 64}, sh_q[] = {64, 64},
		       sh_k[] = {32, 64}, sh_qn[] = {16}, sh_emb[] = {100, 64};
	struct vf_tensor t[] = {
		{.name = "model.layers.7.self_attn.q_proj.weight", .ndim = 2, .shape = sh_q},
		{.name = "model.layers.3.self_attn.q_proj.weight", .ndim = 2, .shape = sh_q},
		{.name = "model.layers.0.self_attn.q_norm.weight", .ndim = 1, .shape = sh_qn},
		{.name = "model.layers.0.self_attn.q_proj.weight", .ndim = 2, .shape = sh_q},
		{.name = "model.layers.0.self_attn.k_proj.weight", .ndim = 2, .shape = sh_k},
		{.name = "model.layers.12.self_attn.q_proj.weight", .ndim = 2, .shape = sh_q},
		{.name = "model.embed_tokens.weight", .ndim = 2, .shape = sh_emb},
		{.name = "x.layers.1.wpe.weight", .ndim = 2, .shape = sh_wpe1},
		{.name = "x.layers.2.wpe.weight", .ndim = 2, .shape = sh_wpe2},
	};
	struct vf_safetensors st = {.ntensors = sizeof t / sizeof t[0], .tensors = t};
	const struct vf_safetensors *list[1] = {&st};
	struct vf_arch a;
	vf_model_infer_arch(list, 1, &a);
	CHECK_INT(a.layers, 13);
	CHECK_INT(a.head_dim, 16);
	CHECK_INT(a.heads, 4);
	CHECK_INT(a.kv_heads, 2);
	CHECK_INT(a.max_positions, 2048);
	CHECK_STR(a.family, "qwen3");
	/* the groups: one per name, whatever its layer */
	struct vf_param_groups g = {0};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		vf_model_group_tensor(t[i].name, 10, &g);
	CHECK_INT(g.attention, 50);
	CHECK_INT(g.norm, 10);
	CHECK_INT(g.embedding, 30);
	CHECK_INT(g.total, 90);
	/* the same names over three files (patterns are worked out per file,
	 * then merged): the same answers, in every split */
	for (size_t cut1 = 0; cut1 <= 9; cut1++)
		for (size_t cut2 = cut1; cut2 <= 9; cut2++) {
			struct vf_safetensors s3[3] = {
				{.ntensors = cut1, .tensors = t},
				{.ntensors = cut2 - cut1, .tensors = t + cut1},
				{.ntensors = 9 - cut2, .tensors = t + cut2},
			};
			const struct vf_safetensors *l3[3] = {&s3[0], &s3[1], &s3[2]};
			struct vf_arch b;
			vf_model_infer_arch(l3, 3, &b);
			CHECK_INT(b.layers, 13);
			CHECK_INT(b.head_dim, 16);
			CHECK_INT(b.heads, 4);
			CHECK_INT(b.kv_heads, 2);
			CHECK_INT(b.max_positions, 2048);
			CHECK_STR(b.family, "qwen3");
		}
}

static void test_generated_moe_mla(void)
{
	gen_qwen3_moe();
	check_generated("gen-qwen3-moe",
			"{\"model_type\":\"qwen3_moe\",\"hidden_size\":32,\"num_hidden_layers\":2,"
			"\"num_attention_heads\":4,\"num_key_value_heads\":2,\"head_dim\":8,"
			"\"intermediate_size\":48,\"moe_intermediate_size\":16,\"num_experts\":4,"
			"\"num_experts_per_tok\":2,\"decoder_sparse_step\":1,\"mlp_only_layers\":[1],"
			"\"vocab_size\":50,\"tie_word_embeddings\":false,\"norm_topk_prob\":true}");
	gen_deepseek_v3();
	check_generated("gen-deepseek-v3",
			"{\"model_type\":\"deepseek_v3\",\"hidden_size\":32,\"num_hidden_layers\":3,"
			"\"num_attention_heads\":2,\"num_key_value_heads\":2,\"intermediate_size\":40,"
			"\"q_lora_rank\":12,\"kv_lora_rank\":8,\"qk_nope_head_dim\":6,"
			"\"qk_rope_head_dim\":4,\"v_head_dim\":6,\"n_routed_experts\":4,"
			"\"n_shared_experts\":1,\"num_experts_per_tok\":2,\"moe_intermediate_size\":8,"
			"\"first_k_dense_replace\":1,\"moe_layer_freq\":1,\"vocab_size\":50,"
			"\"tie_word_embeddings\":false,\"num_nextn_predict_layers\":0}");
}

int main(void)
{
	snprintf(fixtures, sizeof fixtures, "%s/fixtures/models",
		 vf_test_env("VF_SHARED_DIR", "../shared"));
	setenv("XDG_CONFIG_HOME", "/nonexistent-vf-test", 1);
	if (!mkdtemp(tmpdir))
		return 1;
	RUN(test_catalog_id);
	RUN(test_config_file);
	RUN(test_fixtures);
	RUN(test_inferred);
	RUN(test_index_errors);
	RUN(test_dirs);
	RUN(test_generated_moe_mla);
	RUN(test_repeated_names);
	vf_models_release();
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return vf_test_done();
}
