/* dataset.c - the dataset `vramfit run` preprocesses (run.h), in the
 * trainer's layout (its dataset preparation: a CSV, JSON list or JSONL
 * file of rows with a caption column and a media column, media paths
 * relative to the file): the file found in a directory, each row checked
 * (caption text, media path, the media file there), and the plan's
 * preprocessing command pointed at it, its outputs kept in the run's data
 * root (the script's --output-dir). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "vramfit/base/buf.h"
#include "vramfit/base/json.h"
#include "vramfit/base/shquote.h"
#include "vramfit/run/run.h"

static const char *const media_cols[] = {"media_path", "video"};

static bool has_ext(const char *name, const char *ext)
{
	size_t n = strlen(name), e = strlen(ext);
	return n > e && strcmp(name + n - e, ext) == 0;
}

static bool dataset_name(const char *name)
{
	return name[0] != '.' && (has_ext(name, ".json") || has_ext(name, ".jsonl") || has_ext(name, ".csv"));
}

vf_status vf_run_dataset_find(const char *dir, const char *preferred, char *out, size_t n, struct vf_error *err)
{
	struct stat sb;
	if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
		return vf_error_set(err, VF_ERR, "%s: not a directory (--dataset-dir: the dataset file's directory)", dir);
	if (preferred && snprintf(out, n, "%s/%s", dir, preferred) < (int)n && stat(out, &sb) == 0 &&
	    S_ISREG(sb.st_mode))
		return VF_OK;
	DIR *d = opendir(dir);
	if (!d)
		return vf_error_set(err, VF_ERR, "%s: cannot be read", dir);
	char first[256] = "", second[256] = "";
	struct dirent *e;
	while ((e = readdir(d)))
		if (dataset_name(e->d_name))
			snprintf(first[0] ? second : first, sizeof first, "%s", e->d_name);
	closedir(d);
	if (!first[0])
		return vf_error_set(err, VF_ERR, "%s: no dataset file (%s, or one .json, .jsonl or .csv file with "
				    "caption and media_path or video columns)", dir, preferred ? preferred : "dataset.json");
	if (second[0])
		return vf_error_set(err, VF_ERR, "%s: two dataset files (%s and %s): name one %s", dir, first, second,
				    preferred ? preferred : "dataset.json");
	snprintf(out, n, "%s/%s", dir, first);
	return VF_OK;
}

/* One row: its caption and media path (either may be NULL), checked. */
static vf_status check_row(const char *file, const char *base, int row, const char *caption, const char *media,
			   const char *mcol, struct vf_error *err)
{
	if (!caption || !caption[0])
		return vf_error_set(err, VF_ERR, "%s: row %d: field caption: expected the caption text", file, row);
	if (!media || !media[0])
		return vf_error_set(err, VF_ERR, "%s: row %d: field %s: expected the media file's path", file, row,
				    mcol ? mcol : "media_path (or video)");
	if (!base)
		return VF_OK;
	char p[8192];
	struct stat sb;
	if (media[0] == '/')
		snprintf(p, sizeof p, "%s", media);
	else
		snprintf(p, sizeof p, "%s/%s", base, media);
	if (stat(p, &sb) != 0 || !S_ISREG(sb.st_mode))
		return vf_error_set(err, VF_ERR, "%s: row %d: field %s: %.300s: no such file (paths are relative to the "
				    "dataset file)", file, row, mcol, media);
	return VF_OK;
}

static const char *json_str(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static vf_status check_object(const char *file, const char *base, int row, const cJSON *o, struct vf_error *err)
{
	if (!cJSON_IsObject(o))
		return vf_error_set(err, VF_ERR, "%s: row %d: expected an object with caption and media_path (or video)",
				    file, row);
	const char *mcol = NULL;
	for (size_t i = 0; i < 2 && !mcol; i++)
		if (cJSON_GetObjectItemCaseSensitive(o, media_cols[i]))
			mcol = media_cols[i];
	return check_row(file, base, row, json_str(o, "caption"), mcol ? json_str(o, mcol) : NULL, mcol, err);
}

static vf_status check_json(const char *file, const char *text, size_t len, const char *base, int *rows,
			    struct vf_error *err)
{
	cJSON *j = NULL;
	if (vf_json_parse(text, len, file, &j, err) != VF_OK) /* names a NUL or trailing data */
		return VF_ERR;
	if (!cJSON_IsArray(j)) {
		cJSON_Delete(j);
		return vf_error_set(err, VF_ERR, "%s: expected a JSON list of objects (caption, media_path or video)",
				    file);
	}
	vf_status st = VF_OK;
	const cJSON *o;
	cJSON_ArrayForEach(o, j)
		if (st == VF_OK)
			st = check_object(file, base, ++*rows, o, err);
	cJSON_Delete(j);
	return st;
}

static vf_status check_jsonl(const char *file, const char *text, size_t len, const char *base, int *rows,
			     struct vf_error *err)
{
	for (size_t at = 0, line = 1; at < len; line++) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t l = nl ? (size_t)(nl - (text + at)) : len - at;
		size_t k = 0;
		while (k < l && (text[at + k] == ' ' || text[at + k] == '\t' || text[at + k] == '\r'))
			k++;
		if (k < l) {
			cJSON *o = NULL;
			struct vf_error je = {0};
			vf_status st = vf_json_parse(text + at, l, file, &o, &je) == VF_OK
					       ? check_object(file, base, ++*rows, o, err)
					       : vf_error_set(err, VF_ERR, "%s: line %zu: not valid JSON (%s)", file, line,
							      je.msg + (strncmp(je.msg, file, strlen(file)) == 0 &&
									je.msg[strlen(file)] == ':' ? strlen(file) + 2 : 0));
			cJSON_Delete(o);
			if (st)
				return st;
		}
		at += l + 1;
	}
	return VF_OK;
}

/* One CSV field (RFC 4180: "..." with "" for a quote) at *at into out;
 * *end_row when it ended its row. false on an open quote. */
static bool csv_field(const char *t, size_t len, size_t *at, struct vf_buf *out, bool *end_row)
{
	out->len = 0;
	size_t i = *at;
	bool q = i < len && t[i] == '"';
	for (i += q; i < len; i++) {
		if (q && t[i] == '"' && i + 1 < len && t[i + 1] == '"')
			vf_buf_append(out, "\"", 1, NULL), i++;
		else if (q && t[i] == '"')
			q = false;
		else if (!q && (t[i] == ',' || t[i] == '\n'))
			break;
		else if (!(t[i] == '\r' && !q))
			vf_buf_append(out, t + i, 1, NULL);
	}
	vf_buf_append(out, "", 1, NULL);
	*end_row = i >= len || t[i] == '\n';
	*at = i + 1;
	return !q;
}

#define CSV_COLS 64
static vf_status check_csv(const char *file, const char *text, size_t len, const char *base, int *rows,
			   struct vf_error *err)
{
	char *head[CSV_COLS] = {0}, *cell[CSV_COLS] = {0};
	int ncol = 0, cap = -1, med = -1, line = 1, n = 0;
	struct vf_buf f;
	vf_buf_init(&f, 1u << 20);
	vf_status st = VF_OK;
	for (size_t at = 0; at < len && st == VF_OK;) {
		bool end = false;
		if (!csv_field(text, len, &at, &f, &end))
			st = vf_error_set(err, VF_ERR, "%s: line %d: a quote is not closed", file, line);
		else {
			char **row = line == 1 ? head : cell;
			if (n < CSV_COLS)
				row[n] = strdup(f.data ? f.data : "");
			n++;
		}
		if (!end || st)
			continue;
		if (line == 1) {
			ncol = n < CSV_COLS ? n : CSV_COLS;
			for (int i = 0; i < ncol; i++) {
				if (strcmp(head[i], "caption") == 0)
					cap = i;
				if (med < 0 && (strcmp(head[i], "media_path") == 0 || strcmp(head[i], "video") == 0))
					med = i;
			}
		} else if (n > 1 || (cell[0] && cell[0][0])) {
			st = check_row(file, base, ++*rows, cap >= 0 && cap < n ? cell[cap] : NULL,
				       med >= 0 && med < n ? cell[med] : NULL, med >= 0 ? head[med] : NULL, err);
		}
		for (int i = 0; line > 1 && i < CSV_COLS; i++)
			free(cell[i]), cell[i] = NULL;
		line++;
		n = 0;
	}
	for (int i = 0; i < CSV_COLS; i++)
		free(head[i]), free(cell[i]);
	vf_buf_release(&f);
	return st;
}

vf_status vf_run_dataset_check(const char *file, const char *text, size_t len, const char *base, int *rows,
			       struct vf_error *err)
{
	*rows = 0;
	if (len > VF_RUN_DATASET_MAX_BYTES)
		return vf_error_set(err, VF_ERR, "%s: larger than %u bytes", file, VF_RUN_DATASET_MAX_BYTES);
	vf_status st = has_ext(file, ".csv")	? check_csv(file, text, len, base, rows, err)
		       : has_ext(file, ".jsonl") ? check_jsonl(file, text, len, base, rows, err)
		       : has_ext(file, ".json")	? check_json(file, text, len, base, rows, err)
						: vf_error_set(err, VF_ERR, "%s: expected a .csv, .json or .jsonl file", file);
	if (st == VF_OK && *rows == 0)
		return vf_error_set(err, VF_ERR, "%s: no rows (caption and media_path or video)", file);
	return st;
}

vf_status vf_run_dataset_check_file(const char *file, int *rows, struct vf_error *err)
{
	char base[4096];
	snprintf(base, sizeof base, "%s", file);
	char *slash = strrchr(base, '/');
	if (slash)
		*slash = '\0';
	else
		snprintf(base, sizeof base, ".");
	struct vf_buf b;
	vf_buf_init(&b, VF_RUN_DATASET_MAX_BYTES);
	vf_status st = vf_buf_read_file(&b, file, VF_RUN_DATASET_MAX_BYTES, err);
	if (st == VF_OK)
		st = vf_run_dataset_check(file, b.data ? b.data : "", b.len, base, rows, err);
	vf_buf_release(&b);
	return st;
}

vf_status vf_run_preprocess_command(const char *cmd, const char *plan_dataset, const char *dataset,
				    const char *output_flag, const char *output_dir, char **out, struct vf_error *err)
{
	*out = NULL;
	char *store = NULL;
	const char *argv[128];
	vf_status st = vf_run_split_command(cmd, &store, argv, 120, err);
	if (st)
		return st;
	bool found = false;
	struct vf_buf b;
	vf_buf_init(&b, 1u << 16);
	for (size_t i = 0; argv[i] && st == VF_OK; i++) {
		bool is_ds = strcmp(argv[i], plan_dataset) == 0;
		found |= is_ds;
		if (i)
			vf_buf_append(&b, " ", 1, NULL);
		st = vf_shell_quote(&b, is_ds ? dataset : argv[i], err);
	}
	if (st == VF_OK && !found)
		st = vf_error_set(err, VF_ERR, "plan.json: preprocess.command does not name preprocess.dataset (%.200s)",
				  plan_dataset);
	if (st == VF_OK && output_flag && output_dir) {
		vf_buf_append(&b, " ", 1, NULL);
		st = vf_shell_quote(&b, output_flag, err);
		vf_buf_append(&b, " ", 1, NULL);
		if (st == VF_OK)
			st = vf_shell_quote(&b, output_dir, err);
	}
	free(store);
	size_t n;
	if (st == VF_OK)
		st = vf_buf_append(&b, "", 1, err); /* the NUL */
	if (st == VF_OK)
		*out = vf_buf_detach(&b, &n);
	else
		vf_buf_release(&b);
	return st;
}
