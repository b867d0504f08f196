/* ckpt.c - classify an LTX checkpoint by its header (see ckpt.h). */
#include "vramfit/trainer/ckpt.h"

#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "vramfit/base/json.h"
#include "vramfit/model/safetensors.h"

static const char *const part_names[VF_CKPT_NPARTS] = {"transformer", "video_vae", "audio_vae", "text_encoder"};

const char *vf_ckpt_part_name(enum vf_ckpt_part p)
{
	static const char *const words[VF_CKPT_NPARTS] = {"transformer", "video VAE", "audio VAE", "text encoder"};
	return p < VF_CKPT_NPARTS ? words[p] : "?";
}

bool vf_ckpt_is_vae_only(const struct vf_ckpt *c)
{
	return !c->has[VF_CKPT_TRANSFORMER] && (c->has[VF_CKPT_VIDEO_VAE] || c->has[VF_CKPT_AUDIO_VAE]);
}

static bool prefixed(const char *name, const cJSON *prefixes)
{
	const cJSON *p;
	cJSON_ArrayForEach(p, prefixes)
		if (cJSON_IsString(p) && strncmp(name, p->valuestring, strlen(p->valuestring)) == 0)
			return true;
	return false;
}

/* The parsed `config` JSON of __metadata__ (its key from the rules). Caller owns. */
static cJSON *meta_config(const cJSON *meta, const cJSON *rules)
{
	const char *key = vf_json_get_str(rules, "metadata_config");
	const char *v = vf_json_get_str(meta, key ? key : "config");
	cJSON *j = v ? cJSON_Parse(v) : NULL;
	if (j && !cJSON_IsObject(j)) {
		cJSON_Delete(j);
		j = NULL;
	}
	return j;
}

/* Parts: a tensor with a part's prefix, or the part's section in the
 * config when the metadata has one (a split file keeps only its section). */
static void classify(const struct vf_safetensors *sf, const cJSON *cfg, const cJSON *rules, struct vf_ckpt *out)
{
	const cJSON *parts = cJSON_GetObjectItemCaseSensitive(rules, "parts");
	bool by_prefix[VF_CKPT_NPARTS] = {false}, by_section[VF_CKPT_NPARTS] = {false};
	for (int p = 0; p < VF_CKPT_NPARTS; p++) {
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(parts, part_names[p]);
		const cJSON *pre = cJSON_GetObjectItemCaseSensitive(r, "prefixes");
		for (size_t i = 0; i < sf->ntensors && !by_prefix[p]; i++)
			by_prefix[p] = prefixed(sf->tensors[i].name, pre);
		const char *sec = vf_json_get_str(r, "section");
		by_section[p] = sec && cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(cfg, sec));
	}
	bool any_prefix = false;
	for (int p = 0; p < VF_CKPT_NPARTS; p++)
		any_prefix = any_prefix || by_prefix[p];
	for (int p = 0; p < VF_CKPT_NPARTS; p++)
		out->has[p] = any_prefix ? by_prefix[p] : by_section[p];
}

/* The version: a metadata string field, else a field of the config's
 * sections; then the first rule whose glob matches names the model. */
static void version(const cJSON *meta, const cJSON *cfg, const cJSON *rules, struct vf_ckpt *out)
{
	const cJSON *f;
	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(rules, "version_fields"))
	{
		const char *path = cJSON_IsString(f) ? f->valuestring : "";
		const char *v = NULL;
		if (strncmp(path, "config.", 7) == 0) {
			char sec[64];
			const char *dot = strchr(path + 7, '.');
			if (!dot || (size_t)(dot - path - 7) >= sizeof sec)
				continue;
			snprintf(sec, sizeof sec, "%.*s", (int)(dot - path - 7), path + 7);
			v = vf_json_get_str(cJSON_GetObjectItemCaseSensitive(cfg, sec), dot + 1);
		} else {
			v = vf_json_get_str(meta, path);
		}
		if (v && *v) {
			snprintf(out->version, sizeof out->version, "%s", v);
			snprintf(out->version_from, sizeof out->version_from, "__metadata__ %s", path);
			break;
		}
	}
	const cJSON *m;
	cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(rules, "versions"))
	{
		const char *g = vf_json_get_str(m, "glob");
		if (out->version[0] && g && fnmatch(g, out->version, 0) == 0) {
			snprintf(out->model_id, sizeof out->model_id, "%s", vf_json_get_str(m, "id") ? vf_json_get_str(m, "id") : "");
			snprintf(out->model_name, sizeof out->model_name, "%s",
				 vf_json_get_str(m, "name") ? vf_json_get_str(m, "name") : out->model_id);
			break;
		}
	}
}

vf_status vf_ckpt_read(const char *path, const cJSON *rules, struct vf_ckpt *out, struct vf_error *err)
{
	memset(out, 0, sizeof *out);
	struct vf_safetensors sf;
	memset(&sf, 0, sizeof sf);
	vf_status st = vf_safetensors_read(path, &sf, err);
	if (st == VF_OK) {
		cJSON *cfg = meta_config(sf.metadata, rules);
		classify(&sf, cfg, rules, out);
		version(sf.metadata, cfg, rules, out);
		out->params = sf.params;
		out->data_bytes = (int64_t)sf.data_bytes;
		cJSON_Delete(cfg);
	}
	vf_safetensors_release(&sf);
	return st;
}
