/* fuzz-pyschema.c - libFuzzer target for the static reader of the trainer's
 * pydantic schema (lib/trainer/schema.c): parse any bytes as a config.py,
 * build the root model (LtxTrainerConfig, else Root), print every field's
 * type and look up a few dotted paths. Corpus: config.py variants of our own
 * (the fixture trainer's modules and small cases), never the real trainer's. */
#include <stddef.h>
#include <stdint.h>

#include "vramfit/trainer/schema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const roots[] = {"LtxTrainerConfig", "Root"};
	for (int r = 0; r < 2; r++) {
		struct vf_schema *s = NULL;
		struct vf_error err = {0};
		if (vf_schema_parse_mem((const char *)data, size, "fuzz.py", roots[r], &s, &err) != VF_OK)
			continue;
		const struct vf_pymodel *m = vf_schema_root(s);
		char t[256];
		for (size_t i = 0; m && i < m->nfields; i++)
			vf_pytype_text(m->fields[i].type, t, sizeof t);
		size_t a, b, c;
		vf_schema_stats(s, &a, &b, &c);
		(void)vf_schema_has_path(s, "validation.samples.0.conditions.0.video");
		(void)vf_schema_has_path(s, "model.model_path");
		vf_schema_free(s);
	}
	return 0;
}
