/* plan.c - make the plan of a training run (see plan.h): trainer directory,
 * tier, models, workspace and run name, the run config copied from the
 * shipped one and patched byte-exactly, the rules of TRAINER.md section 4,
 * the self-check, an estimate, and plan.md (section 7). Policy comes from
 * the profile's configs.json and tiers.json; this file holds the logic. */
#include "vramfit/trainer/plan.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vramfit/base/buf.h"
#include "vramfit/run/run.h"
#include "vramfit/base/json.h"
#include "vramfit/base/rundir.h"
#include "vramfit/base/shquote.h"
#include "vramfit/base/md.h"
#include "vramfit/trainer/profile.h"
#include "plan_internal.h"
#include "vramfit/trainer/sweepfit.h"
#include "vramfit/model/safetensors.h"
#include "vramfit/trainer/ckpt.h"
#include "vramfit/trainer/schema.h"

#define MAX_SCAN 20000 /* directory entries looked at during model discovery */

struct ctx {
	const struct vf_plan_opts *o;
	struct vf_plan *p;
	cJSON *cfg; /* configs.json */
	cJSON *sweep; /* sweep.json: what tune will try, for plan.md */
};

/* ---- small helpers ------------------------------------------------------ */

static void list_add(char (*list)[512], int *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void list_add(char (*list)[512], int *n, const char *fmt, ...)
{
	if (*n >= VF_PLAN_MAXLIST)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(list[*n], 512, fmt, ap);
	va_end(ap);
	(*n)++;
}

#define ASSUME(c, ...) list_add((c)->p->assumptions, &(c)->p->nassumptions, __VA_ARGS__)
#define WARN(c, ...) list_add((c)->p->warnings, &(c)->p->nwarnings, __VA_ARGS__)

bool vf_plan_is_url(const char *s)
{
	const char *p = strstr(s, "://");
	if (!p || p == s)
		return false;
	for (const char *q = s; q < p; q++)
		if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') ||
		      *q == '+' || *q == '-' || *q == '.'))
			return false;
	return true;
}

static bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* An absolute form of path: realpath when it exists, else cwd-joined with
 * "./" and trailing slashes dropped. */
static vf_status absolute(const char *path, char *out, size_t n, struct vf_error *err)
{
	char rp[PATH_MAX];
	if (realpath(path, rp)) {
		if (strlen(rp) >= n)
			return vf_error_set(err, VF_ERR, "%s: path too long", path);
		snprintf(out, n, "%s", rp);
		return VF_OK;
	}
	char buf[PATH_MAX * 2];
	if (path[0] == '/') {
		snprintf(buf, sizeof buf, "%s", path);
	} else {
		char cwd[PATH_MAX];
		if (!getcwd(cwd, sizeof cwd))
			return vf_error_set(err, VF_ERR, "cannot read the current directory: %s",
					    strerror(errno));
		const char *rel = path;
		while (rel[0] == '.' && rel[1] == '/')
			rel += 2;
		snprintf(buf, sizeof buf, "%s/%s", cwd, rel);
	}
	size_t l = strlen(buf);
	while (l > 1 && buf[l - 1] == '/')
		buf[--l] = '\0';
	if (l >= n)
		return vf_error_set(err, VF_ERR, "%s: path too long", path);
	snprintf(out, n, "%s", buf);
	return VF_OK;
}

/* Expand a profile path: "$VAR/rest" (empty when VAR is unset) and "~/". */
static bool expand(const char *in, char *out, size_t n)
{
	if (in[0] == '$') {
		const char *slash = strchr(in, '/');
		char var[128];
		size_t l = slash ? (size_t)(slash - in - 1) : strlen(in + 1);
		if (l >= sizeof var)
			return false;
		memcpy(var, in + 1, l);
		var[l] = '\0';
		const char *v = getenv(var);
		if (!v || !*v)
			return false;
		snprintf(out, n, "%s%s", v, slash ? slash : "");
		return true;
	}
	if (in[0] == '~' && (in[1] == '/' || !in[1])) {
		const char *h = getenv("HOME");
		if (!h || !*h)
			return false;
		snprintf(out, n, "%s%s", h, in + 1);
		return true;
	}
	snprintf(out, n, "%s", in);
	return true;
}

static const char *key_of(const struct ctx *c, const char *role, const char *fallback)
{
	const char *k = vf_json_get_str(cJSON_GetObjectItemCaseSensitive(c->cfg, "keys"), role);
	return k ? k : fallback;
}

/* The value of key in the run config as display text: strings unquoted,
 * null as "null", sequences as JSON, "(not set)" when absent. */
static void value_text(const struct vf_yamldoc *d, const char *key, char *out, size_t n)
{
	const struct vf_yaml_node *v = vf_yamldoc_find(d, key);
	if (!v) {
		snprintf(out, n, "(not set)");
		return;
	}
	enum vf_yaml_kind k = vf_yaml_node_kind(v);
	if (k == VF_YAML_SEQ || k == VF_YAML_MAP) {
		cJSON *j = vf_yaml_node_to_json(v);
		char *s = j ? cJSON_PrintUnformatted(j) : NULL;
		snprintf(out, n, "%s", s ? s : "?");
		free(s);
		cJSON_Delete(j);
	} else if (k == VF_YAML_NULL) {
		snprintf(out, n, "null");
	} else {
		snprintf(out, n, "%s", vf_yaml_node_str(v));
	}
}

/* Replace each {name} in tmpl by the value of the same-named pair. */
static void subst(const char *tmpl, char *out, size_t n, const char *const *pairs)
{
	size_t o = 0;
	for (const char *s = tmpl; *s && o + 1 < n;) {
		bool done = false;
		if (*s == '{') {
			for (size_t i = 0; pairs[i]; i += 2) {
				size_t l = strlen(pairs[i]);
				if (strncmp(s + 1, pairs[i], l) == 0 && s[1 + l] == '}') {
					o += (size_t)snprintf(out + o, n - o, "%s", pairs[i + 1]);
					if (o >= n)
						o = n - 1;
					s += l + 2;
					done = true;
					break;
				}
			}
		}
		if (!done)
			out[o++] = *s++;
	}
	out[o] = '\0';
}

static bool name_ok(const char *s)
{
	if (!*s || strcmp(s, ".") == 0 || strcmp(s, "..") == 0 || strlen(s) > 100)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      *s == '-' || *s == '_' || *s == '.'))
			return false;
	return true;
}

/* ---- trainer directory ---------------------------------------------------- */

static vf_status find_trainer_dir(struct ctx *c, struct vf_error *err)
{
	const cJSON *td = cJSON_GetObjectItemCaseSensitive(c->cfg, "trainer_dir");
	const char *need = vf_json_get_str(td, "requires");
	const char *env = vf_json_get_str(td, "env");
	char sub[VF_PLAN_PATH * 2];
	if (!need)
		need = "configs";
	if (c->o->trainer_dir) {
		snprintf(sub, sizeof sub, "%s/%s", c->o->trainer_dir, need);
		if (!is_dir(sub))
			return vf_error_set(err, VF_ERR, "--trainer-dir %s: no %s/ directory there "
					    "(expected the packages/ltx-trainer checkout)",
					    c->o->trainer_dir, need);
		snprintf(c->p->trainer_dir_from, sizeof c->p->trainer_dir_from, "--trainer-dir");
		return absolute(c->o->trainer_dir, c->p->trainer_dir, sizeof c->p->trainer_dir, err);
	}
	const char *ev = env ? getenv(env) : NULL;
	if (ev && *ev) {
		snprintf(sub, sizeof sub, "%s/%s", ev, need);
		if (!is_dir(sub))
			return vf_error_set(err, VF_ERR, "$%s=%s: no %s/ directory there", env, ev, need);
		snprintf(c->p->trainer_dir_from, sizeof c->p->trainer_dir_from, "$%s", env);
		return absolute(ev, c->p->trainer_dir, sizeof c->p->trainer_dir, err);
	}
	const cJSON *cand;
	cJSON_ArrayForEach(cand, cJSON_GetObjectItemCaseSensitive(td, "candidates"))
	{
		if (!cJSON_IsString(cand))
			continue;
		snprintf(sub, sizeof sub, "%s/%s", cand->valuestring, need);
		if (is_dir(sub)) {
			snprintf(c->p->trainer_dir_from, sizeof c->p->trainer_dir_from, "%s",
				 strcmp(cand->valuestring, ".") == 0 ? "the current directory"
								    : cand->valuestring);
			return absolute(cand->valuestring, c->p->trainer_dir, sizeof c->p->trainer_dir, err);
		}
	}
	return vf_error_set(err, VF_ERR,
			    "no LTX-2 trainer found: pass --trainer-dir DIR (the packages/ltx-trainer "
			    "checkout) or set $%s",
			    env ? env : "LTX_TRAINER_DIR");
}

/* ---- model discovery ---------------------------------------------------- */

struct found {
	char paths[VF_PLAN_MAXLIST][VF_PLAN_PATH];
	int n;
	int scanned;
};

static bool excluded(const char *name, const cJSON *ex)
{
	const cJSON *g;
	cJSON_ArrayForEach(g, ex) if (cJSON_IsString(g) && fnmatch(g->valuestring, name, FNM_CASEFOLD) == 0) return true;
	return false;
}

static void scan(const char *dir, int depth, const cJSON *md, struct found *ck, struct found *te)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	const char *cglob = vf_json_get_str(md, "checkpoint_glob");
	const char *tglob = vf_json_get_str(md, "text_encoder_glob");
	const char *treq = vf_json_get_str(md, "text_encoder_requires");
	const cJSON *ex = cJSON_GetObjectItemCaseSensitive(md, "checkpoint_exclude");
	struct dirent *e;
	while ((e = readdir(d)) && ck->scanned < MAX_SCAN) {
		ck->scanned++;
		if (e->d_name[0] == '.')
			continue;
		char path[VF_PLAN_PATH];
		if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path)
			continue;
		struct stat st;
		if (stat(path, &st) != 0)
			continue;
		if (S_ISREG(st.st_mode) && cglob && fnmatch(cglob, e->d_name, FNM_CASEFOLD) == 0 &&
		    !excluded(e->d_name, ex)) {
			if (ck->n < VF_PLAN_MAXLIST)
				snprintf(ck->paths[ck->n++], VF_PLAN_PATH, "%s", path);
		} else if (S_ISDIR(st.st_mode)) {
			char req[VF_PLAN_PATH + 64];
			snprintf(req, sizeof req, "%s/%s", path, treq ? treq : "config.json");
			if (tglob && fnmatch(tglob, e->d_name, FNM_CASEFOLD) == 0 && is_file(req)) {
				if (te->n < VF_PLAN_MAXLIST)
					snprintf(te->paths[te->n++], VF_PLAN_PATH, "%s", path);
			} else if (depth > 1) {
				scan(path, depth - 1, md, ck, te);
			}
		}
	}
	closedir(d);
}

static void join_list(const struct found *f, char *out, size_t n)
{
	out[0] = '\0';
	for (int i = 0; i < f->n; i++) {
		size_t l = strlen(out);
		snprintf(out + l, n - l, "%s%s", i ? ", " : "", f->paths[i]);
	}
}

static vf_status choose(const char *given, const char *flag, const char *what,
			const struct found *f, const char *searched, char *out, char *from, size_t fromn,
			struct vf_error *err)
{
	if (given) {
		if (vf_plan_is_url(given))
			return vf_error_set(err, VF_ERR,
					    "%s %s: URLs are refused; the trainer needs a local %s "
					    "(download it first, then pass its path)",
					    flag, given, what);
		snprintf(from, fromn, "%s", flag);
		return absolute(given, out, VF_PLAN_PATH, err);
	}
	if (f->n == 0)
		return vf_error_set(err, VF_ERR, "no %s found in %s; pass %s PATH", what,
				    searched[0] ? searched : "(no model directory exists)", flag);
	if (f->n > 1) {
		char list[2048];
		join_list(f, list, sizeof list);
		return vf_error_set(err, VF_ERR, "several %ss found (%s); choose one with %s PATH", what,
				    list, flag);
	}
	snprintf(from, fromn, "found in %s", searched);
	return absolute(f->paths[0], out, VF_PLAN_PATH, err);
}

/* The checkpoint offered as the model: a valid safetensors file holding a
 * transformer (a VAE file is refused), its version from the metadata. */
static vf_status read_model(struct ctx *c, struct vf_ckpt *ck, struct vf_error *err)
{
	struct vf_plan *p = c->p;
	if (!is_file(p->model))
		return vf_error_set(err, VF_ERR, "%s: %s", p->model,
				    access(p->model, F_OK) == 0 ? "not a regular file" : "no such file");
	const cJSON *rules = cJSON_GetObjectItemCaseSensitive(c->cfg, "checkpoint");
	if (vf_ckpt_read(p->model, rules, ck, err) != VF_OK)
		return vf_error_prefix(err, "--model");
	if (vf_ckpt_is_vae_only(ck))
		return vf_error_set(err, VF_ERR,
				    "--model %s: this file holds only the %s (no transformer tensors): it is a "
				    "part of a split pack, not the model; pass the transformer or the unified "
				    "checkpoint",
				    p->model, ck->has[VF_CKPT_VIDEO_VAE] ? "video VAE" : "audio VAE");
	p->model_params = ck->params;
	p->model_bytes = ck->data_bytes;
	p->split_pack = ck->has[VF_CKPT_TRANSFORMER] && !(ck->has[VF_CKPT_VIDEO_VAE] && ck->has[VF_CKPT_AUDIO_VAE]);
	return VF_OK;
}

/* One part of a split pack beside the transformer: given, or the single
 * file in its directory that holds that part and no transformer. */
static vf_status split_part(struct ctx *c, enum vf_ckpt_part part, const char *given, const char *flag, char *out,
			    struct vf_error *err)
{
	struct vf_plan *p = c->p;
	const cJSON *rules = cJSON_GetObjectItemCaseSensitive(c->cfg, "checkpoint");
	if (given)
		return absolute(given, out, VF_PLAN_PATH, err);
	char dir[VF_PLAN_PATH];
	snprintf(dir, sizeof dir, "%s", p->model);
	*strrchr(dir, '/') = '\0';
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		char path[VF_PLAN_PATH * 2];
		struct vf_ckpt ck;
		struct vf_error ign = {0};
		size_t l = strlen(e->d_name);
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (l < 12 || strcmp(e->d_name + l - 12, ".safetensors") != 0 || strcmp(path, p->model) == 0 ||
		    !is_file(path) || vf_ckpt_read(path, rules, &ck, &ign) != VF_OK)
			continue;
		if (ck.has[part] && !ck.has[VF_CKPT_TRANSFORMER] && n++ == 0)
			snprintf(out, VF_PLAN_PATH, "%s", path);
	}
	if (d)
		closedir(d);
	if (n == 1)
		return VF_OK;
	out[0] = '\0';
	return vf_error_set(err, VF_ERR, "%s holds only the transformer (a split pack) and %s %s file%s in %s; "
			    "pass %s PATH", p->model, n ? "several" : "no", vf_ckpt_part_name(part),
			    n ? "s" : "", dir, flag);
}

static vf_status split_parts(struct ctx *c, struct vf_error *err)
{
	struct vf_plan *p = c->p;
	if (!p->split_pack)
		return VF_OK;
	vf_status st = split_part(c, VF_CKPT_VIDEO_VAE, c->o->video_vae, "--video-vae", p->video_vae, err);
	if (st == VF_OK)
		st = split_part(c, VF_CKPT_AUDIO_VAE, c->o->audio_vae, "--audio-vae", p->audio_vae, err);
	if (st == VF_OK && !c->o->video_vae)
		ASSUME(c, "Split pack: video VAE %s, audio VAE %s (found beside the transformer by their "
			  "tensors; --video-vae, --audio-vae to choose).", p->video_vae, p->audio_vae);
	return st;
}

static vf_status check_text_encoder(struct ctx *c, struct vf_error *err)
{
	struct vf_plan *p = c->p;
	const char *te = p->text_encoder;
	size_t l = strlen(te);
	if (is_file(te) && l > 12 && strcmp(te + l - 12, ".safetensors") == 0) {
		struct vf_safetensors sf;
		memset(&sf, 0, sizeof sf);
		vf_status st = vf_safetensors_read(te, &sf, err);
		vf_safetensors_release(&sf);
		return st == VF_OK ? VF_OK : vf_error_prefix(err, "--text-encoder");
	}
	if (!is_dir(te))
		return vf_error_set(err, VF_ERR, "%s: %s (expected the Gemma text encoder directory, or the packed "
				    "text-encoder .safetensors of a split pack)", te,
				    access(te, F_OK) == 0 ? "not a directory" : "no such directory");
	char cj[VF_PLAN_PATH + 16];
	snprintf(cj, sizeof cj, "%s/config.json", te);
	if (!is_file(cj))
		WARN(c, "The text encoder directory %s has no config.json; check that it is the Gemma "
			"text encoder.", te);
	return VF_OK;
}

/* Which model it is: the version in the checkpoint's metadata, else the
 * profile's file-name globs (labelled as such). */
static void model_identity(struct ctx *c, const struct vf_ckpt *ck)
{
	struct vf_plan *p = c->p;
	if (ck->model_id[0]) {
		snprintf(p->model_id, sizeof p->model_id, "%s", ck->model_id);
		snprintf(p->model_version, sizeof p->model_version, "%s %s", ck->model_name, ck->version);
		snprintf(p->model_version_from, sizeof p->model_version_from, "%s", ck->version_from);
		return;
	}
	const cJSON *ids = cJSON_GetObjectItemCaseSensitive(c->cfg, "model_ids");
	const char *base = strrchr(p->model, '/');
	base = base ? base + 1 : p->model;
	const cJSON *m;
	cJSON_ArrayForEach(m, ids)
	{
		const char *g = vf_json_get_str(m, "glob"), *id = vf_json_get_str(m, "id");
		if (g && id && fnmatch(g, base, FNM_CASEFOLD) == 0) {
			snprintf(p->model_id, sizeof p->model_id, "%s", id);
			break;
		}
	}
	snprintf(p->model_version, sizeof p->model_version, "%s", p->model_id[0] ? p->model_id : "unknown");
	snprintf(p->model_version_from, sizeof p->model_version_from, "%s%s",
		 ck->version[0] ? "unmapped version in the metadata; " : "no version in the checkpoint's metadata; ",
		 p->model_id[0] ? "guessed from the file name" : "not identified");
}

static vf_status find_models(struct ctx *c, struct vf_error *err)
{
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(c->cfg, "model_discovery");
	struct found *ck = calloc(2, sizeof *ck);
	if (!ck)
		return vf_error_set(err, VF_ENOMEM, "out of memory");
	struct found *te = ck + 1;
	char searched[1024] = "";
	int64_t depth = 3;
	vf_json_get_i64(md, "max_depth", &depth);
	if (!c->o->model || !c->o->text_encoder) {
		const cJSON *dir;
		cJSON_ArrayForEach(dir, cJSON_GetObjectItemCaseSensitive(md, "dirs"))
		{
			char path[VF_PLAN_PATH];
			if (!cJSON_IsString(dir) || !expand(dir->valuestring, path, sizeof path) || !is_dir(path))
				continue;
			size_t l = strlen(searched);
			snprintf(searched + l, sizeof searched - l, "%s%s", l ? ", " : "", path);
			scan(path, (int)depth, md, ck, te);
		}
	}
	struct vf_plan *p = c->p;
	struct vf_ckpt info;
	vf_status st = choose(c->o->model, "--model", "LTX-2 checkpoint (.safetensors)", ck, searched,
			      p->model, p->model_from, sizeof p->model_from, err);
	if (st == VF_OK && !c->o->model)
		ASSUME(c, "Model checkpoint: %s (%s; pass --model to choose another).", p->model,
		       p->model_from);
	if (st == VF_OK && (st = read_model(c, &info, err)) == VF_OK)
		st = split_parts(c, err);
	/* a split pack's packed text encoder beside the transformer, when no directory was found */
	struct vf_error ign = {0};
	if (st == VF_OK && p->split_pack && !c->o->text_encoder && te->n == 0 &&
	    split_part(c, VF_CKPT_TEXT_ENCODER, NULL, "--text-encoder", te->paths[0], &ign) == VF_OK) {
		te->n = 1;
		snprintf(searched, sizeof searched, "the split pack's directory");
	}
	if (st == VF_OK)
		st = choose(c->o->text_encoder, "--text-encoder", "Gemma text encoder directory", te,
			    searched, p->text_encoder, p->text_encoder_from, sizeof p->text_encoder_from,
			    err);
	free(ck);
	if (st != VF_OK)
		return st;
	if (!c->o->text_encoder)
		ASSUME(c, "Text encoder: %s (%s; pass --text-encoder to choose another).", p->text_encoder,
		       p->text_encoder_from);
	if ((st = check_text_encoder(c, err)) != VF_OK)
		return st;
	model_identity(c, &info);
	return VF_OK;
}

/* ---- workspace ------------------------------------------------------------ */

static bool writable_root(const char *path, bool *create)
{
	*create = false;
	if (is_dir(path))
		return access(path, W_OK | X_OK) == 0;
	char parent[VF_PLAN_PATH];
	snprintf(parent, sizeof parent, "%s", path);
	char *slash = strrchr(parent, '/');
	if (!slash)
		return false;
	if (slash == parent)
		return false; /* never create a directory at the filesystem root */
	*slash = '\0';
	if (is_dir(parent) && access(parent, W_OK | X_OK) == 0) {
		*create = true;
		return true;
	}
	return false;
}

static vf_status choose_workspace(struct ctx *c, struct vf_error *err)
{
	struct vf_plan *p = c->p;
	char abs[VF_PLAN_PATH];
	bool create;
	if (c->o->workspace) {
		vf_status st = absolute(c->o->workspace, abs, sizeof abs, err);
		if (st != VF_OK)
			return st;
		if (!writable_root(abs, &create))
			return vf_error_set(err, VF_ERR, "--workspace %s: not a writable directory",
					    c->o->workspace);
		snprintf(p->workspace, sizeof p->workspace, "%s", abs);
		snprintf(p->workspace_from, sizeof p->workspace_from, "--workspace");
		p->workspace_created = create;
		return VF_OK;
	}
	char tried[1024] = "";
	const cJSON *r;
	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(c->cfg, "workspace_roots"))
	{
		char path[VF_PLAN_PATH];
		if (!cJSON_IsString(r))
			continue;
		size_t l = strlen(tried);
		snprintf(tried + l, sizeof tried - l, "%s%s", l ? ", " : "", r->valuestring);
		if (!expand(r->valuestring, path, sizeof path) || absolute(path, abs, sizeof abs, err) != VF_OK)
			continue;
		if (writable_root(abs, &create)) {
			snprintf(p->workspace, sizeof p->workspace, "%s", abs);
			snprintf(p->workspace_from, sizeof p->workspace_from, "%s", r->valuestring);
			p->workspace_created = create;
			ASSUME(c, "Workspace root: %s (the first writable of %s; --workspace to choose)%s.",
			       abs, "the profile's roots", create ? "; it will be created" : "");
			return VF_OK;
		}
	}
	return vf_error_set(err, VF_ERR, "no writable workspace root (tried %s); pass --workspace DIR",
			    tried);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

/* What an existing run directory holds, and checkpoints to resume from. */
static void survey_existing(struct ctx *c)
{
	struct vf_plan *p = c->p;
	DIR *d = opendir(p->run_dir);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d)) && p->nexisting < VF_PLAN_MAXLIST) {
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			char path[VF_PLAN_PATH * 2];
			snprintf(path, sizeof path, "%s/%s", p->run_dir, e->d_name);
			snprintf(p->existing[p->nexisting++], 256, "%s%s", e->d_name, is_dir(path) ? "/" : "");
		}
		closedir(d);
		qsort(p->existing, (size_t)p->nexisting, sizeof p->existing[0], cmp_str);
	}
	const cJSON *cp = cJSON_GetObjectItemCaseSensitive(c->cfg, "checkpoints");
	const char *sub = vf_json_get_str(cp, "dir");
	char dir[VF_PLAN_PATH * 2];
	snprintf(dir, sizeof dir, "%s/%s", p->run_dir, sub ? sub : "outputs/checkpoints");
	d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d)) && p->nresume < VF_PLAN_MAXLIST) {
		const cJSON *g;
		cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(cp, "globs"))
		{
			if (cJSON_IsString(g) && fnmatch(g->valuestring, e->d_name, 0) == 0) {
				snprintf(p->resume[p->nresume++], VF_PLAN_PATH, "%.*s/%s", VF_PLAN_PATH / 2, dir,
					 e->d_name);
				break;
			}
		}
	}
	closedir(d);
	qsort(p->resume, (size_t)p->nresume, sizeof p->resume[0], cmp_str);
}

/* ---- the run config ------------------------------------------------------- */

static vf_status patch(struct ctx *c, const char *key, const char *value, bool is_string,
		       const char *reason, struct vf_error *err)
{
	struct vf_plan *p = c->p;
	const struct vf_yaml_node *old = vf_yamldoc_find(p->config, key);
	char before[256];
	if (old)
		value_text(p->config, key, before, sizeof before);
	else
		snprintf(before, sizeof before, "(absent)");
	cJSON *oj = old ? vf_yaml_node_to_json(old) : NULL;
	vf_status st = is_string ? vf_yamldoc_set_str(p->config, key, value, err)
				 : vf_yamldoc_set(p->config, key, value, err);
	if (st != VF_OK) {
		cJSON_Delete(oj);
		return st;
	}
	cJSON *nj = vf_yaml_node_to_json(vf_yamldoc_find(p->config, key));
	bool same = oj && nj && cJSON_Compare(oj, nj, true);
	cJSON_Delete(oj);
	cJSON_Delete(nj);
	if (same)
		return VF_OK; /* already so: yamldoc re-wrote identical bytes or equivalent */
	if (p->npatches < VF_PLAN_MAXLIST) {
		struct vf_plan_patch *pp = &p->patches[p->npatches++];
		snprintf(pp->key, sizeof pp->key, "%s", key);
		snprintf(pp->before, sizeof pp->before, "%s", before);
		value_text(p->config, key, pp->after, sizeof pp->after);
		snprintf(pp->reason, sizeof pp->reason, "%s", reason);
	}
	return VF_OK;
}

static vf_status config_paths(struct ctx *c, struct vf_error *err)
{
	struct vf_plan *p = c->p;
	vf_status st = VF_OK;
	/* The four paths, absolute. */
	const cJSON *pp;
	cJSON_ArrayForEach(pp, cJSON_GetObjectItemCaseSensitive(c->cfg, "patched_paths"))
	{
		if (!cJSON_IsString(pp))
			continue;
		const char *pairs[] = {"model", p->model, "text_encoder", p->text_encoder, "run", p->run_dir, NULL};
		char value[VF_PLAN_PATH * 2];
		subst(pp->valuestring, value, sizeof value, pairs);
		st = patch(c, pp->string, value, true, "path", err);
		if (st != VF_OK)
			return st;
	}
	return VF_OK;
}

static vf_status config_split_pack(struct ctx *c, struct vf_error *err)
{
	struct vf_plan *p = c->p;
	vf_status st = VF_OK;
	/* A split pack: the VAE files (a unified checkpoint needs neither key). */
	const cJSON *ps = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(c->cfg, "checkpoint"),
							   "patch_when_split");
	const char *kv = vf_json_get_str(ps, "video_vae"), *ka_ = vf_json_get_str(ps, "audio_vae");
	if (p->split_pack && kv && ka_ &&
	    ((st = patch(c, kv, p->video_vae, true, "path: split pack", err)) != VF_OK ||
	     (st = patch(c, ka_, p->audio_vae, true, "path: split pack", err)) != VF_OK))
		return st;
	return VF_OK;
}

static vf_status config_low_vram(struct ctx *c, struct vf_error *err)
{
	struct vf_plan *p = c->p;
	vf_status st = VF_OK;
	/* The trainer's low-VRAM choices, where this mode's config has the key. */
	for (int i = 0; i < p->ndeltas; i++) {
		const struct vf_delta *d = &p->deltas[i];
		p->delta_applied[i] = vf_yamldoc_find(p->config, d->key) != NULL;
		if (p->delta_applied[i] &&
		    (st = patch(c, d->key, d->value, d->is_string, "trainer's low-VRAM choice", err)) != VF_OK)
			return st;
	}
	return VF_OK;
}

static vf_status config_asked(struct ctx *c, struct vf_error *err)
{
	struct vf_plan *p = c->p;
	vf_status st = VF_OK;
	/* What the user asked for. */
	const char *kmode = key_of(c, "training_mode", "model.training_mode");
	const char *ksteps = key_of(c, "steps", "optimization.steps");
	if (c->o->training_mode) {
		st = patch(c, kmode, c->o->training_mode, true, "asked: --training-mode", err);
		if (st != VF_OK)
			return st;
	}
	if (c->o->steps > 0) {
		char v[32];
		snprintf(v, sizeof v, "%lld", (long long)c->o->steps);
		st = patch(c, ksteps, v, false, "asked: --steps", err);
		if (st != VF_OK)
			return st;
	}
	const char *tm = NULL;
	vf_yamldoc_get_str(p->config, kmode, &tm, NULL);
	snprintf(p->training_mode, sizeof p->training_mode, "%s", tm ? tm : "lora");
	if (!c->o->training_mode)
		ASSUME(c, "Training mode: %s (as shipped in %s; --training-mode lora|full).",
		       p->training_mode, strrchr(p->shipped_config, '/') + 1);
	p->steps = 0;
	vf_yamldoc_get_int(p->config, ksteps, &p->steps, NULL);
	if (c->o->steps <= 0)
		ASSUME(c, "Steps: %lld (as shipped; --steps N).", (long long)p->steps);
	return VF_OK;
}

/* A rule adds a key the config lacks only where the checkout's schema has
 * that field (older trainers lack newer keys); *s is loaded on first need
 * (NULL when the schema cannot be read: then nothing is added). */
static bool rule_may_add(struct ctx *c, const char *key, struct vf_schema **s, bool *loaded)
{
	if (vf_yamldoc_find(c->p->config, key))
		return true;
	if (!*loaded) {
		*loaded = true;
		const cJSON *sc = cJSON_GetObjectItemCaseSensitive(c->cfg, "schema");
		const char *file = vf_json_get_str(sc, "file"), *cls = vf_json_get_str(sc, "class");
		if (file && cls && vf_schema_load(c->p->trainer_dir, file, cls, s, NULL) != VF_OK)
			*s = NULL;
	}
	return *s && vf_schema_has_path(*s, key);
}

static vf_status config_full_finetune(struct ctx *c, struct vf_error *err)
{
	struct vf_plan *p = c->p;
	vf_status st = VF_OK;
	/* Rules: full fine-tune. */
	const cJSON *ff = cJSON_GetObjectItemCaseSensitive(c->cfg, "full_finetune");
	if (strcmp(p->training_mode, "full") == 0) {
		const cJSON *s;
		struct vf_schema *schema = NULL;
		bool loaded = false;
		cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(ff, "set"))
		{
			if (!cJSON_IsString(s))
				continue;
			if (!rule_may_add(c, s->string, &schema, &loaded)) {
				WARN(c, "Full fine-tune rule not applied: %s = %s (this trainer's schema has no "
					"such field, so it is not added).", s->string, s->valuestring);
				continue;
			}
			st = patch(c, s->string, s->valuestring, false, "rule: full fine-tune", err);
			if (st != VF_OK)
				break;
		}
		vf_schema_free(schema);
		if (st != VF_OK)
			return st;
		int64_t min_gpus = 2, min_gb = 80;
		vf_json_get_i64(ff, "min_gpus", &min_gpus);
		vf_json_get_i64(ff, "min_gpu_gb", &min_gb);
		if (p->gpu_count < min_gpus || p->gpu_gb < min_gb) {
			char hw[160], tier_name[64], rank[32];
			snprintf(hw, sizeof hw, "%s x %d, %dGB", p->gpu_name, p->gpu_count, p->gpu_gb);
			snprintf(tier_name, sizeof tier_name, "%s", p->tier.name);
			value_text(p->config, key_of(c, "lora_rank", "lora.rank"), rank, sizeof rank);
			const char *pairs[] = {"hardware", hw, "tier", tier_name, "rank", rank, NULL};
			char w[512], alt[512];
			const char *wt = vf_json_get_str(ff, "warning");
			const char *at = vf_json_get_str(ff, "lora_alternative");
			subst(wt ? wt : "full fine-tuning is unlikely to fit on {hardware}", w, sizeof w, pairs);
			subst(at ? at : "train a LoRA instead", alt, sizeof alt, pairs);
			WARN(c, "Full fine-tune: %s.", w);
			WARN(c, "LoRA alternative: %s.", alt);
		}
	}
	return VF_OK;
}

static vf_status config_effective_batch(struct ctx *c, struct vf_error *err)
{
	struct vf_plan *p = c->p;
	vf_status st = VF_OK;
	/* Rules: effective batch across GPUs. */
	const char *kb = key_of(c, "batch_size", "optimization.batch_size");
	const char *ka = key_of(c, "gradient_accumulation_steps", "optimization.gradient_accumulation_steps");
	p->batch_size = 1;
	p->grad_accum = 1;
	vf_yamldoc_get_int(p->config, kb, &p->batch_size, NULL);
	vf_yamldoc_get_int(p->config, ka, &p->grad_accum, NULL);
	int64_t planned = p->batch_size * p->grad_accum;
	if (p->gpu_count > 1 && p->grad_accum > 1) {
		int64_t acc = p->grad_accum / p->gpu_count;
		if (acc < 1)
			acc = 1;
		if (acc != p->grad_accum) {
			char v[32];
			snprintf(v, sizeof v, "%lld", (long long)acc);
			st = patch(c, ka, v, false, "rule: keep the effective batch across GPUs", err);
			if (st != VF_OK)
				return st;
			p->grad_accum = acc;
		}
	}
	p->effective_batch = p->batch_size * p->grad_accum * (p->gpu_count > 0 ? p->gpu_count : 1);
	if (p->effective_batch != planned)
		ASSUME(c, "Effective batch: %lld = batch %lld x accumulation %lld x %d GPUs (the shipped "
			  "config plans %lld; gradient accumulation cannot go below 1).",
		       (long long)p->effective_batch, (long long)p->batch_size, (long long)p->grad_accum,
		       p->gpu_count, (long long)planned);
	return VF_OK;
}

static vf_status make_config(struct ctx *c, struct vf_error *err)
{
	struct vf_plan *p = c->p;
	/* Errors name the shipped file (the run's copy is not written yet). */
	vf_status st = vf_yamldoc_load_file(p->shipped_config, &p->config, err);
	if (st != VF_OK)
		return st == VF_ENOTFOUND
			       ? vf_error_set(err, VF_ERR, "%s: the shipped config for the %s (%s) is missing",
					      p->shipped_config, p->tier.name, p->mode)
			       : st;
	/* An empty shipped config would become a run config of four keys. */
	const struct vf_yaml_node *root = vf_yamldoc_root(p->config);
	if (!root || vf_yaml_node_kind(root) != VF_YAML_MAP || vf_yaml_node_count(root) == 0)
		return vf_error_set(err, VF_ERR,
				    "%s: the shipped config for the %s (%s) is empty (expected the "
				    "trainer's YAML mapping of settings)",
				    p->shipped_config, p->tier.name, p->mode);
	if ((st = config_paths(c, err)) || (st = config_split_pack(c, err)) || (st = config_low_vram(c, err)) ||
	    (st = config_asked(c, err)) || (st = config_full_finetune(c, err)))
		return st;
	return config_effective_batch(c, err);
}

static vf_status make_launch(struct ctx *c, struct vf_error *err)
{
	struct vf_plan *p = c->p;
	const cJSON *l = cJSON_GetObjectItemCaseSensitive(c->cfg, "launch");
	const char *which = p->gpu_count <= 1 ? "single_gpu"
			    : strcmp(p->training_mode, "full") == 0 ? "multi_gpu_full"
								  : "multi_gpu_lora";
	const char *t = vf_json_get_str(l, which);
	char n[16], cfg[VF_PLAN_PATH * 5], cwd[VF_PLAN_PATH * 5];
	snprintf(n, sizeof n, "%d", p->gpu_count);
	vf_shell_quote_to(cfg, sizeof cfg, p->config_path); /* fits: at most 4 bytes per byte + 2 */
	vf_shell_quote_to(cwd, sizeof cwd, p->trainer_dir);
	const char *pairs[] = {"config", cfg, "num_gpus", n, NULL};
	subst(t ? t : "uv run python scripts/train.py {config}", p->launch, sizeof p->launch, pairs);
	snprintf(p->launch_cwd, sizeof p->launch_cwd, "%s", p->trainer_dir);
	if (strlen(p->launch) + 1 >= sizeof p->launch ||
	    (size_t)snprintf(p->launch_line, sizeof p->launch_line, "cd %s && %s", cwd, p->launch) >= sizeof p->launch_line)
		return vf_error_set(err, VF_ERR, "%s: the launch command is longer than %zu bytes once its paths are "
				    "quoted", p->config_path, sizeof p->launch);
	const char *fsdp = vf_json_get_str(l, "fsdp_config");
	if (strcmp(which, "multi_gpu_full") == 0 && fsdp) {
		char path[VF_PLAN_PATH * 2];
		snprintf(path, sizeof path, "%s/%s", p->trainer_dir, fsdp);
		if (!is_file(path))
			WARN(c, "The FSDP launch config %s is missing from the trainer directory.", path);
	}
	return VF_OK;
}

/* ---- estimate ------------------------------------------------------------- */

/* The phase a run reaches first that holds more than vram bytes: the
 * trainer's order is text encoder (validation prompts), loading, the
 * steps, validation. The peak phase when none does alone (the reserve). */
static enum vf_phase first_oom_phase(const struct vf_estimate *e, int64_t vram)
{
	static const enum vf_phase order[] = {VF_PHASE_TEXT_ENCODER, VF_PHASE_LOAD, VF_PHASE_FORWARD,
					      VF_PHASE_BACKWARD, VF_PHASE_OPTIMIZER, VF_PHASE_VALIDATION};
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
		if (!(e->phases & (1u << order[i])))
			continue;
		int64_t sum = 0;
		for (int k = 0; k < VF_TERM_COUNT; k++)
			sum += e->phase_bytes[order[i]][k];
		if (sum > vram)
			return order[i];
	}
	return e->peak_phase;
}

/* The estimate says the training does not fit: the gate's message (the
 * peak against the card, the term that breaks it, the options), and with
 * --accept-risk the assumption that says the plan proceeds anyway. */
static void memory_gate(struct ctx *c, enum vf_phase first, int64_t headroom)
{
	struct vf_plan *p = c->p;
	const double g = 1024.0 * 1024 * 1024;
	int big = 0;
	for (int k = 1; k < VF_TERM_COUNT; k++)
		if (p->estimate.phase_bytes[first][k] > p->estimate.phase_bytes[first][big])
			big = k;
	bool full = strcmp(p->training_mode, "full") == 0;
	p->memory_gate = true;
	snprintf(p->block_msg, sizeof p->block_msg,
		 "the estimate puts the %s training's peak at %.1f GiB per GPU against the %.1f GiB of each "
		 "%s (x %d; %.1f GiB over); it runs out first in the %s phase, where the largest term, %s, "
		 "takes %.1f GiB: %splan for more or larger GPUs (--gpu), or pass --accept-risk to write the "
		 "plan anyway",
		 p->training_mode, (double)p->estimate.peak_bytes / g,
		 (double)vf_estimate_gpu_bytes(p->gpu_spec) / g, p->gpu_name, p->gpu_count, (double)-headroom / g,
		 vf_phase_name(first), vf_term_name((enum vf_term)big),
		 (double)p->estimate.phase_bytes[first][big] / g,
		 full ? "train a LoRA instead (--training-mode lora), "
		      : "train at a smaller size (--resolution-buckets), ");
	if (c->o->accept_risk)
		ASSUME(c, "The estimate says the training does not fit (%.1f GiB per GPU against the %s's "
			  "%.1f GiB): proceeding anyway at your own risk (--accept-risk); expect the sanity "
			  "check to run out of memory unless the estimate is wrong.",
		       (double)p->estimate.peak_bytes / g, p->gpu_name,
		       (double)vf_estimate_gpu_bytes(p->gpu_spec) / g);
}

static void make_estimate(struct ctx *c)
{
	struct vf_plan *p = c->p;
	struct vf_ltx2_config lc;
	/* the config as the predicted sweep and tune read it (one reader:
	 * acceleration.offload_optimizer_during_validation included), the
	 * plan's own mode, batch and training size over it */
	(void)vf_sweepfit_config(c->cfg, p->config, p->gpu_count, &lc, NULL);
	lc.training_mode = p->training_mode;
	lc.batch_size = (int)p->batch_size;
	lc.grad_accum = (int)p->grad_accum;
	for (int i = 0; i < 3; i++)
		lc.train_dims[i] = p->train_dims[i];
	for (int i = 0; i < 3; i++)
		p->val_dims[i] = lc.validation_disabled ? 0 : lc.video_dims[i];
	struct vf_error err = {0};
	/* the checkpoint's own transformer config and header when it is one;
	 * else the catalog model its name matches */
	vf_status fst = vf_estimate_ltx2_file(p->model, &lc, p->gpu_spec, &p->estimate, &err);
	bool from_file = fst == VF_OK;
	vf_error_clear(&err);
	if (!from_file && !p->model_id[0]) {
		snprintf(p->estimate_note, sizeof p->estimate_note,
			 "no estimate: the checkpoint's name matches no catalog model");
		return;
	}
	if (!from_file && vf_estimate_ltx2(p->model_id, &lc, p->gpu_spec, &p->estimate, &err) != VF_OK) {
		snprintf(p->estimate_note, sizeof p->estimate_note, "no estimate: %s", err.msg);
		return;
	}
	p->has_estimate = true;
	ASSUME(c, "Estimate: %s%s%s, the run config's values, training at %dx%dx%d (%s)%s, validation "
		  "%s%s%s.",
	       from_file ? "the LTX transformer from the checkpoint's own config and header" : "the `",
	       from_file ? "" : p->model_id, from_file ? "" : "` catalog model (from the checkpoint's name)",
	       p->train_dims[0], p->train_dims[1], p->train_dims[2],
	       p->train_dims_assumed ? "assumed" : "the largest resolution bucket",
	       lc.no_audio ? " without an audio stream (training_strategy)" : " with the audio stream",
	       lc.validation_disabled ? "off (validation.interval: null)" : "as its own phase at validation.video_dims",
	       p->estimate.assumed & VF_ASSUME_CONTEXT_DEFAULT ? "; CUDA context size from the GPU generation" : "",
	       p->estimate.assumed & VF_ASSUME_GPU_RATE_UNKNOWN ? "; no step time (no compute rate for this GPU)" : "");
	int64_t headroom = 0;
	if (p->gpu_spec && !vf_estimate_fits(&p->estimate, p->gpu_spec, &headroom))
	{
		enum vf_phase first = first_oom_phase(&p->estimate, vf_estimate_gpu_bytes(p->gpu_spec));
		WARN(c, "The estimate puts the peak at %.1f GiB per GPU, %.1f GiB over the %s's memory; the run "
			"would first run out in the %s phase%s: the sanity check will tell; the OOM remedies are in "
			"the autotune order.",
		     (double)p->estimate.peak_bytes / (1024.0 * 1024 * 1024),
		     (double)-headroom / (1024.0 * 1024 * 1024), p->gpu_name, vf_phase_name(first),
		     first == VF_PHASE_LOAD && lc.gpus > 1 ? " (rank 0 at accelerator.prepare, before the first step)"
							   : "");
		/* The memory gate: only an estimate on the model's own shape for a
		 * catalog GPU says "does not fit"; a generic shape keeps the warning. */
		if (!(p->estimate.assumed & (VF_ASSUME_GENERIC_ARCH | VF_ASSUME_NO_GPU)))
			memory_gate(c, first, headroom);
	}
}

/* ---- plan.md -------------------------------------------------------------- */

static void md(struct vf_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void md(struct vf_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vf_md_vprintf(b, fmt, ap); /* every %s argument stays text (md.h) */
	va_end(ap);
}

static void gib(char *out, size_t n, int64_t bytes)
{
	snprintf(out, n, "%.1f GiB", (double)bytes / (1024.0 * 1024 * 1024));
}

static void duration(char *out, size_t n, double s)
{
	if (s < 120)
		snprintf(out, n, "%.1f s", s);
	else if (s < 7200)
		snprintf(out, n, "%.1f min", s / 60);
	else
		snprintf(out, n, "%.1f h", s / 3600);
}

static void row(struct vf_buf *b, const struct ctx *c, const char *label, const char *role,
		const char *fallback)
{
	char v[512];
	const char *key = key_of(c, role, fallback);
	value_text(c->p->config, key, v, sizeof v);
	md(b, "| %s | `%s` | `%s` |\n", label, v, key);
}

/* plan.md's "Sanity Check + Autotune": what `vramfit tune` will do, read from
 * the profile's sweep.json (the same data tune runs on). */
static void sweep_section(const struct ctx *c, struct vf_buf *b)
{
	const struct vf_plan *p = c->p;
	int64_t steps = 50, max_trials = 5;
	vf_json_get_i64(c->sweep, "steps", &steps);
	vf_json_get_i64(c->sweep, "max_trials", &max_trials);
	md(b, "Before the full run, short trials of the real trainer on one sample at the target "
	      "resolution (`vramfit tune %s`): each trial is this config with the data root "
	      "`%s/%s`, %lld steps, validation at step %lld, no intermediate "
	      "checkpoints. Trial 1 is this config as planned; success means no OOM, no NaN loss, no "
	      "crash, all %lld steps and the step-%lld validation sample. Then at most %lld more "
	      "trials, each the best so far plus one change, in this order:\n\n",
	   p->run_dir, p->run_dir, p->sample_dir, (long long)steps, (long long)steps, (long long)steps,
	   (long long)steps, (long long)(max_trials - 1));
	const cJSON *ch;
	cJSON_ArrayForEach(ch, cJSON_GetObjectItemCaseSensitive(c->sweep, "changes"))
	{
		const char *name = vf_json_get_str(ch, "name");
		if (!name)
			continue;
		const cJSON *tiers = cJSON_GetObjectItemCaseSensitive(ch, "tiers");
		bool tier_ok = !cJSON_IsArray(tiers);
		const cJSON *t;
		cJSON_ArrayForEach(t, tiers)
			if (cJSON_IsString(t) && strcmp(t->valuestring, p->tier.name) == 0)
				tier_ok = true;
		const char *flag = vf_json_get_str(ch, "requires_flag");
		if (!tier_ok)
			md(b, "- %s: not on the %s\n", name, p->tier.name);
		else if (flag)
			md(b, "- %s: only with `--%s`\n", name, flag);
		else
			md(b, "- %s\n", name);
	}
	md(b, "\nA trial whose change is already in effect is recorded as a no-op; the sweep stops "
	      "when the step time does not improve or a change runs out of memory (the profile's "
	      "rules per change). Each trial appends one line to `%s/autotune.log`; the winner's "
	      "changes are patched into `config.yaml`.\n\n",
	   p->run_dir);
}

/* The mode in words: the profile's name for it, else the config's header. */
static const char *plan_mode_words(const struct ctx *c)
{
	const char *w = vf_json_get_str(cJSON_GetObjectItemCaseSensitive(c->cfg, "mode_names"), c->p->mode);
	return w ? w : c->p->mode_what[0] ? c->p->mode_what : c->p->mode;
}

/* plan.md: ## Goal */
static void md_goal(struct ctx *c, struct vf_buf *b)
{
	struct vf_plan *p = c->p;
	const struct vf_plan_opts *o = c->o;
	bool lora = strcmp(p->training_mode, "lora") == 0;
	const char *mode_words = plan_mode_words(c);
	md(b, "## Goal\n\n");
	if (o->goal)
		md(b, "%s\n\n", o->goal);
	md(b, "Fine-tune LTX-2 for %s (%s) with %s on the dataset `%s`, in the run directory `%s`.",
	   mode_words, p->mode, lora ? "a LoRA adapter" : "full fine-tuning", p->dataset, p->run_dir);
	if (!o->goal)
		md(b, " (No goal was stated beyond this; see Assumptions.)");
	md(b, "\n\n");
}

/* plan.md: ## Mode */
static void md_mode(struct ctx *c, struct vf_buf *b)
{
	struct vf_plan *p = c->p;
	const char *mode_words = plan_mode_words(c);
	md(b, "## Mode\n\n");
	md(b, "- Mode: `%s` (%s)\n", p->mode, mode_words);
	md(b, "- Training mode: `%s`\n", p->training_mode);
	md(b, "- Starting config: `%s` (the %s's shipped config, copied to `%s`)\n", p->shipped_config,
	   p->tier.name, p->config_path);
	vf__plan_md_trainer(b, p);
	for (int i = 0; i < p->nwarnings; i++) {
		md(b, "- **Warning:** ");
		vf_md_prose(b, p->warnings[i]);
		md(b, "\n");
	}
	md(b, "\n");
}

/* plan.md: ## Dataset */
static void md_dataset(struct ctx *c, struct vf_buf *b)
{
	struct vf_plan *p = c->p;
	md(b, "## Dataset\n\n");
	md(b, "- Name: `%s`\n", p->dataset);
	md(b, "- Raw clips and captions go in `%s/dataset/`\n", p->run_dir);
	char root[VF_PLAN_PATH];
	value_text(p->config, key_of(c, "data_root", "data.preprocessed_data_root"), root, sizeof root);
	md(b, "- Preprocessed latents and text embeddings: `%s` (not there yet: pending preprocessing)\n",
	   root);
	vf__plan_md_data(b, p, c->cfg);
	md(b, "\n");
}

/* plan.md: ## Preprocessing */
static void md_preprocessing(struct ctx *c, struct vf_buf *b)
{
	struct vf_plan *p = c->p;
	md(b, "## Preprocessing\n\n");
	char root[VF_PLAN_PATH], dims[64];
	value_text(p->config, key_of(c, "data_root", "data.preprocessed_data_root"), root, sizeof root);
	value_text(p->config, key_of(c, "video_dims", "validation.video_dims"), dims, sizeof dims);
	md(b, "Encode the dataset once with the trainer's preprocessing script (in `%s`): video latents,"
	       " audio latents where audio is trained, and caption embeddings from the text encoder, "
	       "written to `%s`. Clip resolution and frame count follow the trainer's rules (width and "
	       "height multiples of 32, frames %% 8 == 1; validation renders at `%s`). The sanity check "
	       "uses one sample preprocessed the same way into `%s/%s`. Nothing has "
	       "been preprocessed yet: no heavy work runs before this plan is approved.\n\n",
	   p->trainer_dir, root, dims, p->run_dir, p->sample_dir);
}

/* plan.md: ## Training Config */
static void md_training_config(struct ctx *c, struct vf_buf *b)
{
	struct vf_plan *p = c->p;
	const struct vf_plan_opts *o = c->o;
	md(b, "## Training Config\n\n");
	md(b, "From `%s` as written (every other value as shipped).\n\n", p->config_path);
	md(b, "| setting | value | key |\n|---|---|---|\n");
	row(b, c, "optimizer", "optimizer_type", "optimization.optimizer_type");
	row(b, c, "mixed precision", "mixed_precision", "acceleration.mixed_precision_mode");
	row(b, c, "quantization", "quantization", "acceleration.quantization");
	row(b, c, "gradient checkpointing", "gradient_checkpointing", "optimization.enable_gradient_checkpointing");
	row(b, c, "batch size (per GPU)", "batch_size", "optimization.batch_size");
	row(b, c, "gradient accumulation", "gradient_accumulation_steps", "optimization.gradient_accumulation_steps");
	md(b, "| effective batch | `%lld` | batch x accumulation x %d GPU%s |\n", (long long)p->effective_batch,
	   p->gpu_count, p->gpu_count == 1 ? "" : "s");
	row(b, c, "steps", "steps", "optimization.steps");
	row(b, c, "learning rate", "learning_rate", "optimization.learning_rate");
	row(b, c, "LoRA rank", "lora_rank", "lora.rank");
	row(b, c, "LoRA alpha", "lora_alpha", "lora.alpha");
	row(b, c, "LoRA target modules", "lora_target_modules", "lora.target_modules");
	md(b, "| trigger word | `%s` | (in the captions) |\n", o->trigger ? o->trigger : "none");
	row(b, c, "validation interval", "validation_interval", "validation.interval");
	row(b, c, "checkpoint interval", "checkpoint_interval", "checkpoints.interval");
	row(b, c, "offload optimizer during validation", "offload_optimizer", "acceleration.offload_optimizer_during_validation");
	md(b, "\nPatched from the shipped config:\n\n");
	for (int i = 0; i < p->npatches; i++)
		md(b, "- `%s`: `%s` → `%s` (%s)\n", p->patches[i].key, p->patches[i].before,
		   p->patches[i].after, p->patches[i].reason);
	md(b, "\n");
}

/* plan.md: ## Hardware */
static void md_hardware(struct ctx *c, struct vf_buf *b)
{
	struct vf_plan *p = c->p;
	md(b, "## Hardware\n\n");
	md(b, "- GPUs: %s x %d, %dGB (%s)\n", p->gpu_name, p->gpu_count, p->gpu_gb,
	   p->simulated ? "simulated with --gpu: no GPU was probed" : "probed");
	md(b, "- Tier: %s — %s\n", p->tier.name, p->tier.note);
	char log[VF_PLAN_PATH + 32], qlog[VF_PLAN_PATH * 5];
	snprintf(log, sizeof log, "%s/logs/train.log", p->run_dir);
	vf_shell_quote_to(qlog, sizeof qlog, log);
	md(b, "- Launch (from `%s`):\n\n  ```\n  %s > %s 2>&1\n  ```\n\n", p->trainer_dir, p->launch_line, qlog);
}

/* plan.md: ## Sanity Check + Autotune */
static void md_sanity(struct ctx *c, struct vf_buf *b)
{
	md(b, "## Sanity Check + Autotune\n\n");
	sweep_section(c, b);
	vf__plan_md_sweep(b, c->p);
}

/* plan.md: ## Monitoring */
static void md_monitoring(struct ctx *c, struct vf_buf *b)
{
	struct vf_plan *p = c->p;
	md(b, "## Monitoring\n\n");
	md(b, "- Trainer log: `%s/logs/train.log` (run with `--disable-progress-bars`: a `Step N/M - "
	       "Loss, LR, Time/Step` line every 20 steps)\n",
	   p->run_dir);
	md(b, "- GPU memory: polled with NVML / nvidia-smi during the run (the trainer samples peak "
	       "memory only every 200 steps)\n");
	char vi[32], ci[32];
	value_text(p->config, key_of(c, "validation_interval", "validation.interval"), vi, sizeof vi);
	value_text(p->config, key_of(c, "checkpoint_interval", "checkpoints.interval"), ci, sizeof ci);
	md(b, "- Validation samples every %s steps in `%s/outputs/samples/`; checkpoints every %s steps "
	       "in `%s/outputs/checkpoints/`\n\n",
	   vi, p->run_dir, ci, p->run_dir);
}

/* plan.md: ## Outputs */
static void md_outputs(struct ctx *c, struct vf_buf *b)
{
	struct vf_plan *p = c->p;
	bool lora = strcmp(p->training_mode, "lora") == 0;
	md(b, "## Outputs\n\n");
	md(b, "- `%s/` — the run directory:\n", p->run_dir);
	md(b, "  - `plan.md` (this plan), `config.yaml` (the run config), `autotune.log`\n");
	for (int i = 0; i < p->ndirs; i++)
		md(b, "  - `%s/`\n", p->dirs[i]);
	md(b, "- %s: `%s/outputs/checkpoints/%s_weights_step_NNNNN.safetensors`\n",
	   lora ? "LoRA weights" : "Model weights", p->run_dir, lora ? "lora" : "model");
	if (p->nresume) {
		md(b, "- Resume candidates already in the run directory (set `model.load_checkpoint` to "
		       "resume):\n");
		for (int i = 0; i < p->nresume; i++)
			md(b, "  - `%s`\n", p->resume[i]);
	}
	md(b, "- Nothing is created, changed or deleted outside `%s/` without approval.\n\n", p->run_dir);
}

/* plan.md: ## Assumptions */
static void md_assumptions(struct ctx *c, struct vf_buf *b)
{
	struct vf_plan *p = c->p;
	md(b, "## Assumptions\n\n");
	for (int i = 0; i < p->nassumptions; i++) {
		md(b, "- ");
		vf_md_prose(b, p->assumptions[i]);
		md(b, "\n");
	}
	if (p->nassumptions == 0)
		md(b, "- None: every choice above was asked for.\n");
	md(b, "\n");
}

/* The bytes live in phase ph of the estimate (context included). */
static int64_t phase_total(const struct vf_estimate *e, enum vf_phase ph)
{
	int64_t sum = 0;
	for (int k = 0; k < VF_TERM_COUNT; k++)
		sum += e->phase_bytes[ph][k];
	return sum;
}

/* The estimate's phases as table rows: the training step at the
 * dataset's size, validation at its own, loading, the text encoder. */
static void md_estimate_phases(struct vf_buf *b, const struct vf_plan *p)
{
	const struct vf_estimate *e = &p->estimate;
	char v[32];
	gib(v, sizeof v, e->step_peak_bytes);
	md(b, "| training phase (step at %dx%dx%d%s) | %s; the trainer's \"Peak GPU memory\" line samples "
	      "this one |\n",
	   p->train_dims[0], p->train_dims[1], p->train_dims[2], p->train_dims_assumed ? ", assumed" : "", v);
	if (e->phases & (1u << VF_PHASE_VALIDATION)) {
		gib(v, sizeof v, phase_total(e, VF_PHASE_VALIDATION));
		md(b, "| validation phase (sampling at %dx%dx%d, tiled decode) | %s |\n", p->val_dims[0],
		   p->val_dims[1], p->val_dims[2], v);
	} else {
		md(b, "| validation phase | none (validation.interval: null) |\n");
	}
	if (e->phases & (1u << VF_PHASE_LOAD)) {
		gib(v, sizeof v, phase_total(e, VF_PHASE_LOAD));
		md(b, "| loading phase%s | %s |\n", p->gpu_count > 1 ? " (rank 0)" : "", v);
	}
	if (e->phases & (1u << VF_PHASE_TEXT_ENCODER)) {
		gib(v, sizeof v, phase_total(e, VF_PHASE_TEXT_ENCODER));
		md(b, "| text-encoder phase (validation prompts, before training) | %s |\n", v);
	}
}

/* plan.md: ## Cost / Time Estimate */

/* The training's cost by the estimate: step time x steps x GPUs x the
 * catalog's price per GPU-hour (indicative); -1 when the GPU has no price
 * or the estimate no step time. plan.md and plan.json both print this. */
static double plan_cost(const struct vf_plan *p)
{
	if (!p->has_estimate || p->estimate.step_seconds <= 0 || !p->gpu_spec || p->gpu_spec->price_usd_hour <= 0)
		return -1;
	double total = p->estimate.step_seconds * (double)p->steps; /* s */
	return total / 3600.0 * p->gpu_spec->price_usd_hour * p->gpu_count; /* $ */
}

static void md_estimate(struct ctx *c, struct vf_buf *b)
{
	struct vf_plan *p = c->p;
	md(b, "## Cost / Time Estimate\n\n");
	if (p->has_estimate) {
		const struct vf_estimate *e = &p->estimate;
		char pk[32], card[32], st[32], tot[32];
		gib(pk, sizeof pk, e->peak_bytes);
		md(b, "**Estimate** from vramfit's model (`%s`), not a measurement: it is replaced by the "
		       "measured step time after the sanity check.\n\n",
		   p->model_id);
		md(b, "| | estimate |\n|---|---|\n");
		if (p->gpu_spec) {
			gib(card, sizeof card, vf_estimate_gpu_bytes(p->gpu_spec));
			md(b, "| peak VRAM per GPU (%s phase, as nvidia-smi counts it) | %s of %s (%s) |\n",
			   vf_phase_name(e->peak_phase), pk, card,
			   vf_estimate_fits(e, p->gpu_spec, NULL) ? "fits" : "does not fit");
		} else {
			md(b, "| peak VRAM per GPU | %s (card not in the catalog) |\n", pk);
		}
		md_estimate_phases(b, p);
		if (e->step_seconds > 0) {
			duration(st, sizeof st, e->step_seconds);
			double total = e->step_seconds * (double)p->steps;
			duration(tot, sizeof tot, total);
			md(b, "| step time | %s |\n", st);
			if (e->validation_seconds > 0) {
				char vs[32];
				duration(vs, sizeof vs, e->validation_seconds);
				md(b, "| validation sampling | %s per sample (denoising only; the decode not timed) |\n",
				   vs);
			}
			md(b, "| training time for %lld steps | %s (validation and checkpoints extra) |\n",
			   (long long)p->steps, tot);
			if (plan_cost(p) >= 0)
				md(b, "| cost | $%.2f (%d GPU%s x $%.2f/GPU-hour, indicative) |\n", plan_cost(p),
				   p->gpu_count, p->gpu_count == 1 ? "" : "s", p->gpu_spec->price_usd_hour);
			else
				md(b, "| cost | unknown (no price for this GPU in the catalog) |\n");
		} else {
			md(b, "| step time | unknown (no compute rate for this GPU) |\n");
		}
		md(b, "\n");
	} else {
		md(b, "**Estimate:** none (%s). The sanity check measures the step time and peak VRAM.\n\n",
		   p->estimate_note);
	}
}

/* plan.md: the self-check's items of one level, each under its own label. */
static void md_check_items(struct vf_buf *b, const struct vf_check *ck, enum vf_check_level level)
{
	static const char said[] = "not checked: "; /* most such rules open with it */
	for (size_t i = 0; i < ck->n; i++) {
		const struct vf_check_item *it = &ck->items[i];
		const char *rule = it->rule;
		if (it->level != level)
			continue;
		if (level == VF_CHECK_FAIL) {
			md(b, "- **fails** `%s`: ", it->key);
		} else if (level == VF_CHECK_PENDING) {
			md(b, "- pending: `%s`: ", it->key);
		} else {
			md(b, "- not checked: `%s`: ", it->key);
			if (strncmp(rule, said, sizeof said - 1) == 0)
				rule += sizeof said - 1;
		}
		vf_md_prose(b, rule);
		md(b, "\n");
	}
}

/* plan.md, first of all when the self-check fails: the plan is not go. */
static void md_not_ready(struct ctx *c, struct vf_buf *b)
{
	const struct vf_plan *p = c->p;
	if (!p->check.failures)
		return;
	md(b, "## Not Ready: the Self-Check Fails\n\n");
	md(b, "The self-check of `%s` finds %zu failure%s: the trainer would refuse this config or "
	      "crash. Do not approve this plan; fix them (`vramfit config set %s KEY=VALUE`, then "
	      "`vramfit check %s`) or re-plan.\n\n",
	   p->config_path, p->check.failures, p->check.failures == 1 ? "" : "s", p->config_path, p->run_dir);
	md_check_items(b, &p->check, VF_CHECK_FAIL);
	md(b, "\n");
}

/* plan.md: ## Approve to Proceed. The counts are of the items listed under
 * them, one group each: failures, pending, not checked. */
static void md_approve(struct ctx *c, struct vf_buf *b)
{
	struct vf_plan *p = c->p;
	const struct vf_check *ck = &p->check;
	md(b, "## Approve to Proceed\n\n");
	md(b, "Self-check of `config.yaml`: %zu failure%s, %zu pending, %zu not checked.\n\n", ck->failures,
	   ck->failures == 1 ? "" : "s", ck->pending, ck->unchecked);
	if (ck->checked_by[0])
		md(b, "Keys and values: %s%s%s%s.\n\n", ck->checked_by, ck->python_note[0] ? " (python3: " : "",
		   ck->python_note, ck->python_note[0] ? ")" : "");
	static const enum vf_check_level order[] = {VF_CHECK_FAIL, VF_CHECK_PENDING, VF_CHECK_UNCHECKED};
	for (size_t k = 0; k < sizeof order / sizeof order[0]; k++)
		md_check_items(b, ck, order[k]);
	if (ck->n)
		md(b, "\n");
	if (ck->failures)
		md(b, "**Not ready:** the self-check fails (above); this plan cannot be approved as it is.\n\n");
	md(b, "Nothing heavy has run. Approving this plan means, in order: preprocess the dataset into "
	       "the run directory, run the sanity check and autotune trials, then launch the training "
	       "run above; `vramfit run %s` does all three in order (it resumes where it stopped, and "
	       "recovers from an out-of-memory by the cheapest remedy that fits). Review the Assumptions "
	       "and the estimate; change any choice with "
	       "`vramfit config set %s KEY=VALUE` or re-plan with other flags. The plan makes no claim "
	       "about how well the trained model will turn out.\n",
	   p->run_dir, p->config_path);
}

static vf_status render(struct ctx *c, struct vf_error *err)
{
	struct vf_plan *p = c->p;
	struct vf_buf b;
	vf_buf_init(&b, 1u << 20);
	md(&b, "# Training Plan — %s\n\n", p->run_name);
	md_not_ready(c, &b);
	md_goal(c, &b);
	md_mode(c, &b);
	md_dataset(c, &b);
	md_preprocessing(c, &b);
	md_training_config(c, &b);
	md_hardware(c, &b);
	md_sanity(c, &b);
	md_monitoring(c, &b);
	md_outputs(c, &b);
	md_assumptions(c, &b);
	md_estimate(c, &b);
	md_approve(c, &b);
	vf__plan_md_commands(&b, p, c->cfg);

	if (b.len == 0 && b.cap) {
		vf_buf_release(&b);
		return vf_error_set(err, VF_ENOMEM, "plan.md: out of memory");
	}
	p->plan_md = vf_buf_detach(&b, &p->plan_md_len);
	if (!p->plan_md)
		return vf_error_set(err, VF_ENOMEM, "plan.md: out of memory");
	return VF_OK;
}

/* ---- the plan ------------------------------------------------------------- */

void vf_plan_init(struct vf_plan *p)
{
	memset(p, 0, sizeof *p);
	vf_check_init(&p->check);
}

void vf_plan_release(struct vf_plan *p)
{
	if (!p)
		return;
	vf_yamldoc_free(p->config);
	vf_check_release(&p->check);
	free(p->plan_md);
	memset(p, 0, sizeof *p);
}

static void describe_gpus(struct vf_plan *p, const struct vf_gpu_set *gpus)
{
	const struct vf_gpu *g = &gpus->gpus[p->tier.smallest >= 0 && (size_t)p->tier.smallest < gpus->count
						     ? p->tier.smallest
						     : 0];
	p->gpu_count = (int)gpus->count;
	p->gpu_gb = p->tier.per_gpu_gb;
	snprintf(p->gpu_name, sizeof p->gpu_name, "%s", g->name[0] ? g->name : "unknown GPU");
	snprintf(p->gpu_catalog_id, sizeof p->gpu_catalog_id, "%s", g->catalog_id);
	p->gpu_spec = g->catalog_id[0] ? vf_gpu_catalog_find(g->catalog_id) : NULL;
}

/* Each --resolution-buckets bucket under the trainer's rule for video
 * sizes (the profile's configs.json "video_dims": width and height
 * multiples of 32, frames % 8 == 1), as plan.md states it and the
 * trainer's preprocessing enforces it. */
static vf_status buckets_follow_rule(const char *buckets, const cJSON *cfg, struct vf_error *err)
{
	const cJSON *vd = cJSON_GetObjectItemCaseSensitive(cfg, "video_dims");
	int64_t mult = 32, mod = 8, rem = 1;
	vf_json_get_i64(vd, "multiple", &mult);
	vf_json_get_i64(vd, "frames_mod", &mod);
	vf_json_get_i64(vd, "frames_rem", &rem);
	for (const char *q = buckets; mult > 0 && mod > 0 && *q;) {
		size_t n = strcspn(q, ";");
		int w = 0, h = 0, f = 0;
		if (sscanf(q, "%dx%dx%d", &w, &h, &f) == 3 && (w % mult || h % mult || f % mod != rem))
			return vf_error_set(err, VF_EUSAGE, "--resolution-buckets: bucket '%.*s': %s %d not allowed "
					    "(the trainer's rule: width and height multiples of "
					    "%lld, frames %% %lld == %lld)", (int)n, q,
					    w % mult ? "width" : h % mult ? "height" : "frames",
					    w % mult ? w : h % mult ? h : f, (long long)mult, (long long)mod,
					    (long long)rem);
		q += n + (q[n] == ';');
	}
	return VF_OK;
}

static vf_status plan_names(struct ctx *c, const struct vf_gpu_set *gpus, struct vf_error *err)
{
	const struct vf_plan_opts *o = c->o;
	struct vf_plan *p = c->p;
	vf_status st = VF_OK;
	(void)gpus;
	/* Names. */
	if (o->dataset && !name_ok(o->dataset)) {
		st = vf_error_set(err, VF_EUSAGE, "--dataset '%s': use letters, digits, '-', '_' and '.'",
				  o->dataset);
		return st;
	}
	if (o->run_name && !name_ok(o->run_name)) {
		st = vf_error_set(err, VF_EUSAGE, "--run-name '%s': use letters, digits, '-', '_' and '.'",
				  o->run_name);
		return st;
	}
	if (o->training_mode && strcmp(o->training_mode, "lora") != 0 && strcmp(o->training_mode, "full") != 0) {
		st = vf_error_set(err, VF_EUSAGE, "--training-mode '%s': expected lora or full", o->training_mode);
		return st;
	}
	const char *ds = o->dataset ? o->dataset : vf_json_get_str(c->cfg, "default_dataset");
	snprintf(p->dataset, sizeof p->dataset, "%s", ds ? ds : "dataset");
	if (!o->dataset)
		ASSUME(c, "Dataset name: `%s` (none given; --dataset NAME names the run).", p->dataset);
	/* the training size: the largest resolution bucket the dataset is
	 * preprocessed into; never the validation video_dims */
	if (o->resolution_buckets) {
		if ((st = vf_plan_largest_bucket(o->resolution_buckets, p->train_dims, err)) ||
		    (st = buckets_follow_rule(o->resolution_buckets, c->cfg, err)))
			return st;
	} else {
		p->train_dims[0] = 960; /* the trainer's quick-start (docs/quick-start.md) */
		p->train_dims[1] = 544;
		p->train_dims[2] = 49;
		p->train_dims_assumed = true;
		ASSUME(c, "Training resolution: %dx%dx%d, the trainer quick-start's resolution bucket (none "
			  "given; --resolution-buckets \"WxHxF;...\" as passed to the preprocessing).",
		       p->train_dims[0], p->train_dims[1], p->train_dims[2]);
	}
	return st;
}

static vf_status plan_tier(struct ctx *c, const struct vf_gpu_set *gpus, struct vf_error *err)
{
	const struct vf_plan_opts *o = c->o;
	struct vf_plan *p = c->p;
	const char *trainer = o->trainer ? o->trainer : VF_PROFILE_DEFAULT;
	vf_status st = VF_OK;
	/* GPUs and tier. */
	if (!gpus || gpus->count == 0) {
		st = vf_error_set(err, VF_ERR, "no GPU found to plan for; pass --gpu SPEC (e.g. h100-80gb, "
					       "rtx-5090:2) to plan for GPUs that are not here");
		return st;
	}
	st = vf_tier_decide(gpus, trainer, o->mode, &p->tier, err);
	if (st != VF_OK)
		return st;
	snprintf(p->mode, sizeof p->mode, "%s", p->tier.mode[0] ? p->tier.mode : (o->mode ? o->mode : "t2v"));
	if (!o->mode)
		ASSUME(c, "Mode: `%s` (the trainer profile's default; --mode MODE, one of the checkout's "
			   "config families: vramfit plan --list-modes).", p->mode);
	describe_gpus(p, gpus);
	for (size_t i = 1; i < gpus->count; i++)
		if (strcmp(gpus->gpus[i].name, gpus->gpus[0].name) != 0) {
			WARN(c, "The GPUs are not all the same model: the smallest (%s, %dGB) decides the tier, "
				 "and the plan treats all %d as that model.",
			     p->gpu_name, p->gpu_gb, p->gpu_count);
			break;
		}
	if (p->tier.gated && !o->accept_risk) {
		p->block = VF_PLAN_GATED;
		snprintf(p->block_msg, sizeof p->block_msg, "%s", p->tier.gate_message);
		st = VF_OK;
		return st;
	}
	if (p->tier.gated)
		ASSUME(c, "Below the trainer's 32 GB minimum (%s x %d, %dGB): proceeding anyway with the "
			   "low-VRAM config at your own risk (--accept-risk); it may run out of memory, and no "
			   "tested config exists below 32 GB.",
		       p->gpu_name, p->gpu_count, p->gpu_gb);
	if (p->tier.gap)
		ASSUME(c, "%s", p->tier.note);
	if (p->simulated)
		ASSUME(c, "GPUs: simulated (%s x %d) with --gpu; nothing was probed.", p->gpu_name,
		       p->gpu_count);
	return st;
}

static vf_status plan_trainer(struct ctx *c, const struct vf_gpu_set *gpus, struct vf_error *err)
{
	const struct vf_plan_opts *o = c->o;
	struct vf_plan *p = c->p;
	vf_status st = VF_OK;
	(void)gpus;
	/* Trainer, shipped config, models. */
	st = find_trainer_dir(c, err);
	if (st != VF_OK)
		return st;
	if (!o->trainer_dir)
		ASSUME(c, "Trainer directory: %s (%s; --trainer-dir DIR).", p->trainer_dir, p->trainer_dir_from);
	st = vf__plan_know_trainer(p, c->cfg, err);
	if (st != VF_OK)
		return st;
	st = vf__plan_choose_config(p, c->cfg, err);
	if (st != VF_OK)
		return st;
	if (p->ndeltas)
		ASSUME(c, "The checkout ships no %s for the %s: starting from %s with the trainer's own "
			   "low-VRAM choices (%s), applied where the key exists.",
		       p->tier.config, p->tier.name, strrchr(p->shipped_config, '/') + 1, p->deltas_from);
	struct stat sst;
	if (stat(p->shipped_config, &sst) != 0 || !S_ISREG(sst.st_mode)) {
		int e = errno;
		bool there = stat(p->shipped_config, &sst) == 0;
		st = vf_error_set(err, VF_ERR, "%s: the shipped config for the %s (%s) %s",
				  p->shipped_config, p->tier.name, p->mode,
				  there ? (S_ISDIR(sst.st_mode) ? "is a directory" : "is not a regular file")
				  : e == ENOENT ? "is missing"
						: e == ELOOP ? "is a symlink loop" : "cannot be read");
		return st;
	}
	st = find_models(c, err);
	if (st != VF_OK)
		return st;
	return st;
}

static vf_status plan_run_dir(struct ctx *c, const struct vf_gpu_set *gpus, struct vf_error *err)
{
	const struct vf_plan_opts *o = c->o;
	struct vf_plan *p = c->p;
	vf_status st = VF_OK;
	(void)gpus;
	/* Workspace and run directory. */
	st = choose_workspace(c, err);
	if (st != VF_OK)
		return st;
	if (o->run_name) {
		snprintf(p->run_name, sizeof p->run_name, "%s", o->run_name);
	} else {
		time_t now = o->now ? o->now : time(NULL);
		struct tm tm;
		localtime_r(&now, &tm);
		char stamp[32];
		strftime(stamp, sizeof stamp, "%Y%m%d-%H%M", &tm);
		const char *pat = vf_json_get_str(c->cfg, "run_name");
		const char *pairs[] = {"mode", p->mode, "dataset", p->dataset, "YYYYMMDD-HHMM", stamp, NULL};
		subst(pat ? pat : "{mode}-{dataset}-{YYYYMMDD-HHMM}", p->run_name, sizeof p->run_name, pairs);
		ASSUME(c, "Run name: `%s` (<mode>-<dataset>-<YYYYMMDD-HHMM>; --run-name NAME).", p->run_name);
	}
	snprintf(p->run_dir, sizeof p->run_dir, "%.*s/%s", VF_PLAN_PATH - 130, p->workspace, p->run_name);
	const cJSON *files = cJSON_GetObjectItemCaseSensitive(c->cfg, "run_files");
	const char *cfgname = vf_json_get_str(files, "config"), *planname = vf_json_get_str(files, "plan");
	snprintf(p->config_path, sizeof p->config_path, "%.*s/%s", VF_PLAN_PATH - 64, p->run_dir,
		 cfgname ? cfgname : "config.yaml");
	snprintf(p->plan_path, sizeof p->plan_path, "%.*s/%s", VF_PLAN_PATH - 64, p->run_dir,
		 planname ? planname : "plan.md");
	const cJSON *dirs;
	cJSON_ArrayForEach(dirs, cJSON_GetObjectItemCaseSensitive(c->cfg, "run_dirs"))
	{
		if (cJSON_IsString(dirs) && p->ndirs < 8 && name_ok(dirs->valuestring))
			snprintf(p->dirs[p->ndirs++], 64, "%s", dirs->valuestring);
	}
	struct stat lst;
	if (lstat(p->run_dir, &lst) == 0 && S_ISLNK(lst.st_mode))
		return vf_error_set(err, VF_ERR, "%s: the run directory is a symbolic link; vramfit writes only inside "
				    "a real run directory: choose another --run-name, or remove the link",
				    p->run_dir);
	if (access(p->run_dir, F_OK) == 0) {
		p->exists = true;
		survey_existing(c);
		if (!o->reuse) {
			p->block = VF_PLAN_EXISTS;
			snprintf(p->block_msg, sizeof p->block_msg,
				 "%s already exists (%d entr%s%s); it is never overwritten: choose another "
				 "--run-name, or pass --reuse to plan into it",
				 p->run_dir, p->nexisting, p->nexisting == 1 ? "y" : "ies",
				 p->nresume ? ", with checkpoints to resume from" : "");
			st = VF_OK;
			return st;
		}
		ASSUME(c, "Reusing the existing run directory %s (--reuse): config.yaml and plan.md are "
			   "rewritten, everything else there is kept.",
		       p->run_dir);
	}
	return st;
}

static vf_status plan_config(struct ctx *c, const struct vf_gpu_set *gpus, struct vf_error *err)
{
	const struct vf_plan_opts *o = c->o;
	struct vf_plan *p = c->p;
	const char *trainer = o->trainer ? o->trainer : VF_PROFILE_DEFAULT;
	vf_status st = VF_OK;
	(void)gpus;
	/* The run config, rules, launch, check, estimate. */
	st = make_config(c, err);
	if (st != VF_OK)
		return st;
	if ((st = make_launch(c, err)) != VF_OK ||
	    (st = vf__plan_preprocess(p, c->cfg, o->resolution_buckets, o->trigger, err)) != VF_OK)
		return st;
	p->ndata_dirs = (int)vf_checkout_data_dirs(p->config, c->cfg, p->data_dirs, 16);
	for (int i = 0; i < p->ndata_dirs; i++)
		p->data_dirs[i].node = NULL; /* the document changes no more, but keep nothing borrowed */
	ASSUME(c, "Every other setting as shipped in %s (optimizer, precision, quantization, LoRA, "
		   "validation): autotune may change them after the sanity check.",
	       strrchr(p->shipped_config, '/') + 1);
	if (!o->trigger)
		ASSUME(c, "Trigger word: none (the captions are used as they are).");
	st = vf_check_config(p->config, trainer, p->trainer_dir, &p->check, err);
	/* what is checked is the run's config.yaml, not the shipped file it came from */
	snprintf(p->check.config, sizeof p->check.config, "%s", p->config_path);
	if (st != VF_OK)
		return st;
	make_estimate(c);
	if (p->memory_gate && !o->accept_risk) {
		p->block = VF_PLAN_GATED;
		return VF_OK;
	}
	vf__plan_predict_sweep(p, c->cfg);
	if (p->has_estimate && !p->gpu_spec)
		snprintf(p->estimate_note, sizeof p->estimate_note, "the GPU is not in the catalog");
	st = render(c, err);
	return st;
}

vf_status vf_plan_make(const struct vf_plan_opts *o, const struct vf_gpu_set *gpus,
		       struct vf_plan *p, struct vf_error *err)
{
	struct ctx c = {o, p, NULL, NULL};
	const char *trainer = o->trainer ? o->trainer : VF_PROFILE_DEFAULT;
	snprintf(p->trainer, sizeof p->trainer, "%s", trainer);
	p->simulated = o->simulated;
	vf_status st = vf_profile_part(trainer, "configs", &c.cfg, err);
	if (st != VF_OK)
		return st;
	if ((st = vf_profile_part(trainer, "sweep", &c.sweep, err)) != VF_OK ||
	    (st = vf_run_sample_dir(c.sweep, p->sample_dir, sizeof p->sample_dir, err)) != VF_OK) {
		cJSON_Delete(c.cfg);
		cJSON_Delete(c.sweep);
		return st;
	}
	static vf_status (*const stages[])(struct ctx *, const struct vf_gpu_set *, struct vf_error *) = {
		plan_names, plan_tier, plan_trainer, plan_run_dir, plan_config};
	for (size_t i = 0; i < sizeof stages / sizeof stages[0] && st == VF_OK && p->block == VF_PLAN_GO; i++)
		st = stages[i](&c, gpus, err);
	cJSON_Delete(c.cfg);
	cJSON_Delete(c.sweep);
	return st;
}

vf_status vf_plan_list_modes(const struct vf_plan_opts *o, struct vf_trainer_modes *out, char *dir, size_t n,
			     struct vf_error *err)
{
	memset(out, 0, sizeof *out);
	struct vf_plan *p = calloc(1, sizeof *p);
	if (!p)
		return vf_error_set(err, VF_ENOMEM, "out of memory");
	struct ctx c = {o, p, NULL, NULL};
	vf_status st = vf_profile_part(o->trainer ? o->trainer : VF_PROFILE_DEFAULT, "configs", &c.cfg, err);
	if (st == VF_OK)
		st = find_trainer_dir(&c, err);
	if (st == VF_OK) {
		snprintf(dir, n, "%s", p->trainer_dir);
		st = vf_checkout_modes(p->trainer_dir, c.cfg, out, err);
	}
	cJSON_Delete(c.cfg);
	free(p);
	return st;
}

static vf_status mkdir_one(const char *path, struct vf_error *err)
{
	if (mkdir(path, 0755) != 0 && errno != EEXIST)
		return vf_error_set(err, VF_ERR, "%s: cannot create directory: %s", path, strerror(errno));
	if (!is_dir(path))
		return vf_error_set(err, VF_ERR, "%s: exists and is not a directory", path);
	return VF_OK;
}

vf_status vf_plan_write(const struct vf_plan *p, struct vf_error *err)
{
	if (p->block != VF_PLAN_GO)
		return vf_error_set(err, VF_ERR, "%s", p->block_msg);
	if (!p->config || !p->plan_md)
		return vf_error_set(err, VF_EUSAGE, "the plan was not made");
	vf_status st = VF_OK;
	if (p->workspace_created)
		st = mkdir_one(p->workspace, err);
	if (st != VF_OK)
		return st;
	/* the run directory is made here and never followed when a link;
	 * every file in it opened relative to it (lib/base/rundir.c) */
	struct vf_rundir rd;
	st = vf_rundir_open(&rd, p->run_dir, VF_RUNDIR_CREATE | (p->exists ? VF_RUNDIR_EXIST_OK : 0), err);
	/* every output checked before any is written: a refusal (one of them
	 * a link) leaves the run as it was, not half rewritten */
	const char *outs[] = {strrchr(p->config_path, '/') + 1, strrchr(p->plan_path, '/') + 1, "plan.json"};
	for (size_t i = 0; i < sizeof outs / sizeof outs[0] && st == VF_OK; i++)
		st = vf_rundir_check_replace(&rd, outs[i], err);
	for (int i = 0; i < p->ndirs && st == VF_OK; i++)
		st = vf_rundir_mkdir(&rd, p->dirs[i], err);
	size_t len;
	const char *text = vf_yamldoc_text(p->config, &len);
	if (st == VF_OK)
		st = vf_rundir_write_atomic(&rd, strrchr(p->config_path, '/') + 1, text, len, 0644, err);
	if (st == VF_OK)
		st = vf_rundir_write_atomic(&rd, strrchr(p->plan_path, '/') + 1, p->plan_md, p->plan_md_len,
					    0644, err);
	/* plan.json: the plan --json object, what vramfit run carries out (the
	 * preprocessing and launch commands exactly as plan.md prints them) */
	cJSON *j = st == VF_OK ? vf_plan_to_json(p) : NULL;
	char *jt = j ? cJSON_Print(j) : NULL;
	if (st == VF_OK)
		st = jt ? vf_rundir_write_atomic(&rd, "plan.json", jt, strlen(jt), 0644, err)
			: vf_error_set(err, VF_ENOMEM, "out of memory");
	cJSON_free(jt);
	cJSON_Delete(j);
	vf_rundir_close(&rd);
	return st;
}

/* plan --json's "estimate": peak, step time, total time and the cost
 * plan.md prints (plan_cost), with what it is made of. */
static void json_estimate(cJSON *o, const struct vf_plan *p)
{
	cJSON *e = cJSON_AddObjectToObject(o, "estimate");
	cJSON_AddBoolToObject(e, "available", p->has_estimate);
	cJSON_AddBoolToObject(e, "is_estimate", true);
	if (p->has_estimate) {
		cJSON_AddStringToObject(e, "model", p->model_id);
		cJSON_AddNumberToObject(e, "peak_bytes", (double)p->estimate.peak_bytes);
		if (p->gpu_spec)
			cJSON_AddBoolToObject(e, "fits", vf_estimate_fits(&p->estimate, p->gpu_spec, NULL));
		if (p->estimate.step_seconds > 0) {
			cJSON_AddNumberToObject(e, "step_seconds", p->estimate.step_seconds);
			cJSON_AddNumberToObject(e, "total_seconds", p->estimate.step_seconds * (double)p->steps);
		} else {
			cJSON_AddNullToObject(e, "step_seconds");
		}
	} else {
		cJSON_AddStringToObject(e, "note", p->estimate_note);
	}
	if (p->has_estimate) { /* the cost, and what it is made of */
		double usd = plan_cost(p);
		bool priced = p->gpu_spec && p->gpu_spec->price_usd_hour > 0;
		cJSON_AddItemToObject(e, "cost_usd", usd >= 0 ? cJSON_CreateNumber(usd) : cJSON_CreateNull());
		cJSON_AddItemToObject(e, "price_usd_per_gpu_hour",
				      priced ? cJSON_CreateNumber(p->gpu_spec->price_usd_hour) : cJSON_CreateNull());
		cJSON_AddNumberToObject(e, "gpu_count", p->gpu_count);
	}
}

/* plan --json: the status, and a failed self-check's failures. */
static void json_status(cJSON *o, const struct vf_plan *p)
{
	static const char *const blocks[] = {"go", "gated", "exists"};
	bool check_failed = p->block == VF_PLAN_GO && p->check.failures > 0;
	/* A plan whose self-check fails is never go: the failures come first. */
	cJSON_AddStringToObject(o, "status", check_failed ? "check-failed" : blocks[p->block]);
	if (p->block != VF_PLAN_GO)
		cJSON_AddStringToObject(o, "message", p->block_msg);
	if (check_failed) {
		char m[256];
		snprintf(m, sizeof m, "the self-check of %s fails (%zu failure%s): the plan is not go",
			 p->config_path, p->check.failures, p->check.failures == 1 ? "" : "s");
		cJSON_AddStringToObject(o, "message", m);
		cJSON *f = cJSON_AddArrayToObject(o, "check_failures");
		for (size_t i = 0; i < p->check.n; i++) {
			const struct vf_check_item *it = &p->check.items[i];
			if (it->level != VF_CHECK_FAIL)
				continue;
			cJSON *x = cJSON_CreateObject();
			cJSON_AddStringToObject(x, "key", it->key);
			cJSON_AddNumberToObject(x, "line", (double)it->line);
			cJSON_AddStringToObject(x, "rule", it->rule);
			cJSON_AddItemToArray(f, x);
		}
	}
}

/* plan --json: the tier and the GPUs it was decided for. */
static void json_tier_gpus(cJSON *o, const struct vf_plan *p)
{
	cJSON *t = cJSON_AddObjectToObject(o, "tier");
	cJSON_AddStringToObject(t, "name", p->tier.name);
	cJSON_AddBoolToObject(t, "gated", p->tier.gated);
	cJSON_AddNumberToObject(t, "per_gpu_gb", p->tier.per_gpu_gb);
	/* the file the plan started from (issue 22): the tier's wish when the
	 * checkout ships it, else the mode's standard config the deltas went into */
	cJSON_AddStringToObject(t, "config", p->shipped_config[0] ? p->shipped_config : p->tier.config_path);
	cJSON_AddStringToObject(t, "wanted", p->tier.config);
	if (p->ndeltas)
		cJSON_AddStringToObject(t, "low_vram_from", p->deltas_from);
	cJSON_AddStringToObject(t, "note", p->tier.note);
	cJSON *g = cJSON_AddObjectToObject(o, "gpus");
	cJSON_AddStringToObject(g, "name", p->gpu_name);
	cJSON_AddNumberToObject(g, "count", p->gpu_count);
	cJSON_AddNumberToObject(g, "gb", p->gpu_gb);
	if (p->gpu_catalog_id[0])
		cJSON_AddStringToObject(g, "catalog_id", p->gpu_catalog_id);
	else
		cJSON_AddNullToObject(g, "catalog_id");
	cJSON_AddBoolToObject(g, "simulated", p->simulated);
	char hw[192];
	snprintf(hw, sizeof hw, "%s x %d, %dGB", p->gpu_name, p->gpu_count, p->gpu_gb);
	cJSON_AddStringToObject(g, "summary", hw);
}

/* plan --json of a go plan: its files, launch and preprocessing, the
 * config's patches, warnings, assumptions, check, estimate and sweep. */
static void json_go(cJSON *o, const struct vf_plan *p)
{
	cJSON_AddStringToObject(o, "config", p->config_path);
	cJSON_AddStringToObject(o, "plan", p->plan_path);
	cJSON_AddStringToObject(o, "training_mode", p->training_mode);
	cJSON_AddNumberToObject(o, "steps", (double)p->steps);
	cJSON_AddNumberToObject(o, "effective_batch", (double)p->effective_batch);
	cJSON *l = cJSON_AddObjectToObject(o, "launch");
	cJSON_AddStringToObject(l, "cwd", p->launch_cwd);
	cJSON_AddStringToObject(l, "command", p->launch);
	cJSON_AddStringToObject(l, "line", p->launch_line);
	cJSON *pp = cJSON_AddObjectToObject(o, "preprocess");
	const char *const pre[] = {"dataset", p->preprocess_dataset, "resolution_buckets", p->preprocess_buckets,
				   "command", p->preprocess, "line", p->preprocess_line};
	for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i += 2) /* null: the profile names no command */
		cJSON_AddItemToObject(pp, pre[i], p->preprocess[0] ? cJSON_CreateString(pre[i + 1]) : cJSON_CreateNull());
	cJSON *pa = cJSON_AddArrayToObject(o, "patches");
	for (int i = 0; i < p->npatches; i++) {
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "key", p->patches[i].key);
		cJSON_AddStringToObject(x, "before", p->patches[i].before);
		cJSON_AddStringToObject(x, "after", p->patches[i].after);
		cJSON_AddStringToObject(x, "reason", p->patches[i].reason);
		cJSON_AddItemToArray(pa, x);
	}
	cJSON *w = cJSON_AddArrayToObject(o, "warnings");
	for (int i = 0; i < p->nwarnings; i++)
		cJSON_AddItemToArray(w, cJSON_CreateString(p->warnings[i]));
	cJSON *as = cJSON_AddArrayToObject(o, "assumptions");
	for (int i = 0; i < p->nassumptions; i++)
		cJSON_AddItemToArray(as, cJSON_CreateString(p->assumptions[i]));
	cJSON_AddItemToObject(o, "check", vf_check_to_json(&p->check));
	vf__plan_json_trainer(o, p);
	json_estimate(o, p);
	cJSON_AddItemToObject(o, "predicted_sweep", vf__plan_json_sweep(p));
}

cJSON *vf_plan_to_json(const struct vf_plan *p)
{
	cJSON *o = cJSON_CreateObject();
	json_status(o, p);
	cJSON_AddStringToObject(o, "trainer", p->trainer);
	cJSON_AddStringToObject(o, "mode", p->mode);
	cJSON_AddStringToObject(o, "dataset", p->dataset);
	cJSON_AddStringToObject(o, "run_name", p->run_name);
	cJSON_AddStringToObject(o, "run_dir", p->run_dir);
	cJSON_AddStringToObject(o, "workspace", p->workspace);
	json_tier_gpus(o, p);
	if (p->block == VF_PLAN_GATED) { /* which gate: the tier's minimum, or the estimate */
		cJSON_AddStringToObject(o, "gate", p->memory_gate ? "memory" : "tier");
		if (p->memory_gate) /* the figures the gate read */
			json_estimate(o, p);
		return o;
	}
	cJSON_AddStringToObject(o, "trainer_dir", p->trainer_dir);
	cJSON_AddStringToObject(o, "shipped_config", p->shipped_config);
	cJSON_AddStringToObject(o, "model", p->model);
	cJSON_AddStringToObject(o, "text_encoder", p->text_encoder);
	if (p->exists) {
		cJSON *ex = cJSON_AddArrayToObject(o, "existing");
		for (int i = 0; i < p->nexisting; i++)
			cJSON_AddItemToArray(ex, cJSON_CreateString(p->existing[i]));
		cJSON *rs = cJSON_AddArrayToObject(o, "resume_candidates");
		for (int i = 0; i < p->nresume; i++)
			cJSON_AddItemToArray(rs, cJSON_CreateString(p->resume[i]));
	}
	if (p->block != VF_PLAN_GO)
		return o;
	json_go(o, p);
	return o;
}
