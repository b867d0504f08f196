/* tier.c - place a set of GPUs in the trainer's VRAM tiers.
 * Everything that names a tier, a threshold, a config or a message comes
 * from data/profiles/<trainer>/tiers.json; this file only compares numbers
 * and fills {placeholders}. */
#include "vramfit/trainer/tier.h"

#include <stdio.h>
#include <string.h>

#include "vramfit/base/json.h"
#include "vramfit/trainer/profile.h"

#define MAX_TIERS 16
#define MAX_MODES 16

struct tier_def {
	char name[32];
	int min_gb;
	int max_gb; /* -1: no upper bound */
	char range[32];
	char config[64]; /* template */
	char note[256];  /* template */
};

struct policy {
	char file[128]; /* "profiles/ltx2/tiers.json", for messages */
	char default_mode[16];
	char modes[MAX_MODES][16];
	int nmodes;
	char config_dir[64];
	struct tier_def tiers[MAX_TIERS];
	int ntiers;
	char gap_note[512];
	struct tier_def gate; /* min_gb unused; max_gb = below_gb */
	int gate_below_gb;
	char gate_flag[32];
	char gate_message[1024];
};

struct var {
	const char *key;
	const char *value;
};

/* Expand {key} placeholders from vars into out; unknown keys and overflow
 * are errors naming the field. */
static vf_status expand(const char *file, const char *tmpl, const struct var *vars, char *out, size_t n,
			const char *field, struct vf_error *err)
{
	size_t o = 0;
	for (const char *p = tmpl; *p;) {
		const char *val = NULL;
		size_t vlen = 1;
		if (*p == '{') {
			const char *end = strchr(p, '}');
			if (!end)
				return vf_error_set(err, VF_ERR, "%s: field %s: unclosed '{'", file,
						    field);
			size_t klen = (size_t)(end - p - 1);
			for (const struct var *v = vars; v->key; v++)
				if (strlen(v->key) == klen && strncmp(v->key, p + 1, klen) == 0)
					val = v->value;
			if (!val)
				return vf_error_set(err, VF_ERR,
						    "%s: field %s: unknown placeholder {%.*s}",
						    file, field, (int)(klen > 40 ? 40 : klen),
						    p + 1);
			vlen = strlen(val);
			p = end + 1;
		} else {
			val = p++;
		}
		if (o + vlen >= n)
			return vf_error_set(err, VF_ERR, "%s: field %s: longer than %zu characters",
					    file, field, n - 1);
		memcpy(out + o, val, vlen);
		o += vlen;
	}
	out[o] = '\0';
	return VF_OK;
}

static vf_status str_field(const char *file, const cJSON *obj, const char *key, const char *field, char *dst,
			   size_t n, struct vf_error *err)
{
	const char *s = vf_json_get_str(obj, key);
	if (!s || !*s)
		return vf_error_set(err, VF_ERR, "%s: field %s: expected a non-empty string",
				    file, field);
	if (strlen(s) >= n)
		return vf_error_set(err, VF_ERR, "%s: field %s: longer than %zu characters",
				    file, field, n - 1);
	memcpy(dst, s, strlen(s) + 1);
	return VF_OK;
}

static vf_status gb_field(const char *file, const cJSON *obj, const char *key, const char *field, bool nullable,
			  int *dst, struct vf_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	int64_t x;
	if (nullable && cJSON_IsNull(v)) {
		*dst = -1;
		return VF_OK;
	}
	if (!vf_json_number_is_i64(v, &x) || x <= 0 || x > 1000000)
		return vf_error_set(err, VF_ERR, "%s: field %s: expected a positive whole number of GB%s",
				    file, field, nullable ? " or null" : "");
	*dst = (int)x;
	return VF_OK;
}

static vf_status parse_tier(const char *file, const cJSON *t, const char *field, struct tier_def *d, bool gate,
			    struct vf_error *err)
{
	char f[96];
	vf_status st;
	if (!cJSON_IsObject(t))
		return vf_error_set(err, VF_ERR, "%s: field %s: expected an object", file, field);
#define SUB(k) (snprintf(f, sizeof f, "%s.%s", field, k), f)
	if ((st = str_field(file, t, "name", SUB("name"), d->name, sizeof d->name, err)) ||
	    (st = str_field(file, t, "range", SUB("range"), d->range, sizeof d->range, err)) ||
	    (st = str_field(file, t, "config", SUB("config"), d->config, sizeof d->config, err)) ||
	    (st = str_field(file, t, "note", SUB("note"), d->note, sizeof d->note, err)))
		return st;
	if (gate)
		st = gb_field(file, t, "below_gb", SUB("below_gb"), false, &d->max_gb, err);
	else if (!(st = gb_field(file, t, "min_gb", SUB("min_gb"), false, &d->min_gb, err)))
		st = gb_field(file, t, "max_gb", SUB("max_gb"), true, &d->max_gb, err);
#undef SUB
	return st;
}

/* load_policy: the tiers, in increasing, non-overlapping order. */
static vf_status parse_tiers(const char *file, const cJSON *root, struct policy *p, struct vf_error *err)
{
	const cJSON *tiers = cJSON_GetObjectItemCaseSensitive(root, "tiers"), *t;
	if (!cJSON_IsArray(tiers) || cJSON_GetArraySize(tiers) < 1 ||
	    cJSON_GetArraySize(tiers) > MAX_TIERS)
		return vf_error_set(err, VF_ERR, "%s: field tiers: expected 1 to %d tiers", file, MAX_TIERS);
	cJSON_ArrayForEach(t, tiers)
	{
		char field[32];
		snprintf(field, sizeof field, "tiers[%d]", p->ntiers);
		struct tier_def *d = &p->tiers[p->ntiers];
		vf_status st = parse_tier(file, t, field, d, false, err);
		if (st)
			return st;
		if (d->max_gb >= 0 && d->max_gb < d->min_gb)
			return vf_error_set(err, VF_ERR, "%s: field %s.max_gb: below min_gb", file, field);
		if (p->ntiers) {
			const struct tier_def *prev = &p->tiers[p->ntiers - 1];
			if (prev->max_gb < 0 || d->min_gb <= prev->max_gb)
				return vf_error_set(err, VF_ERR,
						    "%s: field %s.min_gb: tiers must be in increasing, "
						    "non-overlapping order (only the last is open-ended)",
						    file, field);
		}
		p->ntiers++;
	}
	return VF_OK;
}

static vf_status load_policy(const char *trainer, struct policy *p, struct vf_error *err)
{
	cJSON *root = NULL;
	memset(p, 0, sizeof *p);
	snprintf(p->file, sizeof p->file, "profiles/%s/tiers.json", trainer);
	const char *file = p->file;
	vf_status st = vf_profile_part(trainer, "tiers", &root, err);
	if (st)
		return st;
	if ((st = str_field(file, root, "default_mode", "default_mode", p->default_mode,
			    sizeof p->default_mode, err)) ||
	    (st = str_field(file, root, "config_dir", "config_dir", p->config_dir, sizeof p->config_dir,
			    err)) ||
	    (st = str_field(file, root, "gap_note", "gap_note", p->gap_note, sizeof p->gap_note, err)))
		goto out;
	const cJSON *modes = cJSON_GetObjectItemCaseSensitive(root, "modes"), *m;
	if (cJSON_IsString(modes) && strcmp(modes->valuestring, "from_checkout") == 0) {
		p->nmodes = 0; /* every configs/ family of the checkout is a mode (plan checks) */
	} else if (!cJSON_IsArray(modes) || cJSON_GetArraySize(modes) < 1 ||
	    cJSON_GetArraySize(modes) > MAX_MODES) {
		st = vf_error_set(err, VF_ERR, "%s: field modes: expected 1 to %d mode names",
				  file, MAX_MODES);
		goto out;
	}
	const cJSON *mlist = cJSON_IsArray(modes) ? modes : NULL;
	cJSON_ArrayForEach(m, mlist)
	{
		if (!cJSON_IsString(m) || !*m->valuestring ||
		    strlen(m->valuestring) >= sizeof p->modes[0]) {
			st = vf_error_set(err, VF_ERR, "%s: field modes: expected short names",
					  file);
			goto out;
		}
		snprintf(p->modes[p->nmodes++], sizeof p->modes[0], "%s", m->valuestring);
	}
	if ((st = parse_tiers(file, root, p, err)))
		goto out;
	const cJSON *gate = cJSON_GetObjectItemCaseSensitive(root, "gate");
	if ((st = parse_tier(file, gate, "gate", &p->gate, true, err)) ||
	    (st = str_field(file, gate, "flag", "gate.flag", p->gate_flag, sizeof p->gate_flag, err)) ||
	    (st = str_field(file, gate, "message", "gate.message", p->gate_message,
			    sizeof p->gate_message, err)))
		goto out;
	p->gate_below_gb = p->gate.max_gb;
	if (p->gate_below_gb > p->tiers[0].min_gb) {
		st = vf_error_set(err, VF_ERR, "%s: field gate.below_gb: above the first tier's min_gb",
				  file);
		goto out;
	}
out:
	cJSON_Delete(root);
	return st;
}

/* The GB class of one GPU: the catalog's nominal size, else its MiB mapped
 * to a class (data/gpus.json). -1 unknown. */
static int gpu_class(const struct vf_gpu *g)
{
	if (g->nominal_gb > 0)
		return g->nominal_gb;
	return vf_gpu_nominal_gb(g->memory_total_mib);
}

/* Load trainer's policy and resolve mode (NULL = the default) against it. */
static vf_status load_mode(const char *trainer, const char **mode, struct policy *p,
			   struct vf_error *err)
{
	vf_status st = load_policy(trainer, p, err);
	if (st)
		return st;
	if (!*mode)
		*mode = p->default_mode;
	if (p->nmodes == 0) { /* modes from the checkout: any plain name here */
		size_t l = strlen(*mode);
		if (l && l < VF_TIER_MODE_MAX && strspn(*mode, "abcdefghijklmnopqrstuvwxyz"
							     "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == l)
			return VF_OK;
		return vf_error_set(err, VF_EUSAGE,
				    "invalid mode name '%.32s' (a config family of the trainer checkout, "
				    "e.g. t2v; vramfit plan --list-modes lists them)",
				    *mode);
	}
	for (int i = 0; i < p->nmodes; i++)
		if (strcmp(p->modes[i], *mode) == 0)
			return VF_OK;
	char list[MAX_MODES * 18] = "";
	for (int i = 0; i < p->nmodes; i++)
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
			 p->modes[i]);
	return vf_error_set(err, VF_EUSAGE, "unknown mode '%.32s' (trainer profile %s has %s)",
			    *mode, trainer, list);
}

bool vf_tier_modes_from_checkout(const char *trainer)
{
	struct policy p;
	struct vf_error err = {0};
	return load_policy(trainer ? trainer : VF_PROFILE_DEFAULT, &p, &err) == VF_OK && p.nmodes == 0;
}

vf_status vf_tier_check(const char *trainer, const char *mode, struct vf_error *err)
{
	struct policy p;
	return load_mode(trainer ? trainer : VF_PROFILE_DEFAULT, &mode, &p, err);
}

/* vf_tier_decide: the smallest GPU of the set, which decides, and its
 * memory class in GB. */
static vf_status smallest_gpu(const struct vf_gpu_set *gpus, int *smallest_out, int *gb_out,
			      struct vf_error *err)
{
	int smallest = -1, gb = -1;
	for (size_t i = 0; i < gpus->count; i++) {
		int c = gpu_class(&gpus->gpus[i]);
		if (c <= 0)
			return vf_error_set(err, VF_ERR,
					    "GPU %d (%s): memory size unknown, so no tier can be "
					    "decided; simulate it with --gpu NAME=MiB",
					    gpus->gpus[i].index, gpus->gpus[i].name);
		if (smallest < 0 || c < gb) {
			smallest = (int)i;
			gb = c;
		}
	}
	*smallest_out = smallest;
	*gb_out = gb;
	return VF_OK;
}

/* vf_tier_decide: the gate, or the highest tier the GB reach (the
 * lowest when between the gate and it), and the tier above. */
static const struct tier_def *pick_tier(const struct policy *pp, int gb, struct vf_tier *out,
					const struct tier_def **next_out)
{
	const struct tier_def *d = NULL, *next = NULL;
	if (gb < pp->gate_below_gb) {
		d = &pp->gate;
		out->gated = true;
	} else {
		for (int i = 0; i < pp->ntiers; i++)
			if (gb >= pp->tiers[i].min_gb) {
				d = &pp->tiers[i];
				next = i + 1 < pp->ntiers ? &pp->tiers[i + 1] : NULL;
			}
		if (!d) /* between the gate and the first tier: take the lowest tier */
			d = &pp->tiers[0], next = pp->ntiers > 1 ? &pp->tiers[1] : NULL;
		out->gap = d->max_gb >= 0 && gb > d->max_gb;
	}
	*next_out = next;
	return d;
}

/* vf_tier_decide: the tier's config name, note, gap note and gate
 * message from the profile's templates. */
static vf_status tier_texts(const struct policy *pp, const struct tier_def *d, const struct tier_def *next,
			    const char *mode, int gb, struct vf_tier *out, struct vf_error *err)
{
	const char *file = pp->file;
	vf_status st;
	char gbs[16];
	snprintf(gbs, sizeof gbs, "%d", gb);
	const struct var vars0[] = {{"mode", mode}, {NULL, NULL}};
	if ((st = expand(file, d->config, vars0, out->config, sizeof out->config,
			 out->gated ? "gate.config" : "tiers[].config", err)))
		return st;
	snprintf(out->config_path, sizeof out->config_path, "%s/%s", pp->config_dir, out->config);
	const struct var vars[] = {
		{"mode", mode},
		{"gb", gbs},
		{"config", out->config},
		{"flag", pp->gate_flag},
		{"tier", d->name},
		{"range", d->range},
		{"next_tier", next ? next->name : ""},
		{"next_range", next ? next->range : ""},
		{NULL, NULL},
	};
	if ((st = expand(file, d->note, vars, out->note, sizeof out->note,
			 out->gated ? "gate.note" : "tiers[].note", err)))
		return st;
	if (out->gap) {
		char gap[512];
		if ((st = expand(file, pp->gap_note, vars, gap, sizeof gap, "gap_note", err)))
			return st;
		size_t l = strlen(out->note);
		snprintf(out->note + l, sizeof out->note - l, "; %s", gap);
	}
	if (out->gated &&
	    (st = expand(file, pp->gate_message, vars, out->gate_message, sizeof out->gate_message,
			 "gate.message", err)))
		return st;

	return VF_OK;
}

/* vf_tier_decide: the decision in one sentence. */
static void tier_reason(const struct vf_gpu_set *gpus, const struct vf_gpu *g, const struct tier_def *d,
			int gb, const char *gate_flag, struct vf_tier *out)
{
	char who[160];
	if (gpus->count == 1)
		snprintf(who, sizeof who, "the GPU, %s", g->name);
	else
		snprintf(who, sizeof who, "the smallest of the %zu GPUs, %s", gpus->count, g->name);
	char mib[48] = "";
	if (g->memory_total_mib > 0)
		snprintf(mib, sizeof mib, " (%lld MiB)", (long long)g->memory_total_mib);
	if (out->gated)
		snprintf(out->reason, sizeof out->reason,
			 "No tier: %s%s, counts as %d GB, %s (the trainer's minimum); "
			 "stopping unless %s is given.",
			 who, mib, gb, d->range, gate_flag);
	else if (out->gap)
		snprintf(out->reason, sizeof out->reason,
			 "%s: %s%s, counts as %d GB, between tiers, so it takes the lower one "
			 "(%s); start from %s.",
			 d->name, who, mib, gb, d->range, out->config);
	else
		snprintf(out->reason, sizeof out->reason,
			 "%s: %s%s, counts as %d GB (%s); start from %s.", d->name, who, mib, gb,
			 d->range, out->config);
}

vf_status vf_tier_decide(const struct vf_gpu_set *gpus, const char *trainer, const char *mode,
			 struct vf_tier *out, struct vf_error *err)
{
	memset(out, 0, sizeof *out);
	out->smallest = -1;
	if (!trainer)
		trainer = VF_PROFILE_DEFAULT;
	if (!gpus || gpus->count == 0)
		return vf_error_set(err, VF_ENOTFOUND, "no GPU to place in a tier");
	struct policy p;
	vf_status st = load_mode(trainer, &mode, &p, err);
	if (st)
		return st;
	snprintf(out->mode, sizeof out->mode, "%s", mode);

	int smallest = -1, gb = -1;
	if ((st = smallest_gpu(gpus, &smallest, &gb, err)))
		return st;
	const struct vf_gpu *g = &gpus->gpus[smallest];
	out->smallest = smallest;
	out->per_gpu_gb = gb;
	out->gpu_count = (int)gpus->count;

	const struct tier_def *next = NULL, *d = pick_tier(&p, gb, out, &next);
	snprintf(out->name, sizeof out->name, "%s", d->name);
	snprintf(out->range, sizeof out->range, "%s", d->range);
	snprintf(out->gate_flag, sizeof out->gate_flag, "%s", p.gate_flag);
	if ((st = tier_texts(&p, d, next, mode, gb, out, err)))
		return st;
	tier_reason(gpus, g, d, gb, p.gate_flag, out);
	return VF_OK;
}
