/* checkout.c - read the user's trainer checkout (see checkout.h): its
 * version from .git or pyproject.toml, its config families, a config's data
 * directories and the low-VRAM deltas between two of its configs. */
#include "vramfit/trainer/checkout.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vramfit/base/json.h"

/* fopen for reading, only for a regular file (never blocks on a FIFO). */
FILE *vf__fopen_regular(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = 0;
		return NULL;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	FILE *f = fdopen(fd, "r");
	if (!f)
		close(fd);
	return f;
}

/* ---- version ------------------------------------------------------------- */

/* First line of path into out (trailing blanks cut); false when unreadable. */
static bool first_line(const char *path, char *out, size_t n)
{
	FILE *f = vf__fopen_regular(path);
	if (!f)
		return false;
	bool ok = fgets(out, (int)n, f) != NULL;
	fclose(f);
	if (ok)
		out[strcspn(out, "\r\n")] = '\0';
	return ok;
}

/* The git directory for dir or one of its parents: dir/.git, or the path a
 * `.git` file's "gitdir:" names. */
static bool git_dir(const char *dir, char *out, size_t n)
{
	char cur[1024];
	snprintf(cur, sizeof cur, "%s", dir);
	for (int up = 0; up <= 2; up++) { /* the checkout, or its monorepo two up (packages/<name>) */
		char g[1100];
		struct stat st;
		snprintf(g, sizeof g, "%s/.git", cur);
		if (stat(g, &st) == 0 && S_ISDIR(st.st_mode)) {
			snprintf(out, n, "%s", g);
			return true;
		}
		char line[1024];
		if (stat(g, &st) == 0 && S_ISREG(st.st_mode) && first_line(g, line, sizeof line) &&
		    strncmp(line, "gitdir: ", 8) == 0) {
			if (line[8] == '/')
				snprintf(out, n, "%s", line + 8);
			else
				snprintf(out, n, "%s/%s", cur, line + 8);
			return true;
		}
		size_t l = strlen(cur);
		if (l + 4 >= sizeof cur)
			return false;
		strcat(cur, "/..");
	}
	return false;
}

/* The commit a ref names: gitdir/<ref> (or the common dir's), else packed-refs. */
static bool resolve_ref(const char *gd, const char *ref, char *sha, size_t n)
{
	char common[1100], path[2300], line[1200];
	snprintf(common, sizeof common, "%s", gd);
	snprintf(path, sizeof path, "%s/commondir", gd);
	if (first_line(path, line, sizeof line))
		snprintf(common, sizeof common, "%s%s%s", line[0] == '/' ? "" : gd, line[0] == '/' ? "" : "/", line);
	const char *dirs[] = {gd, common};
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof path, "%s/%s", dirs[i], ref);
		if (first_line(path, line, sizeof line) && strlen(line) >= 7) {
			snprintf(sha, n, "%s", line);
			return true;
		}
	}
	snprintf(path, sizeof path, "%s/packed-refs", common);
	FILE *f = vf__fopen_regular(path);
	bool found = false;
	while (f && !found && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\r\n")] = '\0';
		char *sp = strchr(line, ' ');
		if (line[0] != '#' && line[0] != '^' && sp && strcmp(sp + 1, ref) == 0) {
			*sp = '\0';
			snprintf(sha, n, "%s", line);
			found = true;
		}
	}
	if (f)
		fclose(f);
	return found;
}

static bool git_version(const char *dir, char *out, size_t n)
{
	char gd[1100], head[1200], sha[128];
	if (!git_dir(dir, gd, sizeof gd))
		return false;
	char path[1200];
	snprintf(path, sizeof path, "%s/HEAD", gd);
	if (!first_line(path, head, sizeof head))
		return false;
	if (strncmp(head, "ref: ", 5) == 0) {
		const char *ref = head + 5;
		const char *br = strncmp(ref, "refs/heads/", 11) == 0 ? ref + 11 : ref;
		if (!resolve_ref(gd, ref, sha, sizeof sha))
			snprintf(out, n, "git (branch %s, no commit yet)", br);
		else
			snprintf(out, n, "git %.12s (branch %s)", sha, br);
		return true;
	}
	snprintf(out, n, "git %.12s (detached)", head);
	return true;
}

/* field = "x" in pyproject.toml's [project] (or [tool.poetry]) table. */
static bool pyproject_field(const char *dir, const char *field, char *out, size_t n)
{
	char path[1100], line[512];
	snprintf(path, sizeof path, "%s/pyproject.toml", dir);
	FILE *f = vf__fopen_regular(path);
	if (!f)
		return false;
	size_t fl = strlen(field);
	bool in_project = false, found = false;
	while (!found && fgets(line, sizeof line, f)) {
		char *p = line + strspn(line, " \t");
		if (*p == '[')
			in_project = strncmp(p, "[project]", 9) == 0 || strncmp(p, "[tool.poetry]", 13) == 0;
		else if (in_project && strncmp(p, field, fl) == 0 && strchr(" \t=", p[fl]) && strchr(p, '"')) {
			char *q = strchr(p, '"') + 1, *e = strchr(q, '"');
			if (e) {
				snprintf(out, n, "%.*s", (int)(e - q), q);
				found = true;
			}
		}
	}
	fclose(f);
	return found;
}

void vf_checkout_version(const char *dir, char *out, size_t n)
{
	char v[256];
	if (dir && *dir && git_version(dir, out, n))
		return;
	if (dir && *dir && pyproject_field(dir, "version", v, sizeof v))
		snprintf(out, n, "pyproject %s", v);
	else
		snprintf(out, n, "unknown (no .git, no pyproject.toml version)");
}

void vf_checkout_describe(const char *dir, char *out, size_t n)
{
	char name[256], version[200];
	const char *base = dir ? strrchr(dir, '/') : NULL;
	if (!dir || !pyproject_field(dir, "name", name, sizeof name))
		snprintf(name, sizeof name, "%s", base && base[1] ? base + 1 : dir ? dir : "?");
	vf_checkout_version(dir, version, sizeof version);
	snprintf(out, n, "%s, %s", name, version);
}

/* ---- modes ------------------------------------------------------------------ */

void vf_modes_release(struct vf_trainer_modes *m)
{
	if (!m)
		return;
	free(m->v);
	memset(m, 0, sizeof *m);
}

const struct vf_trainer_mode *vf_modes_find(const struct vf_trainer_modes *m, const char *name)
{
	for (size_t i = 0; m && name && i < m->n; i++)
		if (strcmp(m->v[i].name, name) == 0)
			return &m->v[i];
	return NULL;
}

/* The {mode} in file by pattern "pre{mode}post"; false when it does not match. */
static bool match_pattern(const char *pattern, const char *file, char *mode, size_t n)
{
	const char *ph = pattern ? strstr(pattern, "{mode}") : NULL;
	if (!ph)
		return false;
	size_t pre = (size_t)(ph - pattern), post = strlen(ph + 6), fl = strlen(file);
	if (fl <= pre + post || strncmp(file, pattern, pre) != 0 || strcmp(file + fl - post, ph + 6) != 0)
		return false;
	size_t ml = fl - pre - post;
	if (ml >= n)
		return false;
	memcpy(mode, file + pre, ml);
	mode[ml] = '\0';
	return strchr(mode, '.') == NULL;
}

static struct vf_trainer_mode *mode_slot(struct vf_trainer_modes *m, size_t *alloc, const char *name)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->v[i].name, name) == 0)
			return &m->v[i];
	if (m->n == *alloc) {
		size_t na = *alloc ? *alloc * 2 : 16;
		struct vf_trainer_mode *nv = realloc(m->v, na * sizeof *nv);
		if (!nv)
			return NULL;
		m->v = nv;
		*alloc = na;
	}
	struct vf_trainer_mode *md = &m->v[m->n++];
	memset(md, 0, sizeof *md);
	snprintf(md->name, sizeof md->name, "%s", name);
	return md;
}

/* The first comment line of the file's header that says something. */
static void header_comment(const char *path, char *out, size_t n)
{
	FILE *f = vf__fopen_regular(path);
	char line[512];
	out[0] = '\0';
	for (int i = 0; f && !out[0] && i < 40 && fgets(line, sizeof line, f); i++) {
		line[strcspn(line, "\r\n")] = '\0';
		if (line[0] != '#') {
			if (line[0])
				break;
			continue;
		}
		char *p = line + strspn(line, "# \t=-");
		if (*p)
			snprintf(out, n, "%s", p);
	}
	if (f)
		fclose(f);
}

/* "flexible: video generated (latents), audio conditioning (audio_latents);
 * video conditions reference, first_frame" from the config's strategy. */
static void strategy_summary(const char *path, const cJSON *sk, char *out, size_t n)
{
	struct vf_yamldoc *d = NULL;
	struct vf_error e = {0};
	out[0] = '\0';
	const char *key = vf_json_get_str(sk, "key");
	FILE *f = vf__fopen_regular(path);
	if (f)
		fclose(f);
	if (!key || !f || vf_yamldoc_load_file(path, &d, &e) != VF_OK)
		return;
	const struct vf_yaml_node *ts = vf_yamldoc_find(d, key);
	const char *nm = vf_json_get_str(sk, "name"), *gen = vf_json_get_str(sk, "generated");
	const char *cond = vf_json_get_str(sk, "conditions"), *ct = vf_json_get_str(sk, "condition_type");
	const struct vf_yaml_node *name = NULL;
	bool first = true;
	for (size_t i = 0; ts && nm && i < vf_yaml_node_count(ts); i++)
		if (vf_yaml_node_key(ts, i) && strcmp(vf_yaml_node_key(ts, i), nm) == 0)
			name = vf_yaml_node_child(ts, i);
	size_t l = (size_t)snprintf(out, n, "%s", name && vf_yaml_node_str(name) ? vf_yaml_node_str(name) : "(default)");
	for (size_t i = 0; ts && i < vf_yaml_node_count(ts) && l < n; i++) {
		const struct vf_yaml_node *m = vf_yaml_node_child(ts, i);
		bool g;
		char sub[160];
		snprintf(sub, sizeof sub, "%s.%s.%s", key, vf_yaml_node_key(ts, i), gen ? gen : "");
		if (vf_yaml_node_kind(m) != VF_YAML_MAP || !gen || vf_yamldoc_get_bool(d, sub, &g, NULL) != VF_OK)
			continue;
		l += (size_t)snprintf(out + l, n - l, "%s%s %s", first ? ": " : ", ", vf_yaml_node_key(ts, i),
				      g ? "generated" : "conditioning");
		first = false;
		snprintf(sub, sizeof sub, "%s.%s.%s", key, vf_yaml_node_key(ts, i), cond ? cond : "");
		const struct vf_yaml_node *cs = cond ? vf_yamldoc_find(d, sub) : NULL;
		for (size_t c = 0; c < vf_yaml_node_count(cs) && l < n; c++) {
			const struct vf_yaml_node *cn = vf_yaml_node_child(cs, c);
			for (size_t k = 0; ct && k < vf_yaml_node_count(cn) && l < n; k++)
				if (vf_yaml_node_key(cn, k) && strcmp(vf_yaml_node_key(cn, k), ct) == 0 &&
				    vf_yaml_node_str(vf_yaml_node_child(cn, k)))
					l += (size_t)snprintf(out + l, n - l, "%s%s", c ? "+" : " from ",
							      vf_yaml_node_str(vf_yaml_node_child(cn, k)));
		}
	}
	vf_yamldoc_free(d);
}

static int cmp_mode(const void *a, const void *b)
{
	return strcmp(((const struct vf_trainer_mode *)a)->name, ((const struct vf_trainer_mode *)b)->name);
}

vf_status vf_checkout_modes(const char *trainer_dir, const cJSON *configs, struct vf_trainer_modes *out,
			    struct vf_error *err)
{
	memset(out, 0, sizeof *out);
	const cJSON *fam = cJSON_GetObjectItemCaseSensitive(configs, "families");
	const char *std = vf_json_get_str(fam, "standard"), *low = vf_json_get_str(fam, "low_vram");
	const char *cdir = vf_json_get_str(fam, "dir");
	char dir[1200];
	snprintf(dir, sizeof dir, "%s/%s", trainer_dir, cdir ? cdir : "configs");
	DIR *d = opendir(dir);
	if (!d)
		return vf_error_set(err, VF_ENOTFOUND, "%s: no configs directory (is this the trainer checkout?)", dir);
	size_t alloc = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		char mode[48];
		bool is_low = match_pattern(low, e->d_name, mode, sizeof mode);
		if (!is_low && !match_pattern(std, e->d_name, mode, sizeof mode))
			continue;
		struct vf_trainer_mode *m = mode_slot(out, &alloc, mode);
		if (!m) {
			closedir(d);
			vf_modes_release(out);
			return vf_error_set(err, VF_ENOMEM, "out of memory");
		}
		snprintf(is_low ? m->low_vram : m->config, sizeof m->config, "%s", e->d_name);
	}
	closedir(d);
	for (size_t i = 0; i < out->n; i++) {
		struct vf_trainer_mode *m = &out->v[i];
		char path[1400];
		snprintf(path, sizeof path, "%s/%s", dir, m->config[0] ? m->config : m->low_vram);
		header_comment(path, m->what, sizeof m->what);
		strategy_summary(path, cJSON_GetObjectItemCaseSensitive(configs, "strategy_summary"), m->strategy,
				 sizeof m->strategy);
	}
	if (out->n)
		qsort(out->v, out->n, sizeof *out->v, cmp_mode);
	return VF_OK;
}

/* ---- values by pattern ---------------------------------------------------------- */

static void collect(const struct vf_yaml_node *n, const char *pat, const char *prefix, struct vf_found_value *out,
		    size_t max, size_t *got, int depth)
{
	if (!n || *got >= max || depth > 32)
		return;
	if (!*pat) {
		if (vf_yaml_node_kind(n) == VF_YAML_STR) {
			snprintf(out[*got].key, sizeof out[*got].key, "%s", prefix);
			snprintf(out[*got].value, sizeof out[*got].value, "%s", vf_yaml_node_str(n));
			out[*got].node = n;
			(*got)++;
		}
		return;
	}
	size_t l = strcspn(pat, ".");
	const char *rest = pat[l] ? pat + l + 1 : pat + l;
	for (size_t i = 0; i < vf_yaml_node_count(n); i++) {
		const char *k = vf_yaml_node_key(n, i);
		char idx[24], sub[200];
		if (!k) {
			snprintf(idx, sizeof idx, "%zu", i);
			k = idx;
		}
		if (!(l == 1 && pat[0] == '*') && (strlen(k) != l || strncmp(k, pat, l) != 0))
			continue;
		snprintf(sub, sizeof sub, "%s%s%s", prefix, *prefix ? "." : "", k);
		collect(vf_yaml_node_child(n, i), rest, sub, out, max, got, depth + 1);
	}
}

size_t vf_checkout_collect(const struct vf_yamldoc *doc, const char *pattern, struct vf_found_value *out,
			   size_t max)
{
	size_t got = 0;
	collect(vf_yamldoc_root(doc), pattern, "", out, max, &got, 0);
	return got;
}

static bool add_dir(struct vf_found_value *out, size_t max, size_t *n, const char *key, const char *value,
		    const struct vf_yaml_node *node)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp(out[i].value, value) == 0)
			return false;
	if (*n >= max)
		return false;
	snprintf(out[*n].key, sizeof out[*n].key, "%s", key);
	snprintf(out[*n].value, sizeof out[*n].value, "%s", value);
	out[*n].node = node;
	(*n)++;
	return true;
}

size_t vf_checkout_data_dirs(const struct vf_yamldoc *doc, const cJSON *configs, struct vf_found_value *out,
			     size_t max)
{
	const cJSON *dd = cJSON_GetObjectItemCaseSensitive(configs, "data_dirs"), *e;
	size_t n = 0;
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(dd, "always"))
		if (cJSON_IsString(e))
			add_dir(out, max, &n, "(always)", e->valuestring, NULL);
	const cJSON *bs = cJSON_GetObjectItemCaseSensitive(dd, "by_strategy");
	const char *sk = vf_json_get_str(bs, "key"), *name = NULL;
	if (!sk || vf_yamldoc_get_str(doc, sk, &name, NULL) != VF_OK)
		name = vf_json_get_str(bs, "default");
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(bs, "dirs"), name ? name : ""))
		if (cJSON_IsString(e))
			add_dir(out, max, &n, sk ? sk : "(strategy)", e->valuestring, NULL);
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(dd, "keys"))
	{
		struct vf_found_value f[16];
		size_t k = cJSON_IsString(e) ? vf_checkout_collect(doc, e->valuestring, f, 16) : 0;
		for (size_t i = 0; i < k; i++)
			add_dir(out, max, &n, f[i].key, f[i].value, f[i].node);
	}
	return n;
}

/* ---- low-VRAM deltas ---------------------------------------------------------------- */

static bool skipped(const cJSON *skip, const char *key)
{
	const cJSON *e;
	cJSON_ArrayForEach(e, skip)
	{
		size_t l = cJSON_IsString(e) ? strlen(e->valuestring) : 0;
		if (l && strncmp(key, e->valuestring, l) == 0 && (key[l] == '\0' || key[l] == '.'))
			return true;
	}
	return false;
}

static void node_text(const struct vf_yaml_node *n, char *out, size_t len, bool *is_string)
{
	*is_string = vf_yaml_node_kind(n) == VF_YAML_STR;
	if (*is_string) {
		snprintf(out, len, "%s", vf_yaml_node_str(n));
		return;
	}
	cJSON *j = vf_yaml_node_to_json(n);
	char *s = j ? cJSON_PrintUnformatted(j) : NULL;
	snprintf(out, len, "%s", s ? s : "null");
	free(s);
	cJSON_Delete(j);
}

static void diff(const struct vf_yaml_node *low, const struct vf_yamldoc *std, const char *prefix,
		 const cJSON *skip, struct vf_delta *out, size_t max, size_t *n, int depth)
{
	for (size_t i = 0; i < vf_yaml_node_count(low) && *n < max && depth < 32; i++) {
		const char *k = vf_yaml_node_key(low, i);
		const struct vf_yaml_node *v = vf_yaml_node_child(low, i);
		char key[200];
		snprintf(key, sizeof key, "%s%s%s", prefix, *prefix ? "." : "", k ? k : "");
		if (!k || skipped(skip, key))
			continue;
		if (vf_yaml_node_kind(v) == VF_YAML_MAP) {
			diff(v, std, key, skip, out, max, n, depth + 1);
			continue;
		}
		const struct vf_yaml_node *s = vf_yamldoc_find(std, key);
		cJSON *a = vf_yaml_node_to_json(v), *b = s ? vf_yaml_node_to_json(s) : NULL;
		bool same = a && b && cJSON_Compare(a, b, true);
		cJSON_Delete(a);
		cJSON_Delete(b);
		if (same)
			continue;
		struct vf_delta *d = &out[(*n)++];
		bool str;
		snprintf(d->key, sizeof d->key, "%s", key);
		node_text(v, d->value, sizeof d->value, &d->is_string);
		if (s)
			node_text(s, d->standard, sizeof d->standard, &str);
		else
			snprintf(d->standard, sizeof d->standard, "(absent)");
	}
}

size_t vf_checkout_deltas(const struct vf_yamldoc *standard, const struct vf_yamldoc *low, const cJSON *configs,
			  struct vf_delta *out, size_t max)
{
	size_t n = 0;
	diff(vf_yamldoc_root(low), standard, "", cJSON_GetObjectItemCaseSensitive(configs, "delta_skip"), out, max,
	     &n, 0);
	return n;
}
