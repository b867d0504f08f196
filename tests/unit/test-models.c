/* test-models.c - the model catalog: every entry loads, its architecture
 * gives exactly its published parameter count, ids are found. */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vf_test.h"
#include "vramfit/base/buf.h"
#include "vramfit/base/json.h"
#include "vramfit/model/models.h"

static void test_catalog_loads(void)
{
	struct vf_error err = {0};
	CHECK(vf_models_load(&err) == VF_OK);
	if (err.msg[0])
		fprintf(stderr, "  %s\n", err.msg);
	size_t n = 0;
	const struct vf_model_entry *list = vf_models_list(&n);
	CHECK(n >= 39);
	for (size_t i = 0; i < n; i++) {
		const struct vf_model_entry *e = &list[i];
		if (strcmp(e->kind, "llm") != 0)
			continue;
		CHECK(e->has_arch);
		CHECK(e->has_groups);
		CHECK(e->params > 0);
		/* the published total equals the architecture's count */
		if (e->has_groups && e->groups.total != e->params) {
			fprintf(stderr, "  %s: architecture gives %lld, catalog says %lld\n", e->id,
				(long long)e->groups.total, (long long)e->params);
			CHECK(e->groups.total == e->params);
		}
	}
}

static void test_catalog_ids(void)
{
	static const char *ids[] = {
		"llama2-7b",   "llama2-13b",  "llama2-70b",   "llama3-8b",    "llama3.1-8b",
		"llama3-70b",  "mistral-7b",  "mixtral-8x7b", "qwen2.5-0.5b", "qwen2.5-1.5b",
		"qwen2.5-3b",  "qwen2.5-7b",  "qwen2.5-14b",  "qwen2.5-32b",  "qwen2.5-72b",
		"gemma2-2b",   "gemma2-9b",   "gemma2-27b",   "gemma3-4b",    "gemma3-12b",
		"gemma3-27b",  "phi3-mini",   "phi3-medium",  "gpt2",         "gpt2-medium",
		"gpt2-large",  "gpt2-xl",     "t5-small",     "t5-base",      "t5-large",
		"t5-3b",       "t5-11b",      "gpt-neox-20b", "tinyllama-1.1b", "stories260k",
		"stories15m",  "stories42m",  "stories110m",
	};
	for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
		const struct vf_model_entry *e = vf_models_find(ids[i]);
		if (!e)
			fprintf(stderr, "  missing %s\n", ids[i]);
		CHECK(e != NULL);
	}
	CHECK(vf_models_find("no-such-model") == NULL);
	CHECK(vf_models_find("gemma-3-12b") == vf_models_find("gemma3-12b"));
	CHECK(vf_models_find("Llama-2-7B") == vf_models_find("llama2-7b"));
	const struct vf_model_entry *e = vf_models_find("LLAMA2-7B");
	CHECK(e && e->params == 6738415616LL);
	CHECK(e && e->raw && cJSON_IsObject(e->raw));
	CHECK_STR(e ? e->file : NULL, "models/llm.json");
	e = vf_models_find("mixtral-8x7b");
	CHECK(e && e->arch.experts == 8 && e->arch.experts_per_token == 2);
	CHECK(e && e->groups.experts > 0 && e->groups.mlp == 0);
	e = vf_models_find("stories15m");
	CHECK(e && e->arch.hidden == 288 && e->arch.layers == 6 && e->arch.max_positions == 256);
	CHECK(e && e->params == 15191712); /* tied: 24407712 - 32000 x 288 */
	e = vf_models_find("stories260k");
	CHECK(e && e->arch.hidden == 64 && e->arch.kv_heads == 4 && e->arch.vocab == 512);
	e = vf_models_find("gemma3-12b");
	CHECK(e && e->arch.hidden == 3840 && e->arch.tied_embeddings);
	CHECK_STR(e ? e->arch.source : NULL, "catalog");
	/* gemma3: the published multimodal totals = language model + SigLIP
	 * tower + projector (1152 x hidden + 1152), for all three sizes */
	static const char *g3[] = {"gemma3-4b", "gemma3-12b", "gemma3-27b"};
	for (size_t i = 0; i < 3; i++) {
		e = vf_models_find(g3[i]);
		int64_t with = 0, vision = 0;
		CHECK(e && vf_json_get_i64(e->raw, "params_with_vision", &with));
		CHECK(e && vf_json_get_i64(e->raw, "vision_params", &vision));
		CHECK(e && e->has_groups && e->groups.total == e->params);
		CHECK_INT(e ? e->params + vision + 1152 * e->arch.hidden + 1152 : 0, with);
	}
}

/* An override directory adds files and replaces embedded ones; malformed
 * entries fail naming file, entry and field. */
static void test_overrides_and_errors(void)
{
	vf_models_release();
	char dir[] = "/tmp/vf-test-models-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char sub[256], path[300];
	snprintf(sub, sizeof sub, "%s/models", dir);
	CHECK(mkdir(sub, 0755) == 0);
	snprintf(path, sizeof path, "%s/extra.json", sub);
	struct vf_error err = {0};
	const char *extra = "{\"models\":[{\"id\":\"my-dit\",\"kind\":\"dit\",\"params\":123,"
			    "\"blocks\":48},{\"id\":\"my-vae\",\"kind\":\"vae\",\"config\":"
			    "{\"in_channels\":3}}]}";
	CHECK(vf_write_file_atomic(path, extra, strlen(extra), &err) == VF_OK);
	setenv("VRAMFIT_DATA_DIR", dir, 1);
	CHECK(vf_models_load(&err) == VF_OK);
	const struct vf_model_entry *e = vf_models_find("my-dit");
	CHECK(e && e->params == 123 && !e->has_arch);
	CHECK_STR(e ? e->kind : NULL, "dit");
	CHECK(e && cJSON_GetObjectItem(e->raw, "blocks") != NULL);
	e = vf_models_find("my-vae");
	CHECK(e && !e->has_arch && e->params == -1);
	CHECK(vf_models_find("llama2-7b") != NULL);
	vf_models_release();

	const char *bad = "{\"models\":[{\"id\":\"x\",\"params\":-4,\"config\":{}}]}";
	CHECK(vf_write_file_atomic(path, bad, strlen(bad), &err) == VF_OK);
	CHECK(vf_models_load(&err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "models/extra.json: model x: field params");
	CHECK(vf_models_find("llama2-7b") == NULL);
	vf_models_release();

	/* a malformed config holds up only its own entry: read when used */
	const char *badcfg = "[{\"id\":\"bad-cfg\",\"config\":{\"model_type\":\"llama\","
			     "\"hidden_size\":\"wide\",\"num_hidden_layers\":2}}]";
	CHECK(vf_write_file_atomic(path, badcfg, strlen(badcfg), &err) == VF_OK);
	CHECK(vf_models_load(&err) == VF_OK);
	e = vf_models_find("llama2-7b");
	CHECK(e && e->has_arch && e->arch.hidden == 4096 && e->params > 0);
	const struct vf_model_entry *got = e;
	CHECK(vf_models_lookup("Llama-2-7B", &got, NULL, 0, &err) == VF_OK && got == e);
	CHECK(vf_models_find("bad-cfg") == NULL);
	got = e;
	CHECK(vf_models_get("bad-cfg", &got, &err) == VF_ERR && got == NULL);
	CHECK_CONTAINS(err.msg, "models/extra.json: model bad-cfg: config: field hidden_size");
	vf_error_clear(&err);
	CHECK(vf_models_lookup("bad-cfg", &got, NULL, 0, &err) == VF_ERR && got == NULL);
	CHECK_CONTAINS(err.msg, "models/extra.json: model bad-cfg: config: field hidden_size");
	vf_error_clear(&err);
	CHECK(vf_models_get("no-such-model", &got, &err) == VF_OK && got == NULL);
	/* the listing validates every entry */
	CHECK(vf_models_load_all(&err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "models/extra.json: model bad-cfg: config: field hidden_size");
	size_t nl = 7;
	CHECK(vf_models_list(&nl) == NULL && nl == 0);
	CHECK(vf_models_find("llama2-7b") == e); /* still there, as read */
	vf_models_release();

	const char *dup = "[{\"id\":\"gpt2\",\"kind\":\"dit\"}]";
	CHECK(vf_write_file_atomic(path, dup, strlen(dup), &err) == VF_OK);
	CHECK(vf_models_load(&err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "id already used");
	vf_models_release();

	const char *badal = "[{\"id\":\"x\",\"kind\":\"dit\",\"aliases\":\"y\"}]";
	CHECK(vf_write_file_atomic(path, badal, strlen(badal), &err) == VF_OK);
	CHECK(vf_models_load(&err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "model x: field aliases: expected a list of strings");
	vf_models_release();

	const char *nocfg = "[{\"id\":\"nocfg\"}]";
	CHECK(vf_write_file_atomic(path, nocfg, strlen(nocfg), &err) == VF_OK);
	CHECK(vf_models_load(&err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "model nocfg: field config: required");
	vf_models_release();

	unsetenv("VRAMFIT_DATA_DIR");
	unlink(path);
	rmdir(sub);
	rmdir(dir);
}

int main(void)
{
	setenv("XDG_CONFIG_HOME", "/nonexistent-vf-test", 1);
	RUN(test_catalog_loads);
	RUN(test_catalog_ids);
	RUN(test_overrides_and_errors);
	vf_models_release();
	return vf_test_done();
}
