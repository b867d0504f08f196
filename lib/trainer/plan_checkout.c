/* plan_checkout.c - the parts of a plan read from the user's trainer
 * checkout (see plan.h): which config family file the tier starts from, the
 * trainer's own low-VRAM deltas when a mode ships no low-VRAM file, the
 * mode's data directories, the trainer version; and their plan.md and
 * --json lines. The file patterns come from the profile (configs.json
 * "families"); nothing here lists modes or keys. */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "plan_internal.h"
#include "vramfit/base/md.h"
#include "vramfit/base/json.h"
#include "vramfit/trainer/schema.h"

static bool is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static void mode_list(const struct vf_trainer_modes *m, char *out, size_t n)
{
	out[0] = '\0';
	for (size_t i = 0; i < m->n; i++) {
		size_t l = strlen(out);
		snprintf(out + l, n - l, "%s%s", i ? ", " : "", m->v[i].name);
	}
}

/* The pair the low-VRAM deltas are taken from: the profile's delta_base
 * mode (t2v) when the checkout ships both its files, else the first mode in
 * name order that ships both (<x>_lora.yaml -> <x>_lora_low_vram.yaml).
 * NULL when no mode ships a pair. Borrowed from modes. */
static const struct vf_trainer_mode *delta_pair(const struct vf_trainer_modes *modes, const char *base)
{
	const struct vf_trainer_mode *b = vf_modes_find(modes, base);
	if (b && b->config[0] && b->low_vram[0])
		return b;
	for (size_t i = 0; i < modes->n; i++) /* sorted by name (vf_checkout_modes) */
		if (modes->v[i].config[0] && modes->v[i].low_vram[0])
			return &modes->v[i];
	return NULL;
}

/* The trainer's low-VRAM deltas: a standard config against its low-VRAM
 * config, both shipped in this checkout (delta_pair). */
static vf_status load_deltas(struct vf_plan *p, const cJSON *cfg, const struct vf_trainer_modes *modes,
			     const char *cdir, struct vf_error *err)
{
	const cJSON *fam = cJSON_GetObjectItemCaseSensitive(cfg, "families");
	const char *base = vf_json_get_str(fam, "delta_base");
	const struct vf_trainer_mode *b = delta_pair(modes, base ? base : "t2v");
	if (!b)
		return vf_error_set(err, VF_ERR,
				    "%s: the checkout ships no low-VRAM config for %s and no %s -> %s pair in any "
				    "mode to take the trainer's low-VRAM choices from",
				    cdir, p->mode, vf_json_get_str(fam, "standard") ? vf_json_get_str(fam, "standard")
										  : "{mode}_lora.yaml",
				    vf_json_get_str(fam, "low_vram") ? vf_json_get_str(fam, "low_vram")
								     : "{mode}_lora_low_vram.yaml");
	char a[VF_PLAN_PATH * 2], l[VF_PLAN_PATH * 2];
	snprintf(a, sizeof a, "%s/%s", cdir, b->config);
	snprintf(l, sizeof l, "%s/%s", cdir, b->low_vram);
	struct vf_yamldoc *da = NULL, *dl = NULL;
	vf_status st = vf_yamldoc_load_file(a, &da, err);
	if (st == VF_OK)
		st = vf_yamldoc_load_file(l, &dl, err);
	if (st == VF_OK) {
		p->ndeltas = (int)vf_checkout_deltas(da, dl, cfg, p->deltas, VF_PLAN_MAXLIST);
		snprintf(p->deltas_from, sizeof p->deltas_from, "%s -> %s", b->config, b->low_vram);
	}
	vf_yamldoc_free(da);
	vf_yamldoc_free(dl);
	return st;
}

/* Another trainer's schema file in dir, by the profile's glob: its path
 * relative to dir in out, false when none. */
static bool other_schema(const char *dir, const char *pattern, char *out, size_t n)
{
	char pat[VF_PLAN_PATH + 256];
	glob_t g;
	if (!pattern)
		return false;
	snprintf(pat, sizeof pat, "%s/%s", dir, pattern);
	bool found = glob(pat, GLOB_NOSORT | GLOB_NOESCAPE, NULL, &g) == 0 && g.gl_pathc > 0;
	if (found)
		snprintf(out, n, "%s", g.gl_pathv[0] + strlen(dir) + 1);
	globfree(&g);
	return found;
}

vf_status vf__plan_know_trainer(const struct vf_plan *p, const cJSON *cfg, struct vf_error *err)
{
	const cJSON *sc = cJSON_GetObjectItemCaseSensitive(cfg, "schema");
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(cfg, "identity");
	const char *file = vf_json_get_str(sc, "file"), *cls = vf_json_get_str(sc, "class");
	char found[512], other[512];
	if (!file || !cls || !id)
		return VF_OK; /* the profile says nothing to know its trainer by */
	vf_checkout_describe(p->trainer_dir, found, sizeof found);
	struct vf_schema *s = NULL;
	struct vf_error e = {0};
	vf_status st = vf_schema_load(p->trainer_dir, file, cls, &s, &e);
	if (st == VF_ENOTFOUND) {
		if (other_schema(p->trainer_dir, vf_json_get_str(id, "other_schemas"), other, sizeof other))
			return vf_error_set(err, VF_ERR,
					    "%s: not the trainer this profile knows: no %s, but %s (found %s); "
					    "vramfit would write keys its schema does not have",
					    p->trainer_dir, file, other, found);
		return VF_OK; /* configs only: the check says what was not checked */
	}
	if (st != VF_OK) {
		if (vf_schema_cannot_import(e.msg) || st == VF_ENOMEM)
			return VF_OK; /* the self-check fails it, naming file and line */
		return vf_error_set(err, VF_ERR, "%s: not the trainer this profile knows: %s (found %s)",
				    p->trainer_dir, e.msg, found);
	}
	char missing[1024] = "";
	size_t nmissing = 0;
	const cJSON *k;
	cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(id, "required_keys"))
	{
		if (!cJSON_IsString(k) || vf_schema_has_path(s, k->valuestring))
			continue;
		size_t l = strlen(missing);
		snprintf(missing + l, sizeof missing - l, "%s%s", nmissing++ ? ", " : "", k->valuestring);
	}
	vf_schema_free(s);
	if (nmissing)
		return vf_error_set(err, VF_ERR,
				    "%s: not the trainer this profile knows: its schema (%s, %s) has no %s (found %s); "
				    "vramfit would write keys it rejects",
				    p->trainer_dir, file, cls, missing, found);
	return VF_OK;
}

vf_status vf__plan_choose_config(struct vf_plan *p, const cJSON *cfg, struct vf_error *err)
{
	vf_checkout_version(p->trainer_dir, p->trainer_version, sizeof p->trainer_version);
	struct vf_trainer_modes modes;
	vf_status st = vf_checkout_modes(p->trainer_dir, cfg, &modes, err);
	if (st != VF_OK)
		return st;
	const char *cd = vf_json_get_str(cJSON_GetObjectItemCaseSensitive(cfg, "families"), "dir");
	char cdir[VF_PLAN_PATH + 64];
	snprintf(cdir, sizeof cdir, "%s/%s", p->trainer_dir, cd ? cd : "configs");
	const struct vf_trainer_mode *m = vf_modes_find(&modes, p->mode);
	if (!m) {
		char list[1024];
		mode_list(&modes, list, sizeof list);
		st = vf_error_set(err, VF_EUSAGE, "--mode %s: the trainer checkout ships no such config family in %s "
				  "(its modes: %s)", p->mode, cdir, modes.n ? list : "none");
		vf_modes_release(&modes);
		return st;
	}
	snprintf(p->mode_what, sizeof p->mode_what, "%s", m->what);
	snprintf(p->mode_strategy, sizeof p->mode_strategy, "%s", m->strategy);
	snprintf(p->shipped_config, sizeof p->shipped_config, "%s/%s", cdir, p->tier.config);
	if (!is_file(p->shipped_config) && m->config[0] && strcmp(p->tier.config, m->config) != 0) {
		/* The tier wants a low-VRAM file this mode does not ship. */
		st = load_deltas(p, cfg, &modes, cdir, err);
		snprintf(p->shipped_config, sizeof p->shipped_config, "%s/%s", cdir, m->config);
	}
	vf_modes_release(&modes);
	return st;
}

void vf__plan_md_trainer(struct vf_buf *b, const struct vf_plan *p)
{
	vf_md_printf(b, "- Model: %s (%s)\n", p->model_version, p->model_version_from);
	if (p->split_pack)
		vf_md_printf(b, "- Checkpoint: a split pack: transformer `%s`, video VAE `%s`, audio VAE `%s`, "
				       "text encoder `%s`\n", p->model, p->video_vae, p->audio_vae, p->text_encoder);
	else
		vf_md_printf(b, "- Checkpoint: unified (`%s` holds the transformer and both VAEs)\n",
			      p->model);
	vf_md_printf(b, "- Trainer: `%s` (%s; read from it this time)\n", p->trainer_dir,
		      p->trainer_version);
	if (p->mode_what[0])
		vf_md_printf(b, "- What the `%s` config trains: %s (training_strategy %s)\n", p->mode,
			      p->mode_what, p->mode_strategy[0] ? p->mode_strategy : "as shipped");
	if (p->check.schema_file[0])
		vf_md_printf(b, "- Schema: `%s` (%zu models, %zu fields, %zu source files read)\n",
			      p->check.schema_file, p->check.schema_models, p->check.schema_fields,
			      p->check.schema_files);
	if (!p->ndeltas)
		return;
	vf_md_printf(b, "- No low-VRAM file ships for `%s`: applied the trainer's low-VRAM choices "
			       "(the pair `%s` in this checkout):\n", p->mode, p->deltas_from);
	for (int i = 0; i < p->ndeltas; i++)
		vf_md_printf(b, "  - `%s`: `%s`%s\n", p->deltas[i].key, p->deltas[i].value,
			      p->delta_applied[i] ? "" : " (not applied: the key is not in this mode's config)");
}

void vf__plan_md_data(struct vf_buf *b, const struct vf_plan *p, const cJSON *cfg)
{
	if (p->ndata_dirs)
		vf_md_printf(b, "- Directories the `%s` training strategy reads under the preprocessed "
				       "data root (pending until preprocessing):\n", p->mode);
	for (int i = 0; i < p->ndata_dirs; i++) {
		if (strcmp(p->data_dirs[i].key, "(always)") == 0)
			vf_md_printf(b, "  - `%s/` (always)\n", p->data_dirs[i].value);
		else
			vf_md_printf(b, "  - `%s/` (`%s`)\n", p->data_dirs[i].value, p->data_dirs[i].key);
	}
	const cJSON *e;
	bool first = true;
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(cfg, "validation_media"))
	{
		struct vf_found_value f[16];
		size_t n = cJSON_IsString(e) ? vf_checkout_collect(p->config, e->valuestring, f, 16) : 0;
		for (size_t i = 0; i < n; i++, first = false) {
			if (first)
				vf_md_printf(b, "- Media the validation samples need (reference videos, images, "
						"audio; replace the shipped placeholders with your own):\n");
			vf_md_printf(b, "  - `%s`: `%s`\n", f[i].key, f[i].value);
		}
	}
}

void vf__plan_json_trainer(cJSON *o, const struct vf_plan *p)
{
	cJSON *t = cJSON_AddObjectToObject(o, "trainer_checkout");
	cJSON_AddStringToObject(t, "dir", p->trainer_dir);
	cJSON_AddStringToObject(t, "version", p->trainer_version);
	cJSON_AddStringToObject(t, "mode_what", p->mode_what);
	cJSON_AddStringToObject(t, "mode_strategy", p->mode_strategy);
	cJSON *m = cJSON_AddObjectToObject(o, "model_files");
	cJSON_AddStringToObject(m, "layout", p->split_pack ? "split" : "unified");
	cJSON_AddStringToObject(m, "model", p->model);
	cJSON_AddStringToObject(m, "video_vae", p->video_vae);
	cJSON_AddStringToObject(m, "audio_vae", p->audio_vae);
	cJSON_AddStringToObject(m, "text_encoder", p->text_encoder);
	cJSON_AddStringToObject(m, "version", p->model_version);
	cJSON_AddStringToObject(m, "version_from", p->model_version_from);
	cJSON *d = cJSON_AddArrayToObject(o, "low_vram_deltas");
	for (int i = 0; i < p->ndeltas; i++) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "key", p->deltas[i].key);
		cJSON_AddStringToObject(e, "value", p->deltas[i].value);
		cJSON_AddStringToObject(e, "standard", p->deltas[i].standard);
		cJSON_AddBoolToObject(e, "applied", p->delta_applied[i]);
		cJSON_AddStringToObject(e, "from", p->deltas_from);
		cJSON_AddItemToArray(d, e);
	}
	cJSON *dd = cJSON_AddArrayToObject(o, "data_dirs");
	for (int i = 0; i < p->ndata_dirs; i++)
		cJSON_AddItemToArray(dd, cJSON_CreateString(p->data_dirs[i].value));
}
