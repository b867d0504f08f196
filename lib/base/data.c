/* data.c - embedded data/ files (generated embedded-data.c) and overrides. */
#include "vramfit/base/data.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vramfit/base/json.h"

struct vf__embedded {
	const char *name;
	const unsigned char *data;
	size_t len;
};
extern const struct vf__embedded vf__embedded_files[];
/* the .json files' tree images (cmake/json-image.c: embedded-images.c) */
extern const struct vf__embedded vf__embedded_images[];

const unsigned char *vf__data_embedded_image(const char *name, size_t *len)
{
	for (const struct vf__embedded *e = vf__embedded_images; e->name; e++) {
		if (strcmp(e->name, name) == 0) {
			*len = e->len;
			return e->data;
		}
	}
	return NULL;
}

const unsigned char *vf_data_embedded(const char *name, size_t *len)
{
	for (const struct vf__embedded *e = vf__embedded_files; e->name; e++) {
		if (strcmp(e->name, name) == 0) {
			if (len)
				*len = e->len;
			return e->data;
		}
	}
	return NULL;
}

const char *vf_data_embedded_name(size_t i)
{
	for (size_t k = 0; vf__embedded_files[k].name; k++)
		if (k == i)
			return vf__embedded_files[k].name;
	return NULL;
}

size_t vf_data_override_dirs(char dirs[2][4096])
{
	size_t n = 0;
	const char *dir = getenv("VRAMFIT_DATA_DIR");
	if (dir && *dir)
		snprintf(dirs[n++], 4096, "%s", dir);
	const char *xdg = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");
	if (xdg && *xdg)
		snprintf(dirs[n++], 4096, "%s/vramfit", xdg);
	else if (home && *home)
		snprintf(dirs[n++], 4096, "%s/.config/vramfit", home);
	return n;
}

/* 1 with out = the override of name, 0 when there is none. A path that is
 * there in any form (unreadable, a dangling link, a symlink loop) is the
 * override: reading it reports the problem instead of silently falling back
 * to the embedded copy. A directory we may not search (another user's HOME
 * under sudo) hides what is in it: no override. */
static int override_path(const char *name, char *out, size_t n)
{
	char dirs[2][4096];
	size_t nd = vf_data_override_dirs(dirs);
	for (size_t i = 0; i < nd; i++) {
		snprintf(out, n, "%s/%s", dirs[i], name);
		struct stat st;
		if (lstat(out, &st) == 0 ||
		    (errno != ENOENT && errno != ENOTDIR && errno != EACCES))
			return 1;
	}
	return 0;
}

/* Where data/NAME comes from: the override file (*file true, its path in
 * path) or the copy embedded in the binary (*d, *len; its name in path).
 * source, when given, gets the same name. */
static vf_status data_where(const char *name, char *path, size_t path_len, bool *file,
			    const unsigned char **d, size_t *len, char *source, size_t source_len,
			    struct vf_error *err)
{
	*file = override_path(name, path, path_len);
	if (!*file) {
		*d = vf_data_embedded(name, len);
		if (!*d)
			return vf_error_set(err, VF_ENOTFOUND, "data/%s: not embedded in this build",
					    name);
		snprintf(path, path_len, "embedded data/%s", name);
	}
	if (source)
		snprintf(source, source_len, "%s", path);
	return VF_OK;
}

vf_status vf_data_load_json(const char *name, cJSON **out, char *source, size_t source_len,
			    struct vf_error *err)
{
	char path[4096];
	bool file;
	const unsigned char *d = NULL;
	size_t len = 0;
	vf_status st = data_where(name, path, sizeof path, &file, &d, &len, source, source_len, err);
	if (st != VF_OK)
		return st;
	if (file)
		return vf_json_parse_file(path, 0, out, err);
	return vf_json_parse((const char *)d, len, path, out, err);
}

vf_status vf_data_load_doc(const char *name, struct vf_json_doc **out, char *source,
			   size_t source_len, struct vf_error *err)
{
	char path[4096];
	bool file;
	const unsigned char *d = NULL;
	size_t len = 0;
	*out = NULL;
	vf_status st = data_where(name, path, sizeof path, &file, &d, &len, source, source_len, err);
	if (st != VF_OK)
		return st;
	if (file)
		return vf_json_doc_parse_file(path, 0, out, err);
	/* the embedded copy's tree from its image (the same tree, unparsed;
	 * tests/unit/test-jsonimage.c); an image this build cannot read (made
	 * for another byte order) leaves the text to parse. An override file
	 * above is parsed and checked as before. */
	size_t ilen;
	const unsigned char *img = vf__data_embedded_image(name, &ilen);
	if (img && vf__json_doc_from_image(img, ilen, path, out, NULL) == VF_OK)
		return VF_OK;
	return vf_json_doc_parse((const char *)d, len, path, out, err);
}

vf_status vf_data_load_text(const char *name, struct vf_buf *out, size_t cap, struct vf_error *err)
{
	char path[4096];
	if (override_path(name, path, sizeof path))
		return vf_buf_read_file(out, path, cap, err);
	size_t len;
	const unsigned char *d = vf_data_embedded(name, &len);
	if (!d)
		return vf_error_set(err, VF_ENOTFOUND, "data/%s: not embedded in this build", name);
	if (len > cap)
		return vf_error_set(err, VF_ERR, "embedded data/%s: larger than %zu bytes", name, cap);
	return vf_buf_append(out, d, len, err);
}
