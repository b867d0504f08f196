/* workspace.c - what `vramfit run` changes in the run workspace (run.h):
 * the sanity sample copied from the preprocessed data (into the folder the
 * profile's sweep.json has the trials read), the last checkpoint
 * found, config.yaml keys set and plan.md's Run Log appended; every file
 * written temp + rename inside the run directory, never through a link. */
#include <dirent.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "vramfit/base/buf.h"
#include "vramfit/base/json.h"
#include "vramfit/base/md.h"
#include "vramfit/base/rundir.h"
#include "vramfit/run/run.h"

#define SAMPLE_FILE_MAX (256u << 20) /* one preprocessed file of the sanity sample */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted names in dir (no dot files) that are regular files (want_dir
 * false) or directories; *n of them. Caller frees each and the array. */
static char **list_dir(const char *dir, bool want_dir, size_t *n)
{
	*n = 0;
	DIR *d = opendir(dir);
	if (!d)
		return NULL;
	char **v = NULL;
	size_t cap = 0;
	struct dirent *e;
	while ((e = readdir(d)) && *n < 100000) {
		char p[PATH_MAX + 256];
		struct stat sb;
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		if (e->d_name[0] == '.' || lstat(p, &sb) != 0 || (want_dir ? !S_ISDIR(sb.st_mode) : !S_ISREG(sb.st_mode)))
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			char **nv = realloc(v, cap * sizeof *v);
			if (!nv)
				break;
			v = nv;
		}
		v[(*n)++] = strdup(e->d_name);
	}
	closedir(d);
	if (v)
		qsort(v, *n, sizeof *v, cmp_str);
	return v;
}

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* name without its extension equals stem */
static bool has_stem(const char *name, const char *stem)
{
	size_t l = strlen(stem);
	return strncmp(name, stem, l) == 0 && (name[l] == '\0' || name[l] == '.');
}

/* Copy the files of sub (a subdirectory of data_root, "" the root) whose
 * stem is stem into RUN/sample_dir/sub. */
static vf_status copy_stem(const struct vf_rundir *rd, const char *data_root, const char *sample_dir,
			   const char *sub, const char *stem, int *copied, struct vf_error *err)
{
	char dir[PATH_MAX], dest[PATH_MAX];
	snprintf(dir, sizeof dir, "%s%s%s", data_root, sub[0] ? "/" : "", sub);
	snprintf(dest, sizeof dest, "%s%s%s", sample_dir, sub[0] ? "/" : "", sub);
	size_t n;
	char **names = list_dir(dir, false, &n);
	vf_status st = VF_OK;
	for (size_t i = 0; i < n && st == VF_OK; i++) {
		if (!has_stem(names[i], stem))
			continue;
		char src[PATH_MAX + 256], to[PATH_MAX + 256];
		snprintf(src, sizeof src, "%s/%s", dir, names[i]);
		snprintf(to, sizeof to, "%s/%s", dest, names[i]);
		struct vf_buf b;
		vf_buf_init(&b, SAMPLE_FILE_MAX);
		if ((st = vf_rundir_mkdir(rd, dest, err)) == VF_OK &&
		    (st = vf_buf_read_file(&b, src, SAMPLE_FILE_MAX, err)) == VF_OK)
			st = vf_rundir_write_atomic(rd, to, b.data ? b.data : "", b.len, 0644, err);
		vf_buf_release(&b);
		*copied += st == VF_OK;
	}
	free_list(names, n);
	return st;
}

vf_status vf_run_sample_dir(const cJSON *sweep, char *out, size_t n, struct vf_error *err)
{
	static const char run_var[] = "{run}/";
	const cJSON *tc = cJSON_GetObjectItemCaseSensitive(sweep, "trial_config");
	const char *dr = vf_json_get_str(tc, "data_root");
	const char *rel = dr && strncmp(dr, run_var, sizeof run_var - 1) == 0 ? dr + sizeof run_var - 1 : NULL;
	bool ok = rel && *rel && *rel != '/' && strlen(rel) < n && !strchr(rel, '{') && rel[strlen(rel) - 1] != '/';
	for (const char *c = rel; ok && c; c = strchr(c, '/')) { /* no empty, "." or ".." part */
		c += *c == '/';
		size_t l = strcspn(c, "/");
		ok = l > 0 && !(l == 1 && c[0] == '.') && !(l == 2 && c[0] == '.' && c[1] == '.');
	}
	if (!ok)
		return vf_error_set(err, VF_ERR,
				    "the trainer profile's sweep.json: trial_config.data_root: expected a folder below "
				    "{run}/ (where the sanity run's one sample is copied), got %s%s%s",
				    dr ? "'" : "", dr ? dr : "none", dr ? "'" : "");
	snprintf(out, n, "%s", rel);
	return VF_OK;
}

/* Make RUN/path and each folder above it inside the run directory. */
static vf_status mkdirs(const struct vf_rundir *rd, const char *path, struct vf_error *err)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s", path);
	vf_status st = VF_OK;
	for (char *s = strchr(p, '/'); s && st == VF_OK; s = strchr(s + 1, '/')) {
		*s = '\0';
		st = vf_rundir_mkdir(rd, p, err);
		*s = '/';
	}
	return st ? st : vf_rundir_mkdir(rd, p, err);
}

vf_status vf_run_sanity_sample(const char *run_dir, const char *data_root, const char *sample_dir, int *copied,
			       struct vf_error *err)
{
	*copied = 0;
	size_t nsub;
	char **subs = list_dir(data_root, true, &nsub);
	char stem[NAME_MAX + 1] = "";
	for (size_t i = 0; i <= nsub && !stem[0]; i++) { /* the first file of the first non-empty folder */
		char dir[PATH_MAX];
		snprintf(dir, sizeof dir, "%s%s%s", data_root, i < nsub ? "/" : "", i < nsub ? subs[i] : "");
		size_t nf;
		char **files = list_dir(dir, false, &nf);
		if (nf) {
			snprintf(stem, sizeof stem, "%s", files[0]);
			char *dot = strchr(stem, '.');
			if (dot && dot != stem)
				*dot = '\0';
		}
		free_list(files, nf);
	}
	struct vf_rundir rd;
	vf_status st = stem[0] ? vf_rundir_open(&rd, run_dir, 0, err)
			       : vf_error_set(err, VF_ERR, "%s: no preprocessed sample in it", data_root);
	if (st == VF_OK) {
		st = mkdirs(&rd, sample_dir, err);
		for (size_t i = 0; i <= nsub && st == VF_OK; i++)
			st = copy_stem(&rd, data_root, sample_dir, i < nsub ? subs[i] : "", stem, copied, err);
		vf_rundir_close(&rd);
	}
	free_list(subs, nsub);
	return st;
}

bool vf_run_last_checkpoint(const char *run_dir, const cJSON *configs, char *out, size_t n)
{
	const cJSON *ck = cJSON_GetObjectItemCaseSensitive(configs, "checkpoints");
	const char *sub = vf_json_get_str(ck, "dir");
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/%s", run_dir, sub ? sub : "outputs/checkpoints");
	size_t nf;
	char **files = list_dir(dir, false, &nf);
	bool found = false;
	for (size_t i = nf; i-- > 0 && !found;) { /* zero-padded steps: the last name is the newest */
		const cJSON *g;
		cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(ck, "globs"))
			if (cJSON_IsString(g) && fnmatch(g->valuestring, files[i], 0) == 0 && !found) {
				snprintf(out, n, "%s/%s", dir, files[i]);
				found = true;
			}
	}
	free_list(files, nf);
	return found;
}

vf_status vf_run_config_set(const char *run_dir, const cJSON *set, struct vf_error *err)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/config.yaml", run_dir);
	struct vf_yamldoc *d = NULL;
	vf_status st = vf_yamldoc_load_file(path, &d, err);
	if (st == VF_OK)
		st = vf_yamldoc_set_all(d, set, err);
	size_t len;
	const char *text = st == VF_OK ? vf_yamldoc_text(d, &len) : NULL;
	if (text)
		st = vf_rundir_write_file(run_dir, "config.yaml", text, len, 0644, err);
	vf_yamldoc_free(d);
	return st;
}

vf_status vf_run_plan_note(const char *run_dir, const char *line, struct vf_error *err)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/plan.md", run_dir);
	struct vf_buf b;
	vf_buf_init(&b, 4u << 20);
	vf_status st = vf_buf_read_file(&b, path, 4u << 20, err);
	if (st == VF_OK) {
		if (!b.data || !strstr(b.data, "\n## Run Log\n"))
			vf_buf_puts(&b, b.len && b.data[b.len - 1] != '\n' ? "\n\n## Run Log\n\n" : "\n## Run Log\n\n",
				    NULL);
		vf_buf_puts(&b, "- ", NULL);
		vf_md_prose(&b, line);
		vf_buf_puts(&b, "\n", NULL);
		st = vf_rundir_write_file(run_dir, "plan.md", b.data, b.len, 0644, err);
	}
	vf_buf_release(&b);
	return st;
}
