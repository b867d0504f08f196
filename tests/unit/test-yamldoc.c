/* test-yamldoc.c - unit tests for the YAML document module: lookup, typed
 * getters, byte-exact patching (quoting, CRLF, comments, flow and block
 * sequences, inserts of missing keys and parents) and the limits. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vf_test.h"
#include "vramfit/base/yamldoc.h"

static const char *SAMPLE =
	"# LTX-2 sample config\n"
	"model:\n"
	"  model_path: \"/path/to/model.safetensors\"  # the checkpoint\n"
	"  text_encoder_path: '/path/to/gemma'\n"
	"  training_mode: \"lora\"\n"
	"  load_checkpoint: null\n"
	"\n"
	"lora:\n"
	"  rank: 32\n"
	"  alpha: 32\n"
	"  target_modules:\n"
	"    - \"to_k\"\n"
	"    - to_q\n"
	"\n"
	"optimization:\n"
	"  learning_rate: 1e-4\n"
	"  steps: 2000\n"
	"  enable_gradient_checkpointing: true\n"
	"validation:\n"
	"  video_dims: [960, 544, 89]   # w, h, frames\n"
	"  prompts:\n"
	"  - \"a cat\"\n"
	"output_dir: outputs/t2v_lora\n"
	"seed: 42\n";

static struct vf_yamldoc *load(const char *text)
{
	struct vf_yamldoc *d = NULL;
	struct vf_error err = {0};
	if (vf_yamldoc_load_mem(text, strlen(text), "test.yaml", &d, &err) != VF_OK)
		fprintf(stderr, "  load failed: %s\n", err.msg);
	return d;
}

/* The text after a set, as a string (borrowed). */
static const char *text_of(struct vf_yamldoc *d)
{
	size_t len;
	return vf_yamldoc_text(d, &len);
}

static int set(struct vf_yamldoc *d, const char *k, const char *v)
{
	struct vf_error err = {0};
	vf_status st = vf_yamldoc_set(d, k, v, &err);
	if (st != VF_OK)
		fprintf(stderr, "  set %s=%s: %s\n", k, v, err.msg);
	return st;
}

/* Replace the first occurrence of from by to in s (malloc'd result). */
static char *replace(const char *s, const char *from, const char *to)
{
	const char *p = strstr(s, from);
	if (!p)
		return strdup(s);
	size_t n = strlen(s) - strlen(from) + strlen(to);
	char *r = malloc(n + 1);
	size_t a = (size_t)(p - s);
	memcpy(r, s, a);
	strcpy(r + a, to);
	strcat(r, p + strlen(from));
	return r;
}

static char *to_crlf(const char *s)
{
	size_t n = 0;
	for (const char *p = s; *p; p++)
		n += *p == '\n' ? 2 : 1;
	char *r = malloc(n + 1), *q = r;
	for (const char *p = s; *p; p++) {
		if (*p == '\n')
			*q++ = '\r';
		*q++ = *p;
	}
	*q = '\0';
	return r;
}

static void test_lookup(void)
{
	struct vf_yamldoc *d = load(SAMPLE);
	CHECK(d != NULL);
	if (!d)
		return;
	struct vf_error err = {0};
	const char *s = NULL;
	CHECK_INT(vf_yamldoc_get_str(d, "model.model_path", &s, &err), VF_OK);
	CHECK_STR(s, "/path/to/model.safetensors");
	CHECK_INT(vf_yamldoc_get_str(d, "model.text_encoder_path", &s, &err), VF_OK);
	CHECK_STR(s, "/path/to/gemma");
	int64_t i = 0;
	CHECK_INT(vf_yamldoc_get_int(d, "lora.rank", &i, &err), VF_OK);
	CHECK_INT(i, 32);
	CHECK_INT(vf_yamldoc_get_int(d, "validation.video_dims.2", &i, &err), VF_OK);
	CHECK_INT(i, 89);
	bool b = false;
	CHECK_INT(vf_yamldoc_get_bool(d, "optimization.enable_gradient_checkpointing", &b, &err), VF_OK);
	CHECK(b);
	CHECK_INT(vf_yaml_node_kind(vf_yamldoc_find(d, "model.load_checkpoint")), VF_YAML_NULL);
	/* PyYAML reads 1e-4 (no dot) as the string "1e-4"; pydantic parses it */
	CHECK_INT(vf_yaml_node_kind(vf_yamldoc_find(d, "optimization.learning_rate")), VF_YAML_STR);
	CHECK_STR(vf_yaml_node_str(vf_yamldoc_find(d, "optimization.learning_rate")), "1e-4");
	const struct vf_yaml_node *tm = vf_yamldoc_find(d, "lora.target_modules");
	CHECK_INT(vf_yaml_node_kind(tm), VF_YAML_SEQ);
	CHECK_INT(vf_yaml_node_count(tm), 2);
	CHECK_STR(vf_yaml_node_str(vf_yaml_node_child(tm, 1)), "to_q");
	CHECK(vf_yamldoc_find(d, "lora.nope") == NULL);
	CHECK(vf_yamldoc_find(d, "lora.rank.x") == NULL);
	CHECK(vf_yamldoc_find(d, "validation.video_dims.3") == NULL);
	CHECK(vf_yamldoc_find(d, "a..b") == NULL);
	CHECK_INT(vf_yamldoc_get_int(d, "model.model_path", &i, &err), VF_ERR);
	CHECK_CONTAINS(err.msg, "model.model_path");
	CHECK_CONTAINS(err.msg, "expected an integer");
	CHECK_INT(vf_yamldoc_get_int(d, "model.missing", &i, &err), VF_ENOTFOUND);
	const struct vf_yaml_node *root = vf_yamldoc_root(d);
	CHECK_INT(vf_yaml_node_count(root), 6);
	CHECK_STR(vf_yaml_node_key(root, 5), "seed");
	cJSON *j = vf_yaml_node_to_json(vf_yamldoc_find(d, "validation.video_dims"));
	char *js = j ? cJSON_PrintUnformatted(j) : NULL;
	CHECK_STR(js, "[960,544,89]");
	free(js);
	cJSON_Delete(j);
	vf_yamldoc_free(d);
}

static void test_set_quoted_keeps_style(void)
{
	struct vf_yamldoc *d = load(SAMPLE);
	if (!d)
		return;
	CHECK_INT(set(d, "model.model_path", "/runs/x/model.safetensors"), VF_OK);
	CHECK_INT(set(d, "model.text_encoder_path", "/runs/it's"), VF_OK);
	char *e1 = replace(SAMPLE, "\"/path/to/model.safetensors\"", "\"/runs/x/model.safetensors\"");
	char *e2 = replace(e1, "'/path/to/gemma'", "'/runs/it''s'");
	CHECK_STR(text_of(d), e2);
	const char *s = NULL;
	struct vf_error err = {0};
	CHECK_INT(vf_yamldoc_get_str(d, "model.text_encoder_path", &s, &err), VF_OK);
	CHECK_STR(s, "/runs/it's");
	free(e1);
	free(e2);
	vf_yamldoc_free(d);
}

static void test_set_scalars(void)
{
	struct vf_yamldoc *d = load(SAMPLE);
	if (!d)
		return;
	CHECK_INT(set(d, "optimization.steps", "50"), VF_OK);
	CHECK_INT(set(d, "model.training_mode", "full"), VF_OK);
	CHECK_INT(set(d, "model.load_checkpoint", "\"/a b/c\""), VF_OK);
	CHECK_INT(set(d, "output_dir", "/runs/x/outputs"), VF_OK);
	CHECK_INT(set(d, "optimization.enable_gradient_checkpointing", "false"), VF_OK);
	char *e = replace(SAMPLE, "steps: 2000", "steps: 50");
	char *e2 = replace(e, "\"lora\"", "\"full\"");
	char *e3 = replace(e2, "load_checkpoint: null", "load_checkpoint: \"/a b/c\"");
	char *e4 = replace(e3, "output_dir: outputs/t2v_lora", "output_dir: /runs/x/outputs");
	char *e5 = replace(e4, "checkpointing: true", "checkpointing: false");
	CHECK_STR(text_of(d), e5);
	/* a quoted original set to null becomes plain null */
	CHECK_INT(set(d, "model.training_mode", "null"), VF_OK);
	CHECK_CONTAINS(text_of(d), "  training_mode: null\n");
	free(e);
	free(e2);
	free(e3);
	free(e4);
	free(e5);
	vf_yamldoc_free(d);
}

static void test_set_sequences(void)
{
	struct vf_yamldoc *d = load(SAMPLE);
	if (!d)
		return;
	CHECK_INT(set(d, "validation.video_dims", "[576, 576, 49]"), VF_OK);
	CHECK_CONTAINS(text_of(d), "  video_dims: [576, 576, 49]   # w, h, frames\n");
	CHECK_INT(set(d, "validation.video_dims.2", "57"), VF_OK);
	CHECK_CONTAINS(text_of(d), "  video_dims: [576, 576, 57]   # w, h, frames\n");
	CHECK_INT(set(d, "lora.target_modules.1", "to_v"), VF_OK);
	CHECK_CONTAINS(text_of(d), "    - \"to_k\"\n    - to_v\n");
	CHECK_INT(set(d, "lora.target_modules.0", "to_q"), VF_OK);
	CHECK_CONTAINS(text_of(d), "    - \"to_q\"\n    - to_v\n");
	/* a block sequence replaced by a flow one */
	CHECK_INT(set(d, "lora.target_modules", "[\"to_k\", \"to_q\"]"), VF_OK);
	struct vf_yamldoc *d2 = load(text_of(d));
	CHECK(d2 != NULL);
	if (d2) {
		cJSON *j = vf_yaml_node_to_json(vf_yamldoc_find(d2, "lora.target_modules"));
		char *js = j ? cJSON_PrintUnformatted(j) : NULL;
		CHECK_STR(js, "[\"to_k\",\"to_q\"]");
		free(js);
		cJSON_Delete(j);
	}
	CHECK_CONTAINS(text_of(d), "\n\noptimization:\n");
	vf_yamldoc_free(d2);
	vf_yamldoc_free(d);
}

static void test_insert(void)
{
	struct vf_yamldoc *d = load(SAMPLE);
	if (!d)
		return;
	CHECK_INT(set(d, "lora.dropout", "0.0"), VF_OK);
	CHECK_CONTAINS(text_of(d), "    - to_q\n  dropout: 0.0\n\noptimization:\n");
	CHECK_INT(set(d, "acceleration.quantization", "null"), VF_OK);
	CHECK_CONTAINS(text_of(d), "seed: 42\nacceleration:\n  quantization: null\n");
	CHECK_INT(set(d, "acceleration.offload_optimizer_during_validation", "true"), VF_OK);
	CHECK_CONTAINS(text_of(d),
		       "acceleration:\n  quantization: null\n  offload_optimizer_during_validation: true\n");
	CHECK_INT(set(d, "hub.a.b", "x y"), VF_OK);
	CHECK_CONTAINS(text_of(d), "hub:\n  a:\n    b: x y\n");
	CHECK_INT(set(d, "validation.seed", "7"), VF_OK);
	CHECK_CONTAINS(text_of(d), "  - \"a cat\"\n  seed: 7\noutput_dir:");
	struct vf_error err = {0};
	bool b = false;
	CHECK_INT(vf_yamldoc_get_bool(d, "acceleration.offload_optimizer_during_validation", &b, &err),
		  VF_OK);
	CHECK(b);
	/* a key under a scalar cannot be added */
	CHECK_INT(vf_yamldoc_set(d, "seed.x", "1", &err), VF_ERR);
	CHECK_CONTAINS(err.msg, "seed is not a mapping (found integer)");
	vf_yamldoc_free(d);

	/* 4-space indentation and no final newline */
	d = load("a:\n    b: 1\n    c: 2");
	if (!d)
		return;
	CHECK_INT(set(d, "a.d", "3"), VF_OK);
	CHECK_INT(set(d, "e.f", "4"), VF_OK);
	CHECK_STR(text_of(d), "a:\n    b: 1\n    c: 2\n    d: 3\ne:\n    f: 4\n");
	vf_yamldoc_free(d);

	/* an empty parent, a flow mapping and an empty document */
	d = load("top:\nmid: {x: 1}\nlast: {}\n");
	if (!d)
		return;
	CHECK_INT(set(d, "top.k", "v"), VF_OK);
	CHECK_INT(set(d, "mid.y", "2"), VF_OK);
	CHECK_INT(set(d, "last.z.w", "3"), VF_OK);
	CHECK_STR(text_of(d), "top:\n  k: v\nmid: {x: 1, y: 2}\nlast: {z: {w: 3}}\n");
	vf_yamldoc_free(d);
	d = load("# only a comment\n");
	if (!d)
		return;
	CHECK_INT(set(d, "a.b", "1"), VF_OK);
	CHECK_STR(text_of(d), "# only a comment\na:\n  b: 1\n");
	vf_yamldoc_free(d);
}

static void test_crlf(void)
{
	char *crlf = to_crlf(SAMPLE);
	struct vf_yamldoc *d = load(crlf);
	if (!d) {
		free(crlf);
		return;
	}
	CHECK(vf_yamldoc_crlf(d));
	CHECK_INT(set(d, "output_dir", "/runs/r/outputs"), VF_OK);
	CHECK_INT(set(d, "model.model_path", "/m.safetensors"), VF_OK);
	CHECK_INT(set(d, "acceleration.quantization", "\"int8-quanto\""), VF_OK);
	char *e1 = replace(SAMPLE, "output_dir: outputs/t2v_lora", "output_dir: /runs/r/outputs");
	char *e2 = replace(e1, "/path/to/model.safetensors", "/m.safetensors");
	size_t l = strlen(e2);
	char *e3 = malloc(l + 64);
	memcpy(e3, e2, l + 1);
	strcat(e3, "acceleration:\n  quantization: \"int8-quanto\"\n");
	char *want = to_crlf(e3);
	CHECK_STR(text_of(d), want);
	const char *s = NULL;
	struct vf_error err = {0};
	CHECK_INT(vf_yamldoc_get_str(d, "acceleration.quantization", &s, &err), VF_OK);
	CHECK_STR(s, "int8-quanto");
	free(want);
	free(e1);
	free(e2);
	free(e3);
	free(crlf);
	vf_yamldoc_free(d);
}

static void test_utf8_and_bom(void)
{
	/* marks count characters; the splice must land on bytes */
	const char *t = "\xEF\xBB\xBF# h\xC3\xA9llo \xE2\x9C\x93\nname: \"caf\xC3\xA9\"\nn: 1\n";
	struct vf_yamldoc *d = load(t);
	if (!d)
		return;
	CHECK_INT(set(d, "n", "2"), VF_OK);
	CHECK_INT(set(d, "name", "th\xC3\xA9"), VF_OK);
	CHECK_STR(text_of(d), "\xEF\xBB\xBF# h\xC3\xA9llo \xE2\x9C\x93\nname: \"th\xC3\xA9\"\nn: 2\n");
	vf_yamldoc_free(d);
}

static void test_plain_fallback_quotes(void)
{
	struct vf_yamldoc *d = load("a: [1, 2]\nb: x\n");
	if (!d)
		return;
	/* in a flow sequence a plain "p,q" would split: it is double-quoted */
	CHECK_INT(set(d, "a.0", "\"p,q\""), VF_OK);
	CHECK_STR(text_of(d), "a: [\"p,q\", 2]\nb: x\n");
	CHECK_INT(set(d, "a.1", "r,s"), VF_OK);
	CHECK_STR(text_of(d), "a: [\"p,q\", \"r,s\"]\nb: x\n");
	struct vf_error err = {0};
	CHECK_INT(vf_yamldoc_set(d, "b", "k: v", &err), VF_EUSAGE);
	CHECK_CONTAINS(err.msg, "not a YAML scalar");
	CHECK_INT(vf_yamldoc_set(d, "b", "", &err), VF_EUSAGE);
	CHECK_INT(vf_yamldoc_set(d, "b", "[1,", &err), VF_ERR);
	CHECK_INT(vf_yamldoc_set(d, "", "1", &err), VF_EUSAGE);
	CHECK_STR(text_of(d), "a: [\"p,q\", \"r,s\"]\nb: x\n");
	vf_yamldoc_free(d);
}

static void test_set_str(void)
{
	struct vf_yamldoc *d = load("a: 'x'\nb: \"y\"\nc: z\n");
	if (!d)
		return;
	struct vf_error err = {0};
	CHECK_INT(vf_yamldoc_set_str(d, "a", "/p: q # r", &err), VF_OK);
	CHECK_INT(vf_yamldoc_set_str(d, "b", "say \"hi\"", &err), VF_OK);
	CHECK_INT(vf_yamldoc_set_str(d, "c", "/plain/path", &err), VF_OK);
	CHECK_STR(text_of(d), "a: '/p: q # r'\nb: \"say \\\"hi\\\"\"\nc: /plain/path\n");
	CHECK_INT(vf_yamldoc_set_str(d, "c", "null", &err), VF_OK);
	CHECK_INT(vf_yamldoc_set_str(d, "e", "a: b", &err), VF_OK);
	CHECK_INT(vf_yamldoc_set_str(d, "f", "", &err), VF_OK);
	CHECK_STR(text_of(d), "a: '/p: q # r'\nb: \"say \\\"hi\\\"\"\nc: \"null\"\ne: \"a: b\"\nf: \"\"\n");
	vf_yamldoc_free(d);
}

static void test_limits(void)
{
	struct vf_error err = {0};
	struct vf_yamldoc *d = NULL;
	/* alias bomb: 10^6 aliases */
	size_t n = 1000000;
	size_t cap = 32 + n * 4;
	char *bomb = malloc(cap);
	size_t len = (size_t)sprintf(bomb, "a: &a x\nb: [");
	for (size_t i = 0; i < n; i++) {
		memcpy(bomb + len, i ? ",*a" : "*a", i ? 3 : 2);
		len += i ? 3 : 2;
	}
	bomb[len++] = ']';
	bomb[len++] = '\n';
	CHECK_INT(vf_yamldoc_load_mem(bomb, len, "bomb.yaml", &d, &err), VF_ERR);
	CHECK_CONTAINS(err.msg, "bomb.yaml");
	CHECK_CONTAINS(err.msg, "aliases");
	CHECK(d == NULL);
	free(bomb);

	/* 100 MB scalar */
	size_t big = 100u << 20;
	char *s = malloc(big);
	memset(s, 'x', big);
	memcpy(s, "a: ", 3);
	CHECK_INT(vf_yamldoc_load_mem(s, big, "big.yaml", &d, &err), VF_ERR);
	CHECK_CONTAINS(err.msg, "big.yaml");
	CHECK_CONTAINS(err.msg, "over the limit");
	free(s);

	/* recursion through an alias to an open ancestor does not loop */
	CHECK_INT(vf_yamldoc_load_mem("a: &r [1, *r]\n", 14, "rec.yaml", &d, &err), VF_OK);
	if (d) {
		cJSON *j = vf_yaml_node_to_json(vf_yamldoc_find(d, "a"));
		CHECK(j == NULL);
		cJSON_Delete(j);
		vf_yamldoc_free(d);
		d = NULL;
	}
	/* deep nesting */
	char deep[512];
	memset(deep, '[', 300);
	deep[300] = '\0';
	CHECK_INT(vf_yamldoc_load_mem(deep, 300, "deep.yaml", &d, &err), VF_ERR);
	CHECK_CONTAINS(err.msg, "nesting");
	/* two documents, bad YAML */
	CHECK_INT(vf_yamldoc_load_mem("a: 1\n---\nb: 2\n", 14, "two.yaml", &d, &err), VF_ERR);
	CHECK_CONTAINS(err.msg, "more than one YAML document");
	CHECK_INT(vf_yamldoc_load_mem("a: [1\n", 6, "bad.yaml", &d, &err), VF_ERR);
	CHECK_CONTAINS(err.msg, "bad.yaml:");
	CHECK_CONTAINS(err.msg, "invalid YAML");
	/* anchored values are not patched */
	CHECK_INT(vf_yamldoc_load_mem("a: &x 1\nb: *x\n", 14, "anc.yaml", &d, &err), VF_OK);
	if (d) {
		int64_t v = 0;
		CHECK_INT(vf_yamldoc_get_int(d, "b", &v, &err), VF_OK);
		CHECK_INT(v, 1);
		CHECK_INT(vf_yamldoc_set(d, "a", "2", &err), VF_ERR);
		CHECK_CONTAINS(err.msg, "anchor");
		CHECK_INT(set(d, "b", "3"), VF_OK);
		CHECK_STR(text_of(d), "a: &x 1\nb: 3\n");
		vf_yamldoc_free(d);
	}
	/* a key set twice reads as its last copy (PyYAML's); set and
	 * check_path refuse it, naming both lines */
	CHECK_INT(vf_yamldoc_load_mem("o:\n  s: 2000\n  s: 0\n", 20, "dup.yaml", &d, &err), VF_OK);
	if (d) {
		int64_t v = -1;
		CHECK_INT(vf_yamldoc_get_int(d, "o.s", &v, &err), VF_OK);
		CHECK_INT(v, 0);
		CHECK_INT(vf_yamldoc_check_path(d, "o.s", &err), VF_ERR);
		CHECK_CONTAINS(err.msg, "dup.yaml:3: o.s is set twice (lines 2 and 3)");
		CHECK_INT(vf_yamldoc_set(d, "o.s", "5", &err), VF_ERR);
		CHECK_CONTAINS(err.msg, "set twice");
		CHECK_INT(vf_yamldoc_check_path(d, "o", &err), VF_OK);
		vf_yamldoc_free(d);
	}
	/* through an alias: refused, naming the anchor's other keys */
	CHECK_INT(vf_yamldoc_load_mem("d: &d {s: 1}\nv: *d\n", 19, "al.yaml", &d, &err), VF_OK);
	if (d) {
		CHECK_INT(vf_yamldoc_set(d, "v.s", "2", &err), VF_ERR);
		CHECK_CONTAINS(err.msg, "would also change d.s (anchor &d, line 1)");
		CHECK_STR(text_of(d), "d: &d {s: 1}\nv: *d\n");
		vf_yamldoc_free(d);
	}
}

static void test_file_roundtrip(void)
{
	char dir[] = "/tmp/vf-yamldoc.XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char path[256];
	snprintf(path, sizeof path, "%s/c.yaml", dir);
	FILE *f = fopen(path, "w");
	fputs(SAMPLE, f);
	fclose(f);
	struct vf_error err = {0};
	struct vf_yamldoc *d = NULL;
	CHECK_INT(vf_yamldoc_load_file(path, &d, &err), VF_OK);
	if (d) {
		CHECK_STR(vf_yamldoc_name(d), path);
		CHECK_STR(text_of(d), SAMPLE);
		CHECK_INT(set(d, "seed", "7"), VF_OK);
		CHECK_INT(vf_yamldoc_save(d, path, &err), VF_OK);
		vf_yamldoc_free(d);
		d = NULL;
		CHECK_INT(vf_yamldoc_load_file(path, &d, &err), VF_OK);
		int64_t v = 0;
		if (d)
			CHECK_INT(vf_yamldoc_get_int(d, "seed", &v, &err), VF_OK);
		CHECK_INT(v, 7);
		vf_yamldoc_free(d);
	}
	CHECK_INT(vf_yamldoc_load_file("/nonexistent/x.yaml", &d, &err), VF_ENOTFOUND);
	CHECK_CONTAINS(err.msg, "/nonexistent/x.yaml");
	unlink(path);
	rmdir(dir);
}

/* The test trainer's shipped configs load, and patching the four paths
 * changes exactly those lines, in LF and CRLF. */
static void test_trainer_configs(void)
{
	const char *src = vf_test_env("VF_SOURCE_DIR", ".");
	const char *names[] = {"t2v_lora.yaml", "t2v_lora_low_vram.yaml", "i2v_lora.yaml",
			       "i2v_lora_low_vram.yaml"};
	for (int i = 0; i < 4; i++) {
		char path[1024];
		snprintf(path, sizeof path, "%s/tests/fixtures/ltx-trainer/configs/%s", src, names[i]);
		struct vf_error err = {0};
		struct vf_yamldoc *d = NULL;
		if (access(path, R_OK) != 0)
			continue; /* written with the trainer fixture */
		CHECK_INT(vf_yamldoc_load_file(path, &d, &err), VF_OK);
		if (!d)
			continue;
		for (int crlf = 0; crlf < 2; crlf++) {
			size_t len;
			const char *orig = vf_yamldoc_text(d, &len);
			char *base = crlf ? to_crlf(orig) : strdup(orig);
			struct vf_yamldoc *c = load(base);
			if (!c) {
				free(base);
				continue;
			}
			CHECK_INT(set(c, "model.model_path", "/r/m.safetensors"), VF_OK);
			CHECK_INT(set(c, "model.text_encoder_path", "/r/gemma"), VF_OK);
			CHECK_INT(set(c, "data.preprocessed_data_root", "/r/dataset/.precomputed"), VF_OK);
			CHECK_INT(set(c, "output_dir", "/r/outputs"), VF_OK);
			/* count differing lines */
			const char *a = base, *b = text_of(c);
			int diff = 0, lines = 0;
			while (*a && *b) {
				const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
				size_t la = ea ? (size_t)(ea - a) : strlen(a);
				size_t lb = eb ? (size_t)(eb - b) : strlen(b);
				if (la != lb || memcmp(a, b, la) != 0)
					diff++;
				lines++;
				a += la + (ea ? 1 : 0);
				b += lb + (eb ? 1 : 0);
			}
			CHECK(*a == '\0' && *b == '\0');
			CHECK_INT(diff, 4);
			CHECK(lines > 20);
			free(base);
			vf_yamldoc_free(c);
		}
		vf_yamldoc_free(d);
	}
}

/* Every scalar leaf of every trainer config, set to a new string: the
 * change is one splice (common prefix + common suffix cover all but the new
 * value) and it reads back. */
static void collect(const struct vf_yaml_node *n, char *path, size_t len, char (*out)[256], int *nout)
{
	enum vf_yaml_kind k = vf_yaml_node_kind(n);
	if (k != VF_YAML_MAP && k != VF_YAML_SEQ) {
		if (*nout < 400)
			snprintf(out[(*nout)++], 256, "%s", path);
		return;
	}
	for (size_t i = 0; i < vf_yaml_node_count(n); i++) {
		char seg[64];
		if (k == VF_YAML_MAP)
			snprintf(seg, sizeof seg, "%s", vf_yaml_node_key(n, i));
		else
			snprintf(seg, sizeof seg, "%zu", i);
		size_t l = strlen(path);
		snprintf(path + l, len - l, "%s%s", l ? "." : "", seg);
		collect(vf_yaml_node_child(n, i), path, len, out, nout);
		path[l] = '\0';
	}
}

/* Set each of paths[0..n) of orig to a new string, one at a time. */
static int patch_leaves(const char *name, const char *orig, char (*paths)[256], int n)
{
	size_t olen = strlen(orig);
	int done = 0;
	struct vf_error err = {0};
	for (int i = 0; i < n; i++) {
		struct vf_yamldoc *c = load(orig);
		if (!c)
			continue;
		done++;
		if (vf_yamldoc_set_str(c, paths[i], "new value", &err) != VF_OK) {
			fprintf(stderr, "  %s %s: %s\n", name, paths[i], err.msg);
			CHECK(0);
			vf_yamldoc_free(c);
			continue;
		}
		const char *got = NULL;
		CHECK_INT(vf_yamldoc_get_str(c, paths[i], &got, &err), VF_OK);
		CHECK_STR(got, "new value");
		size_t nlen;
		const char *nt = vf_yamldoc_text(c, &nlen);
		size_t pre = 0, suf = 0;
		while (pre < olen && pre < nlen && orig[pre] == nt[pre])
			pre++;
		while (suf < olen - pre && suf < nlen - pre && orig[olen - 1 - suf] == nt[nlen - 1 - suf])
			suf++;
		if (nlen - pre - suf > strlen("\"new value\"") + 1) {
			fprintf(stderr, "  %s %s: %zu bytes changed\n", name, paths[i], nlen - pre - suf);
			CHECK(0);
		}
		vf_yamldoc_free(c);
	}
	return done;
}

static void test_every_leaf(void)
{
	const char *src = vf_test_env("VF_SOURCE_DIR", ".");
	const char *names[] = {"t2v_lora.yaml", "i2v_lora_low_vram.yaml", "accelerate/fsdp.yaml"};
	static char paths[400][256];
	int total = 0;
	for (int f = 0; f < 3; f++) {
		char file[1024];
		snprintf(file, sizeof file, "%s/tests/fixtures/ltx-trainer/configs/%s", src, names[f]);
		struct vf_error err = {0};
		struct vf_yamldoc *d = NULL;
		if (vf_yamldoc_load_file(file, &d, &err) != VF_OK) {
			CHECK(0);
			continue;
		}
		int n = 0;
		char path[256] = "";
		collect(vf_yamldoc_root(d), path, sizeof path, paths, &n);
		char *lf = strdup(vf_yamldoc_text(d, NULL));
		char *crlf = to_crlf(lf);
		total += patch_leaves(names[f], lf, paths, n);
		total += patch_leaves(names[f], crlf, paths, n);
		free(lf);
		free(crlf);
		vf_yamldoc_free(d);
	}
	fprintf(stderr, "  %d leaves patched (LF and CRLF)\n", total);
	CHECK(total > 200);
}

static void collect_maps(const struct vf_yaml_node *n, char *path, size_t len, char (*out)[256],
			 int *nout)
{
	enum vf_yaml_kind k = vf_yaml_node_kind(n);
	if (k == VF_YAML_MAP && *nout < 100)
		snprintf(out[(*nout)++], 256, "%s", path);
	if (k != VF_YAML_MAP && k != VF_YAML_SEQ)
		return;
	for (size_t i = 0; i < vf_yaml_node_count(n); i++) {
		char seg[64];
		if (k == VF_YAML_MAP)
			snprintf(seg, sizeof seg, "%s", vf_yaml_node_key(n, i));
		else
			snprintf(seg, sizeof seg, "%zu", i);
		size_t l = strlen(path);
		snprintf(path + l, len - l, "%s%s", l ? "." : "", seg);
		collect_maps(vf_yaml_node_child(n, i), path, len, out, nout);
		path[l] = '\0';
	}
}

/* A key added to every mapping (block or flow) of the trainer configs: the
 * new text is the old one plus one inserted line or flow entry. */
static void test_insert_everywhere(void)
{
	const char *src = vf_test_env("VF_SOURCE_DIR", ".");
	const char *names[] = {"t2v_lora.yaml", "i2v_lora.yaml", "accelerate/fsdp.yaml"};
	static char maps[100][256];
	int total = 0;
	for (int f = 0; f < 3; f++) {
		char file[1024];
		snprintf(file, sizeof file, "%s/tests/fixtures/ltx-trainer/configs/%s", src, names[f]);
		struct vf_error err = {0};
		struct vf_yamldoc *d = NULL;
		if (vf_yamldoc_load_file(file, &d, &err) != VF_OK) {
			CHECK(0);
			continue;
		}
		int n = 0;
		char path[256] = "";
		collect_maps(vf_yamldoc_root(d), path, sizeof path, maps, &n);
		size_t olen;
		const char *orig = vf_yamldoc_text(d, &olen);
		for (int i = 0; i < n; i++) {
			struct vf_yamldoc *c = load(orig);
			if (!c)
				continue;
			char key[300];
			snprintf(key, sizeof key, "%s%szz_new.leaf", maps[i], maps[i][0] ? "." : "");
			total++;
			if (vf_yamldoc_set(c, key, "17", &err) != VF_OK) {
				fprintf(stderr, "  %s %s: %s\n", names[f], key, err.msg);
				CHECK(0);
				vf_yamldoc_free(c);
				continue;
			}
			int64_t v = 0;
			CHECK_INT(vf_yamldoc_get_int(c, key, &v, &err), VF_OK);
			CHECK_INT(v, 17);
			size_t nlen;
			const char *nt = vf_yamldoc_text(c, &nlen);
			size_t pre = 0, suf = 0;
			while (pre < olen && orig[pre] == nt[pre])
				pre++;
			while (suf < olen - pre && orig[olen - 1 - suf] == nt[nlen - 1 - suf])
				suf++;
			CHECK(pre + suf == olen); /* a pure insertion */
			vf_yamldoc_free(c);
		}
		vf_yamldoc_free(d);
	}
	CHECK(total > 20);
}


/* "v: SCALAR" loaded, *n its value (NULL doc: the CHECK failed). */
static struct vf_yamldoc *load_value(const char *scalar, const struct vf_yaml_node **n)
{
	char text[160];
	snprintf(text, sizeof text, "v: %s\n", scalar);
	struct vf_yamldoc *d = load(text);
	CHECK(d != NULL);
	*n = d ? vf_yamldoc_find(d, "v") : NULL;
	return d;
}

/* Plain scalars as PyYAML 6.0's safe_load resolves them (each expectation
 * was read from yaml.safe_load("v: <text>") on PyYAML 6.0.3). */
static void test_pyyaml_scalars(void)
{
	static const struct {
		const char *text;
		enum vf_yaml_kind kind;
		double value; /* ints and floats */
	} cases[] = {
		{"1e3", VF_YAML_STR, 0},      {"1e-4", VF_YAML_STR, 0},     {"1.0e5", VF_YAML_STR, 0},
		{"1.0e+5", VF_YAML_FLOAT, 1e5}, {"1.e-4", VF_YAML_FLOAT, 1e-4}, {".5", VF_YAML_FLOAT, 0.5},
		{"-.5", VF_YAML_STR, 0},      {"0x7d0", VF_YAML_INT, 2000}, {"0o17", VF_YAML_STR, 0},
		{"017", VF_YAML_INT, 15},     {"09", VF_YAML_STR, 0},       {"0b101", VF_YAML_INT, 5},
		{"1:30", VF_YAML_INT, 90},    {"1:30.5", VF_YAML_FLOAT, 90.5}, {"1:5:7", VF_YAML_INT, 3907},
		{"-1:30", VF_YAML_INT, -90},  {"0:30", VF_YAML_STR, 0},     {"1:60", VF_YAML_STR, 0},
		{"y", VF_YAML_STR, 0},        {"n", VF_YAML_STR, 0},        {"yes", VF_YAML_BOOL, 0},
		{"On", VF_YAML_BOOL, 0},      {"OFF", VF_YAML_BOOL, 0},     {"tRue", VF_YAML_STR, 0},
		{"1_000", VF_YAML_INT, 1000}, {"0_1", VF_YAML_INT, 1},      {"+12", VF_YAML_INT, 12},
		{"-0", VF_YAML_INT, 0},       {"1__0", VF_YAML_INT, 10},    {"0.", VF_YAML_FLOAT, 0},
		{"._5", VF_YAML_STR, 0},      {".5_", VF_YAML_FLOAT, 0.5},  {"1_0.5", VF_YAML_FLOAT, 10.5},
		{"0x_1F", VF_YAML_INT, 31},   {"-0x10", VF_YAML_INT, -16},  {"1.5e3", VF_YAML_STR, 0},
		{"1.5E+3", VF_YAML_FLOAT, 1500}, {"-.inf", VF_YAML_FLOAT, -1.0 / 0.0}, {"-.NaN", VF_YAML_STR, 0},
		{"00", VF_YAML_INT, 0},       {"1:0_0", VF_YAML_STR, 0},    {"~", VF_YAML_NULL, 0},
		{"Null", VF_YAML_NULL, 0},    {"0b", VF_YAML_STR, 0},       {"08", VF_YAML_STR, 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct vf_yaml_node *n;
		struct vf_yamldoc *d = load_value(cases[i].text, &n);
		if (!d)
			continue;
		if (vf_yaml_node_kind(n) != cases[i].kind)
			fprintf(stderr, "  %s: kind %s, PyYAML says %s\n", cases[i].text,
				vf_yaml_kind_name(vf_yaml_node_kind(n)), vf_yaml_kind_name(cases[i].kind));
		CHECK_INT(vf_yaml_node_kind(n), cases[i].kind);
		double v = 0;
		if (cases[i].kind == VF_YAML_INT || cases[i].kind == VF_YAML_FLOAT) {
			CHECK(vf_yaml_node_double(n, &v));
			CHECK(v == cases[i].value);
		}
		if (cases[i].kind == VF_YAML_INT) {
			int64_t iv = 0;
			CHECK(vf_yaml_node_int(n, &iv));
			CHECK(iv == (int64_t)cases[i].value);
		}
		vf_yamldoc_free(d);
	}
}

/* Ints past 64 bits stay ints (Python's have no limit): no exact int64,
 * but their value as a double, so a bound compares right (a check of
 * ge=0 must fail -99999999999999999999 and pass 2^63). */
static void test_wide_ints(void)
{
	static const struct {
		const char *text;
		double value;
		bool fits;
	} cases[] = {
		{"9223372036854775807", 9223372036854775807.0, true},
		{"-9223372036854775808", -9223372036854775808.0, true},
		{"9223372036854775808", 9223372036854775808.0, false},
		{"-99999999999999999999", -1e20, false},
		{"0x1_0000_0000_0000_0000", 18446744073709551616.0, false},
		{"1_000_000_000_000_000_000_000", 1e21, false},
		{"1000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
		 1e99, false},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct vf_yaml_node *n;
		struct vf_yamldoc *d = load_value(cases[i].text, &n);
		if (!d)
			continue;
		CHECK_INT(vf_yaml_node_kind(n), VF_YAML_INT);
		double v = 0;
		int64_t iv = 0;
		CHECK(vf_yaml_node_double(n, &v));
		CHECK(fabs(v - cases[i].value) <= 1e-15 * fabs(cases[i].value));
		CHECK(vf_yaml_node_int(n, &iv) == cases[i].fits);
		vf_yamldoc_free(d);
	}
}

/* Merge keys (<<) as PyYAML merges them: explicit keys win, the first of a
 * merged list wins, nested merges flatten; a set through a merged key is
 * refused rather than editing the shared anchor. */
static void test_merge_keys(void)
{
	struct vf_yamldoc *d = load("base: &b {x: 1, y: 2}\n"
				    "c:\n  <<: *b\n  y: 3\n"
				    "d:\n  <<: [*b, {x: 9, z: 1}]\n"
				    "e: &e\n  <<: *b\n  w: 4\n"
				    "f:\n  <<: *e\n");
	CHECK(d != NULL);
	if (!d)
		return;
	int64_t v = 0;
	struct vf_error err = {0};
	CHECK_INT(vf_yamldoc_get_int(d, "c.x", &v, &err), VF_OK);
	CHECK_INT(v, 1);
	CHECK_INT(vf_yamldoc_get_int(d, "c.y", &v, &err), VF_OK);
	CHECK_INT(v, 3);
	CHECK_INT(vf_yaml_node_count(vf_yamldoc_find(d, "c")), 2);
	CHECK_INT(vf_yamldoc_get_int(d, "d.x", &v, &err), VF_OK);
	CHECK_INT(v, 1);
	CHECK_INT(vf_yamldoc_get_int(d, "d.z", &v, &err), VF_OK);
	CHECK_INT(vf_yaml_node_count(vf_yamldoc_find(d, "d")), 3);
	CHECK_INT(vf_yamldoc_get_int(d, "f.w", &v, &err), VF_OK);
	CHECK_INT(vf_yamldoc_get_int(d, "f.y", &v, &err), VF_OK);
	CHECK_INT(v, 2);
	for (size_t i = 0; i < vf_yaml_node_count(vf_yamldoc_find(d, "f")); i++)
		CHECK(strcmp(vf_yaml_node_key(vf_yamldoc_find(d, "f"), i), "<<") != 0);
	CHECK_INT(vf_yamldoc_set(d, "c.x", "5", &err), VF_ERR);
	CHECK(strstr(err.msg, "merge key") != NULL);
	CHECK_INT(vf_yamldoc_set(d, "c.y", "5", &err), VF_OK);
	CHECK_INT(vf_yamldoc_get_int(d, "base.y", &v, &err), VF_OK);
	CHECK_INT(v, 2);
	vf_yamldoc_free(d);
	/* a merge of a scalar, and of its own mapping, are errors */
	struct vf_yamldoc *bad = NULL;
	CHECK_INT(vf_yamldoc_load_mem("a: 1\nb:\n  <<: 3\n", 15, "m.yaml", &bad, &err), VF_ERR);
	CHECK(strstr(err.msg, "m.yaml:") != NULL);
}

/* vf_yamldoc_set_all: a change set as JSON, strings as YAML text and any
 * other value as its JSON text (a number was skipped before: a hand-edited
 * sweep.json's "optimization.batch_size": 4 changed nothing). */
static void test_set_all(void)
{
	static const char doc[] = "optimization:\n  batch_size: 1\n  steps: 10\nseed: 42\nname: a\n";
	struct vf_yamldoc *d = load(doc);
	if (!d)
		return;
	cJSON *set = cJSON_Parse("{\"optimization.batch_size\": 4, \"optimization.steps\": \"20\", "
				 "\"seed\": null, \"name\": \"b\"}");
	struct vf_error err = {0};
	CHECK_INT(vf_yamldoc_set_all(d, set, &err), VF_OK);
	int64_t v = 0;
	CHECK_INT(vf_yamldoc_get_int(d, "optimization.batch_size", &v, &err), VF_OK);
	CHECK_INT(v, 4);
	CHECK_INT(vf_yamldoc_get_int(d, "optimization.steps", &v, &err), VF_OK);
	CHECK_INT(v, 20);
	CHECK_CONTAINS(text_of(d), "seed: null");
	CHECK_CONTAINS(text_of(d), "name: b");
	cJSON_Delete(set);
	/* a bad value names its path; the document keeps the changes made before */
	set = cJSON_Parse("{\"seed\": \"7\", \"optimization\": \"[1, 2\"}");
	CHECK(vf_yamldoc_set_all(d, set, &err) != VF_OK);
	CHECK_CONTAINS(err.msg, "optimization");
	CHECK_CONTAINS(text_of(d), "seed: 7");
	cJSON_Delete(set);
	vf_yamldoc_free(d);
}

int main(void)
{
	RUN(test_pyyaml_scalars);
	RUN(test_wide_ints);
	RUN(test_merge_keys);
	RUN(test_lookup);
	RUN(test_set_quoted_keeps_style);
	RUN(test_set_scalars);
	RUN(test_set_sequences);
	RUN(test_insert);
	RUN(test_crlf);
	RUN(test_utf8_and_bom);
	RUN(test_plain_fallback_quotes);
	RUN(test_set_str);
	RUN(test_limits);
	RUN(test_file_roundtrip);
	RUN(test_trainer_configs);
	RUN(test_every_leaf);
	RUN(test_insert_everywhere);
	RUN(test_set_all);
	return vf_test_done();
}
