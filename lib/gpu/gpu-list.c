/* gpu-list.c - a --gpu value naming one machine's set of cards:
 * comma-separated specs ("rtx-3090,rtx-4080:2"), each read by
 * vf_gpu_set_add_spec, and the set's short name ("rtx-3090+rtx-4080x2"). */
#include "vramfit/gpu/gpu-list.h"

#include <stdio.h>
#include <string.h>

bool vf_gpu_spec_is_list(const char *spec)
{
	return spec && strchr(spec, ',') != NULL;
}

vf_status vf_gpu_set_add_list(struct vf_gpu_set *s, const char *list, struct vf_error *err)
{
	if (!list || !*list)
		return vf_error_set(err, VF_EUSAGE, "--gpu: empty GPU spec (expected ID, ID:N or NAME=MiB)");
	size_t len = strlen(list);
	if (len > VF_GPU_LIST_MAX_CHARS)
		return vf_error_set(err, VF_EUSAGE, "--gpu: a set longer than %d characters",
				    VF_GPU_LIST_MAX_CHARS);
	char elem[VF_GPU_LIST_MAX_CHARS + 1];
	int k = 0;
	for (const char *p = list;; k++) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		if (n == 0)
			return vf_error_set(err, VF_EUSAGE,
					    "--gpu %s: GPU %d of the set is empty (expected ID, ID:N or "
					    "NAME=MiB between the commas)",
					    list, k + 1);
		memcpy(elem, p, n);
		elem[n] = '\0';
		struct vf_error e = {0};
		if (vf_gpu_set_add_spec(s, elem, &e) != VF_OK)
			return vf_error_set(err, e.code ? e.code : VF_EUSAGE, "--gpu %s: %s", list,
					    strncmp(e.msg, "--gpu ", 6) == 0 ? e.msg + 6 : e.msg);
		if (!comma)
			break;
		p = comma + 1;
	}
	return VF_OK;
}

/* The kind a GPU of the set is known by. */
static const char *kind_of(const struct vf_gpu *g)
{
	return g->catalog_id[0] ? g->catalog_id : g->name;
}

void vf_gpu_set_label(const struct vf_gpu_set *s, char *out, size_t n)
{
	if (!n)
		return;
	out[0] = '\0';
	size_t k = 0;
	for (size_t i = 0; i < s->count && k < n - 1;) {
		size_t j = i + 1;
		while (j < s->count && strcmp(kind_of(&s->gpus[j]), kind_of(&s->gpus[i])) == 0)
			j++;
		int w = j - i > 1 ? snprintf(out + k, n - k, "%s%sx%zu", k ? "+" : "", kind_of(&s->gpus[i]), j - i)
				  : snprintf(out + k, n - k, "%s%s", k ? "+" : "", kind_of(&s->gpus[i]));
		if (w < 0)
			break;
		k += (size_t)w < n - k ? (size_t)w : n - k - 1;
		i = j;
	}
}
