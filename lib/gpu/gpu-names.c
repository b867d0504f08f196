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

/* 1: the id or marketing name; 2: a match pattern; 0: neither. */
static int spec_matches(const struct vf_gpu_spec *s, const char *key)
{
	if (same(s->id, key) || same(s->name, key))
		return 1;
	for (int m = 0; m < s->nmatch; m++)
		if (same(s->match[m], key))
			return 2;
	return 0;
}

/* Whether key begins the compact id of a card: "h100" is a family (PCIe,
 * SXM, NVL), not one card, though the probe's patterns map it to one. */
static bool id_prefix(const struct vf_gpu_spec *s, const char *key)
{
	char k[64];
	key_of(s->id, k, sizeof k);
	return strncmp(k, key, strlen(key)) == 0;
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
	const struct vf_gpu_spec *by_name = NULL, *by_pattern = NULL;
	int names = 0, patterns = 0, family = 0;
	struct vf_names_suggest sg, amb;
	vf_names_suggest_init(&sg, key);
	memset(&amb, 0, sizeof amb);
	for (size_t i = 0; i < count && key[0]; i++) {
		char k[64];
		int how = spec_matches(&all[i], key);
		if (how == 1) {
			by_name = &all[i];
			names++;
		} else if (how == 2) {
			by_pattern = &all[i];
			patterns++;
		}
		if (id_prefix(&all[i], key)) {
			family++;
			if (amb.n < VF_NAMES_SUGGEST)
				snprintf(amb.names[amb.n++], sizeof amb.names[0], "%s", all[i].id);
		}
		key_of(all[i].id, k, sizeof k);
		vf_names_suggest_offer(&sg, all[i].id, k);
		key_of(all[i].name, k, sizeof k);
		vf_names_suggest_offer(&sg, all[i].id, k);
	}
	if (names == 1)
		return by_name;
	/* a pattern that begins several ids names a family (h100: PCIe, SXM,
	 * NVL), not one card, though the probe's patterns map it to one */
	if (names == 0 && patterns == 1 && family <= 1)
		return by_pattern;
	int hits = names + patterns;
	if (hint && n)
		vf_names_suggest_hint((hits > 1 || family > 1) && amb.n ? &amb : &sg, hint, n);
	return NULL;
}
