/* hfcache.c - Hub ids in the local caches: the Hugging Face cache as
 * huggingface_hub lays it out (models--org--name/refs/<revision> holds a
 * commit; snapshots/<commit>/ the files, symlinks into blobs/), and
 * vramfit's own cache of fetched headers, laid out the same way. */
#include "vramfit/hub/hub.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "hub-internal.h"

static bool part_ok(const char *s, size_t n)
{
	if (n == 0 || n > 96 || s[0] == '-' || (n == 1 && s[0] == '.') ||
	    (n == 2 && s[0] == '.' && s[1] == '.'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return false;
	return true;
}

bool vf_hub_ref_parse(const char *s, struct vf_hub_ref *r)
{
	memset(r, 0, sizeof *r);
	if (!s)
		return false;
	const char *colon = strrchr(s, ':');
	char buf[400];
	if (colon) {
		size_t tl = strlen(colon + 1);
		if (tl == 0 || tl >= sizeof r->tag || (size_t)(colon - s) >= sizeof buf)
			return false;
		for (size_t i = 0; i < tl; i++)
			if (!isalnum((unsigned char)colon[1 + i]) && colon[1 + i] != '_' &&
			    colon[1 + i] != '-' && colon[1 + i] != '.')
				return false;
		snprintf(r->tag, sizeof r->tag, "%s", colon + 1);
		snprintf(buf, sizeof buf, "%.*s", (int)(colon - s), s);
		s = buf;
	}
	const char *at = strchr(s, '@');
	size_t rlen = at ? (size_t)(at - s) : strlen(s);
	const char *slash = memchr(s, '/', rlen);
	if (!slash || memchr(slash + 1, '/', rlen - (size_t)(slash - s) - 1))
		return false;
	if (!part_ok(s, (size_t)(slash - s)) || !part_ok(slash + 1, rlen - (size_t)(slash - s) - 1))
		return false;
	if (rlen >= sizeof r->repo)
		return false;
	memcpy(r->repo, s, rlen);
	r->repo[rlen] = '\0';
	const char *rev = at ? at + 1 : "main";
	size_t vl = strlen(rev);
	if (vl == 0 || vl >= sizeof r->revision || rev[0] == '/' || strstr(rev, ".."))
		return false;
	for (size_t i = 0; i < vl; i++)
		if (!isgraph((unsigned char)rev[i]) || rev[i] == '\\')
			return false;
	snprintf(r->revision, sizeof r->revision, "%s", rev);
	r->has_revision = at != NULL;
	return true;
}

bool vf_hub_offline(void)
{
	const char *v = getenv("HF_HUB_OFFLINE");
	return v && (strcmp(v, "1") == 0 || strcasecmp(v, "true") == 0 ||
		     strcasecmp(v, "yes") == 0 || strcasecmp(v, "on") == 0);
}

/* $XDG_CACHE_HOME, else ~/.cache. */
static void user_cache(char *out, size_t n)
{
	const char *x = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	if (x && *x)
		snprintf(out, n, "%s", x);
	else
		snprintf(out, n, "%s/.cache", home && *home ? home : ".");
}

void vf__hf_home(char *out, size_t n)
{
	const char *h = getenv("HF_HOME");
	if (h && *h) {
		snprintf(out, n, "%s", h);
		return;
	}
	char c[VF_HUB_PATH_MAX];
	user_cache(c, sizeof c);
	snprintf(out, n, "%s/huggingface", c);
}

void vf_hfcache_dir(char *out, size_t n)
{
	const char *c = getenv("HF_HUB_CACHE");
	if (c && *c) {
		snprintf(out, n, "%s", c);
		return;
	}
	char h[VF_HUB_PATH_MAX];
	vf__hf_home(h, sizeof h);
	snprintf(out, n, "%s/hub", h);
}

void vf__hub_cache_dir(char *out, size_t n)
{
	char c[VF_HUB_PATH_MAX];
	user_cache(c, sizeof c);
	snprintf(out, n, "%s/vramfit/hub", c);
}

void vf__hub_repo_dir(const char *root, const char *repo, char *out, size_t n)
{
	char folder[160];
	const char *slash = strchr(repo, '/');
	snprintf(folder, sizeof folder, "models--%.*s--%s", (int)(slash - repo), repo, slash + 1);
	snprintf(out, n, "%s/%s", root, folder);
}

void vf__hub_tag_suffix(const char *tag, char *out, size_t n)
{
	size_t o = 0;
	if (n && tag[0] && n > 1)
		out[o++] = ':';
	for (; *tag && o + 1 < n; tag++)
		out[o++] = (char)tolower((unsigned char)*tag);
	if (n)
		out[o] = '\0';
}

bool vf__hub_is_commit(const char *s)
{
	size_t n = strlen(s);
	if (n != 40)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return false;
	return true;
}

/* Whether a snapshot folder holds weights: *.safetensors, an index, or a
 * diffusers model_index.json. */
static bool has_weights(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return false;
	bool w = false;
	struct dirent *e;
	while (!w && (e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name);
		w = (l > 12 && strcmp(e->d_name + l - 12, ".safetensors") == 0) ||
		    (l > 5 && strcmp(e->d_name + l - 5, ".gguf") == 0) ||
		    (l > 23 && strcmp(e->d_name + l - 23, ".safetensors.index.json") == 0) ||
		    strcmp(e->d_name, "model_index.json") == 0;
	}
	closedir(d);
	return w;
}

/* The commit a revision names under repo_dir: the revision itself when it
 * is a commit with a snapshot, else refs/<revision>'s content. */
static bool commit_of(const char *repo_dir, const char *rev, char *commit, size_t n)
{
	char p[VF_HUB_PATH_MAX + 256];
	struct stat sb;
	if (vf__hub_is_commit(rev)) {
		snprintf(p, sizeof p, "%s/snapshots/%s", repo_dir, rev);
		if (stat(p, &sb) == 0 && S_ISDIR(sb.st_mode)) {
			snprintf(commit, n, "%s", rev);
			return true;
		}
	}
	snprintf(p, sizeof p, "%s/refs/%s", repo_dir, rev);
	FILE *f = fopen(p, "r");
	if (!f)
		return false;
	char line[128] = "";
	bool ok = fgets(line, sizeof line, f) != NULL;
	fclose(f);
	line[strcspn(line, "\r\n \t")] = '\0';
	if (!ok || !vf__hub_is_commit(line))
		return false;
	snprintf(commit, n, "%s", line);
	return true;
}

/* The snapshot of r under root (a cache of either kind); marker: a file
 * that must exist in it (NULL: none). vramfit's cache keeps a GGUF file
 * chosen by tag in snapshots/<commit>:<TAG>. */
static vf_status find_in(const char *root, const struct vf_hub_ref *r, const char *marker,
			 const char *source, struct vf_hub_place *p, struct vf_error *err)
{
	char repo_dir[VF_HUB_PATH_MAX];
	vf__hub_repo_dir(root, r->repo, repo_dir, sizeof repo_dir);
	memset(p, 0, sizeof *p);
	char commit[64];
	if (!commit_of(repo_dir, r->revision, commit, sizeof commit))
		return vf_error_set(err, VF_ENOTFOUND, "%s@%s: not in %s", r->repo, r->revision,
				    root);
	char suffix[80] = "";
	if (marker) /* only vramfit's cache keeps one file of a GGUF repository */
		vf__hub_tag_suffix(r->tag, suffix, sizeof suffix);
	int w = snprintf(p->dir, sizeof p->dir, "%s/snapshots/%s%s", repo_dir, commit, suffix);
	struct stat sb;
	if (w < 0 || (size_t)w >= sizeof p->dir || stat(p->dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
		return vf_error_set(err, VF_ENOTFOUND, "%s@%s: commit %s has no snapshot in %s",
				    r->repo, r->revision, commit, root);
	if (marker) {
		char m[VF_HUB_PATH_MAX + 64];
		snprintf(m, sizeof m, "%s/%s", p->dir, marker);
		if (stat(m, &sb) != 0)
			return vf_error_set(err, VF_ENOTFOUND, "%s@%s: incomplete in %s", r->repo,
					    r->revision, root);
	}
	snprintf(p->commit, sizeof p->commit, "%s", commit);
	snprintf(p->source, sizeof p->source, "%s", source);
	p->weights = has_weights(p->dir);
	return VF_OK;
}

vf_status vf_hfcache_find(const struct vf_hub_ref *r, struct vf_hub_place *p,
			  struct vf_error *err)
{
	char root[VF_HUB_PATH_MAX];
	vf_hfcache_dir(root, sizeof root);
	return find_in(root, r, NULL, "hf-cache", p, err);
}

vf_status vf_hub_cache_find(const struct vf_hub_ref *r, struct vf_hub_place *p,
			    struct vf_error *err)
{
	char root[VF_HUB_PATH_MAX];
	vf__hub_cache_dir(root, sizeof root);
	return find_in(root, r, VF_HUB_COMPLETE, "vramfit-cache", p, err);
}
