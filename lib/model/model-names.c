/* model-names.c - catalog models by the names people use: the Hub id, the
 * display name and common spellings, and "did you mean" for the rest. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "vramfit/base/names.h"
#include "vramfit/model/models.h"

#include "models-internal.h"

static const char *hub_id(const struct vf_model_entry *e)
{
	const cJSON *hf = cJSON_GetObjectItemCaseSensitive(e->raw, "hf");
	return cJSON_IsString(hf) ? hf->valuestring : NULL;
}

/* Whether the compact form of key is c. */
static bool same(const char *key, const char *c)
{
	char k[64];
	return key && strcmp(vf_names_compact(key, k, sizeof k), c) == 0;
}

static bool entry_matches(const struct vf_model_entry *e, const char *c)
{
	if (same(e->id, c) || same(e->name, c))
		return true;
	const char *hf = hub_id(e);
	const char *slash = hf ? strrchr(hf, '/') : NULL;
	if (same(slash ? slash + 1 : hf, c))
		return true;
	const cJSON *al;
	cJSON_ArrayForEach(al, cJSON_GetObjectItemCaseSensitive(e->raw, "aliases"))
		if (cJSON_IsString(al) && same(al->valuestring, c))
			return true;
	return false;
}

static void offer(struct vf_names_suggest *sg, const struct vf_model_entry *e)
{
	vf_names_suggest_offer(sg, e->id, e->id);
	const char *hf = hub_id(e);
	const char *slash = hf ? strrchr(hf, '/') : NULL;
	if (hf)
		vf_names_suggest_offer(sg, e->id, slash ? slash + 1 : hf);
	const cJSON *al;
	cJSON_ArrayForEach(al, cJSON_GetObjectItemCaseSensitive(e->raw, "aliases"))
		if (cJSON_IsString(al))
			vf_names_suggest_offer(sg, e->id, al->valuestring);
}

/* The entry name means (vf_models_find_loose), its architecture perhaps not
 * read yet. */
static const struct vf_model_entry *locate_loose(const char *name, char *hint, size_t n)
{
	if (hint && n)
		hint[0] = '\0';
	if (!name || !*name)
		return NULL;
	const struct vf_model_entry *e = vf__models_locate(name);
	if (e)
		return e;
	size_t count;
	const struct vf_model_entry *all = vf__models_entries(&count);
	const char *slash = strchr(name, '/');
	const struct vf_model_entry *hit = NULL;
	int hits = 0;
	char c[64];
	vf_names_compact(slash ? slash + 1 : name, c, sizeof c);
	struct vf_names_suggest sg;
	vf_names_suggest_init(&sg, c);
	for (size_t i = 0; i < count; i++) {
		const char *hf = hub_id(&all[i]);
		bool match = slash ? hf && strcasecmp(hf, name) == 0 : entry_matches(&all[i], c);
		if (match && hit != &all[i]) {
			hit = &all[i];
			hits++;
		}
		offer(&sg, &all[i]);
	}
	if (hits == 1)
		return hit;
	if (hint && n) {
		if (hits > 1) {
			/* several: name them all */
			struct vf_names_suggest amb;
			memset(&amb, 0, sizeof amb);
			for (size_t i = 0; i < count && amb.n < VF_NAMES_SUGGEST; i++)
				if (!slash && entry_matches(&all[i], c))
					snprintf(amb.names[amb.n++], sizeof amb.names[0], "%s",
						 all[i].id);
			vf_names_suggest_hint(&amb, hint, n);
		} else {
			vf_names_suggest_hint(&sg, hint, n);
		}
	}
	return NULL;
}

vf_status vf_models_lookup(const char *name, const struct vf_model_entry **out, char *hint,
			   size_t n, struct vf_error *err)
{
	*out = NULL;
	if (hint && n)
		hint[0] = '\0';
	vf_status st = vf_models_load(err);
	if (st != VF_OK)
		return st;
	const struct vf_model_entry *e = locate_loose(name, hint, n);
	if (e && (st = vf_models_ready(e, err)) != VF_OK)
		return st;
	*out = e;
	return VF_OK;
}

const struct vf_model_entry *vf_models_find_loose(const char *name, char *hint, size_t n)
{
	const struct vf_model_entry *e = NULL;
	return vf_models_lookup(name, &e, hint, n, NULL) == VF_OK ? e : NULL;
}
