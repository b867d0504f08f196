/* gpu-names.c - catalog GPUs by their marketing names ("RTX 4090",
 * "rtx4090", "H100 SXM") and "did you mean" for an unknown one. */
#include <stdio.h>
#include <string.h>

#include "vramfit/base/names.h"
#include "vramfit/gpu/gpu.h"

/* The compact form without the vendor and brand words people add. */
static void key_of(const char *in, char *out, size_t n)
{
	static const char *const brands[] = {"nvidia", "geforce", "tesla", "quadro"};
	char c[64];
	vf_names_compact(in, c, sizeof c);
	const char *p = c;
	for (int again = 1; again;) {
		again = 0;
		for (size_t i = 0; i < sizeof brands / sizeof brands[0]; i++) {
			size_t l = strlen(brands[i]);
			if (strncmp(p, brands[i], l) == 0 && p[l]) {
				p += l;
				again = 1;
			}
		}
	}
	snprintf(out, n, "%s", p);
}

static bool same(const char *name, const char *key)
{
	char k[64];
	key_of(name, k, sizeof k);
	return strcmp(k, key) == 0;
}

static bool spec_matches(const struct vf_gpu_spec *s, const char *key)
{
	if (same(s->id, key) || same(s->name, key))
		return true;
	for (int m = 0; m < s->nmatch; m++)
		if (same(s->match[m], key))
			return true;
	return false;
}

const struct vf_gpu_spec *vf_gpu_catalog_find_loose(const char *name, char *hint, size_t n)
{
	if (hint && n)
		hint[0] = '\0';
	const struct vf_gpu_spec *s = vf_gpu_catalog_find(name);
	if (s || !name)
		return s;
	size_t count;
	const struct vf_gpu_spec *all = vf_gpu_catalog(&count, NULL);
	if (!all)
		return NULL;
	char key[64];
	key_of(name, key, sizeof key);
	const struct vf_gpu_spec *hit = NULL;
	int hits = 0;
	struct vf_names_suggest sg, amb;
	vf_names_suggest_init(&sg, key);
	memset(&amb, 0, sizeof amb);
	for (size_t i = 0; i < count; i++) {
		char k[64];
		if (key[0] && spec_matches(&all[i], key)) {
			hit = &all[i];
			hits++;
			if (amb.n < VF_NAMES_SUGGEST)
				snprintf(amb.names[amb.n++], sizeof amb.names[0], "%s", all[i].id);
		}
		key_of(all[i].id, k, sizeof k);
		vf_names_suggest_offer(&sg, all[i].id, k);
		key_of(all[i].name, k, sizeof k);
		vf_names_suggest_offer(&sg, all[i].id, k);
	}
	if (hits == 1)
		return hit;
	if (hint && n)
		vf_names_suggest_hint(hits > 1 ? &amb : &sg, hint, n);
	return NULL;
}
