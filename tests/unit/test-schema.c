/* test-schema.c - unit tests for the static reader of the trainer's pydantic
 * schema (lib/trainer/schema.c) and the check against it: the fixture
 * trainer's config.py (nested models, imports, aliases, unions by field and
 * by Tag, Literals, bounds, before-validators), a field added to the
 * validation model is accepted, a key the schema lacks is named unknown with
 * its class, what the reader cannot understand is "not checked", and inputs
 * at the limits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trainer/check_internal.h"
#include "vf_test.h"
#include "vramfit/trainer/schema.h"

static char fixture[1024];

static struct vf_schema *load_fixture(void)
{
	struct vf_schema *s = NULL;
	struct vf_error err = {0};
	CHECK_INT(vf_schema_load(fixture, "src/ltx_trainer/config.py", "LtxTrainerConfig", &s, &err), VF_OK);
	if (!s)
		fprintf(stderr, "  %s\n", err.msg);
	return s;
}

static const struct vf_pyfield *field(const struct vf_schema *s, const char *model, const char *name)
{
	return vf_pymodel_field(vf_schema_model(s, model), name);
}

static void test_fixture_model(void)
{
	struct vf_schema *s = load_fixture();
	if (!s)
		return;
	size_t models, fields, files;
	vf_schema_stats(s, &models, &fields, &files);
	CHECK(models >= 20);
	CHECK_INT(files, 3); /* config.py, strategies.py, quant.py */
	const struct vf_pymodel *root = vf_schema_root(s);
	CHECK_STR(root->name, "LtxTrainerConfig");
	CHECK(root->forbid);
	/* nesting, inheritance across modules, required fields */
	const struct vf_pyfield *f = vf_pymodel_field(root, "data");
	CHECK(f && f->required && f->type->kind == VF_PY_MODEL);
	CHECK(field(s, "ModelSection", "model_path")->required);
	CHECK(!field(s, "ModelSection", "video_vae_path")->required);
	CHECK(vf_schema_model(s, "HubSection")->forbid); /* base imported under another name */
	/* Literal through an alias in another module, | None */
	char t[256];
	vf_pytype_text(field(s, "AccelSection", "quantization")->type, t, sizeof t);
	CHECK_STR(t, "'int8-quanto', 'int4-quanto', 'int2-quanto', 'fp8-quanto', 'fp8uz-quanto' | None");
	/* bounds */
	f = field(s, "LoraSection", "dropout");
	CHECK(f->b.has_ge && f->b.ge == 0.0 && f->b.has_le && f->b.le == 1.0);
	f = field(s, "CheckpointSection", "keep_last_n");
	CHECK(f->b.has_ge && f->b.ge == -1);
	/* unions: by Tag (strategies), by Field(discriminator=) (conditions) */
	f = vf_pymodel_field(root, "training_strategy");
	CHECK(f->type->kind == VF_PY_UNION && f->type->nargs == 3);
	CHECK_STR(f->type->args[2]->tag, "flexible");
	const struct vf_pytype *conds = field(s, "Sample", "conditions")->type;
	CHECK(conds->kind == VF_PY_LIST && conds->args[0]->kind == VF_PY_UNION);
	CHECK_STR(conds->args[0]->discriminator, "type");
	/* a quoted forward reference: "Optional[Stream]" */
	vf_pytype_text(field(s, "FlexibleStrategy", "audio")->type, t, sizeof t);
	CHECK_STR(t, "Stream | None");
	/* tuple[int, int, int] */
	f = field(s, "ValidationSection", "video_dims");
	CHECK(f->type->kind == VF_PY_TUPLE && f->type->nargs == 3 && !f->type->variadic);
	/* the keys a before-validator may take */
	CHECK(vf_pymodel_consumes(vf_schema_model(s, "ValidationSection"), "guidance_scale"));
	CHECK(vf_pymodel_consumes(vf_schema_model(s, "ValidationSection"), "stg_mode"));
	CHECK(!vf_pymodel_consumes(vf_schema_model(s, "ValidationSection"), "frame_rate"));
	CHECK(vf_schema_has_path(s, "training_strategy.video.latents_dir"));
	CHECK(vf_schema_has_path(s, "validation.samples.0.conditions.0.video"));
	CHECK(!vf_schema_has_path(s, "model.vae_path"));
	vf_schema_free(s);
}

/* Parse a config.py given as text, check a YAML text against it. */
static void check_text(const char *py, const char *yaml, struct vf_check *c)
{
	struct vf_schema *s = NULL;
	struct vf_yamldoc *d = NULL;
	struct vf_error err = {0};
	vf_check_init(c);
	CHECK_INT(vf_schema_parse_mem(py, strlen(py), "config.py", "Root", &s, &err), VF_OK);
	CHECK_INT(vf_yamldoc_load_mem(yaml, strlen(yaml), "c.yaml", &d, &err), VF_OK);
	if (s && d)
		vf__check_schema(vf_yamldoc_root(d), s, c);
	vf_schema_free(s);
	vf_yamldoc_free(d);
}

static bool has_item(const struct vf_check *c, enum vf_check_level lv, const char *key, const char *needle)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->items[i].level == lv && strcmp(c->items[i].key, key) == 0 && strstr(c->items[i].rule, needle))
			return true;
	for (size_t i = 0; i < c->n; i++)
		fprintf(stderr, "  item %d %s: %s\n", (int)c->items[i].level, c->items[i].key, c->items[i].rule);
	return false;
}

static const char py_base[] =
	"from pydantic import BaseModel, ConfigDict, Field\n"
	"from typing import Literal\n"
	"class B(BaseModel):\n"
	"    model_config = ConfigDict(extra=\"forbid\")\n"
	"class Val(B):\n"
	"    \"\"\"docstring with a: colon\"\"\"\n"
	"    seed: int = 42  # a comment\n"
	"    steps: int = Field(default=30, gt=0,\n"
	"                       description=\"multi-line\")\n"
	"    @property\n"
	"    def nothing(self) -> int:\n"
	"        x: int = 3\n"
	"        return x\n"
	"class Root(B):\n"
	"    validation: Val = Field(default_factory=Val)\n"
	"    mode: Literal['a', 'b'] = 'a'\n";

static const char py_disc[] =
	"from typing import Literal, Union\n"
	"from pydantic import BaseModel, Field\n"
	"class A(BaseModel):\n    type: Literal['a'] = 'a'\n"
	"class B(BaseModel):\n    type: Literal['b'] = 'b'\n"
	"class C(BaseModel):\n    type: Literal['c'] = 'c'\n"
	"class Root(BaseModel):\n"
	"    cond: Union[A, B, C] = Field(default_factory=A, discriminator='type')\n";

static void test_added_and_removed_field(void)
{
	struct vf_check c;
	/* a key the schema does not define: unknown, named with its class */
	check_text(py_base, "validation:\n  seed: 1\n  new_scale: 2.5\n", &c);
	CHECK_INT(c.failures, 1);
	CHECK(has_item(&c, VF_CHECK_FAIL, "validation.new_scale", "unknown key: Val (config.py:5)"));
	vf_check_release(&c);
	/* the same key once the trainer adds the field: accepted, bounds read */
	char py[2048];
	snprintf(py, sizeof py, "%s", py_base);
	char *at = strstr(py, "    steps: int");
	char rest[1024];
	snprintf(rest, sizeof rest, "%s", at);
	snprintf(at, sizeof py - (size_t)(at - py), "    new_scale: float = Field(1.0, ge=1.0)\n%s", rest);
	check_text(py, "validation:\n  seed: 1\n  new_scale: 2.5\n", &c);
	CHECK_INT(c.failures, 0);
	vf_check_release(&c);
	check_text(py, "validation:\n  new_scale: 0.5\n  steps: 0\n", &c);
	CHECK_INT(c.failures, 2);
	CHECK(has_item(&c, VF_CHECK_FAIL, "validation.new_scale", "must be >= 1"));
	CHECK(has_item(&c, VF_CHECK_FAIL, "validation.steps", "must be > 0"));
	vf_check_release(&c);
	check_text(py_base, "mode: c\n", &c);
	CHECK(has_item(&c, VF_CHECK_FAIL, "mode", "'c' is not an allowed value (allowed: a, b)"));
	vf_check_release(&c);
}

static void test_not_understood_is_not_checked(void)
{
	static const char py[] =
		"from pydantic import BaseModel, ConfigDict, conint\n"
		"from somewhere_else import Mystery\n"
		"class Root(BaseModel):\n"
		"    model_config = ConfigDict(extra='forbid')\n"
		"    a: conint(ge=1) = 1\n"
		"    b: Mystery | None = None\n"
		"    c: 'Dict[str, Weird[int]]' = {}\n"
		"    d: dict[str, int] = {}\n"
		"class Loose(Mystery):\n"
		"    x: int = 1\n";
	struct vf_check c;
	check_text(py, "a: 3\nb: {x: 1}\nd: {k: 1}\n", &c);
	CHECK_INT(c.failures, 0);
	CHECK(c.unchecked >= 1);
	CHECK(has_item(&c, VF_CHECK_UNCHECKED, "b", "not understood"));
	vf_check_release(&c);
	/* conint(ge=1) is read: 0 is below its minimum (pydantic: greater_than_equal) */
	check_text(py, "a: 0\n", &c);
	CHECK(has_item(&c, VF_CHECK_FAIL, "a", "below the minimum: must be >= 1"));
	vf_check_release(&c);
	/* required fields, a missing discriminator value, a wrong kind */
	static const char py2[] =
		"from typing import Annotated, Literal, Union\n"
		"from pydantic import BaseModel, Field\n"
		"class X(BaseModel):\n"
		"    model_config = {'extra': 'forbid'}\n"
		"    kind: Literal['x'] = 'x'\n"
		"    path: str\n"
		"class Y(BaseModel):\n"
		"    kind: Literal['y'] = 'y'\n"
		"    n: int = Field(..., ge=0)\n"
		"Either = Annotated[Union[X, Y], Field(discriminator='kind')]\n"
		"class Root(BaseModel):\n"
		"    items: list[Either] = []\n"
		"    dims: tuple[int, int] = (1, 2)\n"
		"    tags: tuple[str, ...] = ()\n";
	check_text(py2, "items:\n  - {kind: x, path: p}\n  - {kind: y, n: -1}\n  - {kind: x, n: 1}\n"
			"dims: [1, 2, 3]\ntags: [a, b, c]\nextra_top: 1\n", &c);
	CHECK(has_item(&c, VF_CHECK_FAIL, "items.1.n", "must be >= 0"));
	CHECK(has_item(&c, VF_CHECK_FAIL, "items.2.n", "unknown key: X"));
	CHECK(has_item(&c, VF_CHECK_FAIL, "items.2.path", "missing: X"));
	CHECK(has_item(&c, VF_CHECK_FAIL, "dims", "expected 2 elements, found 3"));
	/* Root does not forbid extras: pydantic ignores the key, so not a failure */
	CHECK(has_item(&c, VF_CHECK_UNCHECKED, "extra_top", "ignores it"));
	CHECK_INT(c.failures, 4);
	vf_check_release(&c);
}

static void test_limits(void)
{
	struct vf_schema *s = NULL;
	struct vf_error err = {0};
	/* not a class, not a model, self-reference, deep nesting */
	CHECK_INT(vf_schema_parse_mem("x = 1\n", 6, "c.py", "Root", &s, &err), VF_ERR);
	CHECK_CONTAINS(err.msg, "c.py: no class Root");
	CHECK_INT(vf_schema_parse_mem("class Root:\n    a: int\n", 23, "c.py", "Root", &s, &err), VF_ERR);
	CHECK_CONTAINS(err.msg, "not a pydantic model");
	static const char self[] = "from pydantic import BaseModel\nclass Root(BaseModel):\n"
				   "    child: 'Root | None' = None\n    kids: list['Root'] = []\n";
	CHECK_INT(vf_schema_parse_mem(self, strlen(self), "c.py", "Root", &s, &err), VF_OK);
	struct vf_check c;
	check_text(self, "child: {child: {kids: [{}, {bad: 1}]}}\n", &c);
	CHECK_INT(c.failures, 0); /* Root does not forbid extras */
	vf_check_release(&c);
	vf_schema_free(s);
	char deep[4096] = "from pydantic import BaseModel\nclass Root(BaseModel):\n    a: ";
	for (int i = 0; i < 200; i++)
		strcat(deep, "list[");
	strcat(deep, "int");
	for (int i = 0; i < 200; i++)
		strcat(deep, "]");
	strcat(deep, " = []\n");
	CHECK_INT(vf_schema_parse_mem(deep, strlen(deep), "c.py", "Root", &s, &err), VF_OK);
	vf_schema_free(s);
	CHECK_INT(vf_schema_load("/nonexistent", "src/ltx_trainer/config.py", "Root", &s, &err), VF_ENOTFOUND);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *b = calloc(1, 1 << 16);
	if (b)
		fread(b, 1, (1 << 16) - 1, f);
	fclose(f);
	return b;
}

/* pydantic v2's rules, statically: each edit of tests/fixtures/pydantic
 * (constrained types, annotated_types markers, Enum by value, aliases,
 * populate_by_name, lax coercion of YAML 1.1 scalars, a tagged union, a
 * multi-line annotation) gets pydantic 2.13.4's own verdict (cases.tsv,
 * re-derived by tests/cli/pydantic.sh where pydantic is installed); a
 * before-validator's field is "not checked" naming the validator. */
static void test_pydantic_rules(void)
{
	char path[1200];
	snprintf(path, sizeof path, "%s/../pydantic/model.py", fixture);
	char *py = slurp(path);
	snprintf(path, sizeof path, "%s/../pydantic/cases.tsv", fixture);
	char *cases = slurp(path);
	CHECK(py && cases);
	size_t n = 0;
	for (char *line = cases ? strtok(cases, "\n") : NULL; line; line = strtok(NULL, "\n")) {
		char *tab = strchr(line, '\t');
		if (!tab)
			continue;
		*tab = '\0';
		char yaml[512];
		snprintf(yaml, sizeof yaml, "%s\n", tab + 1);
		struct vf_check c;
		check_text(py, yaml, &c);
		bool ok;
		if (strcmp(line, "PASS") == 0)
			ok = c.failures == 0;
		else if (strcmp(line, "FAIL") == 0)
			ok = c.failures > 0;
		else
			ok = c.failures == 0 && c.unchecked > 0 && c.n && strstr(c.items[0].rule, "Root.up (config.py:");
		if (!ok) {
			fprintf(stderr, "  %s: pydantic says %s, vramfit: %zu failures, %zu not checked\n", tab + 1, line,
				c.failures, c.unchecked);
			for (size_t i = 0; i < c.n; i++)
				fprintf(stderr, "    %s: %s\n", c.items[i].key, c.items[i].rule);
		}
		CHECK(ok);
		vf_check_release(&c);
		n++;
	}
	CHECK(n >= 40);
	free(py);
	free(cases);
	/* discriminator errors list every allowed tag */
	struct vf_check c;
	check_text(py_disc, "cond: {type: d}\n", &c);
	CHECK(has_item(&c, VF_CHECK_FAIL, "cond.type", "(allowed: a, b, c)"));
	vf_check_release(&c);
}

/* A config.py that Python cannot parse is an error naming file and line,
 * as Python's own SyntaxError would. */
static void test_syntax_errors(void)
{
	static const struct {
		const char *py, *msg;
	} cases[] = {
		{"from pydantic import BaseModel\nclass Root(BaseModel):\n    x: int = Field(\n        default=1,\n\nclass Y:\n    pass\n",
		 "config.py:3: '(' was never closed"},
		{"from pydantic import BaseModel\nclass Root(BaseModel):\nx: int = 1\n", "config.py:3: expected an indented block"},
		{"from pydantic import BaseModel\nclass Root(BaseModel):\n    x: int = 1\n  y: int = 2\n",
		 "config.py:4: unindent does not match"},
		{"from pydantic import BaseModel\nclass Root(BaseModel):\n    x: str = 'abc\n", "config.py:3: unterminated string"},
		{"from pydantic import BaseModel\nclass Root(BaseModel):\n    x: list[int] = [1)\n",
		 "config.py:3: closing parenthesis ')' does not match"},
		{"from pydantic import BaseModel\nclass Root(BaseModel):\n    x: int = 1\n        y: int = 2\n",
		 "config.py:4: unexpected indent"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct vf_schema *s = NULL;
		struct vf_error err = {0};
		CHECK_INT(vf_schema_parse_mem(cases[i].py, strlen(cases[i].py), "config.py", "Root", &s, &err), VF_ERR);
		if (!strstr(err.msg, cases[i].msg))
			fprintf(stderr, "  got: %s\n  want: %s\n", err.msg, cases[i].msg);
		CHECK(strstr(err.msg, cases[i].msg) != NULL);
		CHECK(strstr(err.msg, VF_SCHEMA_SYNTAX_MARK) != NULL);
		vf_schema_free(s);
	}
}

int main(void)
{
	snprintf(fixture, sizeof fixture, "%s/tests/fixtures/ltx-trainer", vf_test_env("VF_SOURCE_DIR", "."));
	RUN(test_fixture_model);
	RUN(test_added_and_removed_field);
	RUN(test_not_understood_is_not_checked);
	RUN(test_limits);
	RUN(test_pydantic_rules);
	RUN(test_syntax_errors);
	return vf_test_done();
}
