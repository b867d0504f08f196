/* pycheck.c - the trainer's config class as the judge of a config's keys and
 * values, where it can be run (issue 22 item 2; see check.h): when the
 * machine's python3 has pydantic 2 and PyYAML, the profile's helper script
 * (data/profiles/<trainer>/pycheck.py, written to a fresh temporary
 * directory with the config text, never into the checkout) imports the
 * checkout's config module with its heavy imports stubbed, loads the file
 * with yaml.safe_load and validates it with the schema class, in a child
 * supervised by proc (own process group, timeout, memory and line limits, a
 * cap on the errors kept). Its verdict replaces what the static reader said
 * about keys and values; anything short of a verdict leaves the static
 * answer in place with a note. */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_internal.h"
#include "vramfit/base/buf.h"
#include "vramfit/base/data.h"
#include "vramfit/base/json.h"
#include "vramfit/base/proc.h"

#define PY_MAX_ERRORS 64
#define PY_SCRIPT_MAX (256u << 10)

struct pyrun {
	char version[64], pydantic[64], executable[512];
	bool ok, fail;
	char why[384];          /* VF-NOPYDANTIC / VF-NOIMPORT / VF-NOYAML text */
	char errors[PY_MAX_ERRORS][3][384]; /* loc, type, message */
	int nerrors;
	size_t lines;           /* every stdout line, kept or not */
	char last_err[256];     /* the child's last stderr line */
};

/* Split line at tabs into up to max fields (in place); returns how many. */
static int fields(char *line, char **f, int max)
{
	int n = 0;
	for (char *p = line; n < max;) {
		f[n++] = p;
		char *t = strchr(p, '\t');
		if (!t)
			break;
		*t = '\0';
		p = t + 1;
	}
	return n;
}

static void on_line(void *ctx, enum vf_proc_stream stream, const char *line, size_t len, bool truncated)
{
	struct pyrun *r = ctx;
	(void)len;
	(void)truncated;
	if (stream == VF_PROC_STDERR) {
		if (*line)
			snprintf(r->last_err, sizeof r->last_err, "%s", line);
		return;
	}
	if (++r->lines > 4 * PY_MAX_ERRORS)
		return; /* output size limit: the rest is not read into anything */
	char buf[4096], *f[4] = {0};
	snprintf(buf, sizeof buf, "%s", line);
	int n = fields(buf, f, 4);
	if (strcmp(f[0], "VF-PY") == 0 && n >= 4) {
		snprintf(r->version, sizeof r->version, "%s", f[1]);
		snprintf(r->pydantic, sizeof r->pydantic, "%s", f[2]);
		snprintf(r->executable, sizeof r->executable, "%s", f[3]);
	} else if (strcmp(f[0], "VF-ERR") == 0 && n == 4 && r->nerrors < PY_MAX_ERRORS) {
		for (int i = 0; i < 3; i++)
			snprintf(r->errors[r->nerrors][i], sizeof r->errors[0][0], "%s", f[i + 1]);
		r->nerrors++;
	} else if (strcmp(f[0], "VF-OK") == 0) {
		r->ok = true;
	} else if (strcmp(f[0], "VF-FAIL") == 0) {
		r->fail = true;
	} else if (strncmp(f[0], "VF-NO", 5) == 0 && n >= 2) {
		snprintf(r->why, sizeof r->why, "%s", f[1]);
	}
}

void vf__check_map_loc(const struct vf_yamldoc *doc, const char *loc, bool missing, char *out, size_t n)
{
	char path[512] = "", part[128];
	const struct vf_yaml_node *at = vf_yamldoc_root(doc);
	bool prev_found = true; /* the part before this one was a key of doc (the root is) */
	for (const char *p = loc; *p;) {
		size_t l = strcspn(p, ".");
		snprintf(part, sizeof part, "%.*s", (int)(l < sizeof part ? l : sizeof part - 1), p);
		char next[700];
		snprintf(next, sizeof next, "%s%s%s", path, *path ? "." : "", part);
		bool last = !p[l], found = vf_yamldoc_find(doc, next) != NULL;
		if (found)
			snprintf(path, sizeof path, "%s", next);
		else if (last && missing && prev_found &&
			 vf_yaml_node_kind(*path ? vf_yamldoc_find(doc, path) : at) == VF_YAML_MAP)
			snprintf(path, sizeof path, "%s", next); /* the missing key, right under a key found */
		prev_found = found;
		p += l + (p[l] == '.');
	}
	snprintf(out, n, "%s", *path ? path : "(config)");
}

bool vf__check_pending_on(const struct vf_check *c, const char *key, const char *msg)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->items[i].level == VF_CHECK_PENDING &&
		    (strcmp(c->items[i].key, key) == 0 || strstr(msg, c->items[i].key)))
			return true;
	return false;
}

/* Drop items [from, to) (what the static reader said), keeping the counts. */
static void drop_items(struct vf_check *c, size_t from, size_t to)
{
	if (to > c->n)
		to = c->n;
	for (size_t i = from; i < to; i++) {
		enum vf_check_level l = c->items[i].level;
		if (l == VF_CHECK_FAIL)
			c->failures--;
		else if (l == VF_CHECK_PENDING)
			c->pending--;
		else
			c->unchecked--;
	}
	if (from < to) {
		memmove(&c->items[from], &c->items[to], (c->n - to) * sizeof c->items[0]);
		c->n -= to - from;
	}
}

static void report(const struct vf_yamldoc *doc, const struct pyrun *r, struct vf_check *out)
{
	const char *root = NULL;
	vf_yamldoc_get_str(doc, "data.preprocessed_data_root", &root, NULL);
	for (int i = 0; i < r->nerrors; i++) {
		const char *loc = r->errors[i][0], *type = r->errors[i][1], *msg = r->errors[i][2];
		char key[256];
		vf__check_map_loc(doc, loc, strcmp(type, "missing") == 0, key, sizeof key);
		bool pending = vf__check_pending_on(out, key, msg) || (root && *root && strstr(msg, root));
		const struct vf_yaml_node *n = vf_yamldoc_find(doc, key);
		if (!n && strchr(key, '.')) { /* a missing key: the line of its mapping */
			char parent[256];
			snprintf(parent, sizeof parent, "%.*s", (int)(strrchr(key, '.') - key), key);
			n = vf_yamldoc_find(doc, parent);
		}
		vf__check_add(out, pending ? VF_CHECK_PENDING : VF_CHECK_FAIL, key, n, "%s (pydantic: %s%s%s)", msg,
			      type, *loc && strcmp(loc, key) != 0 ? " at " : "", *loc && strcmp(loc, key) != 0 ? loc : "");
	}
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* A fresh private directory under $TMPDIR (or /tmp) holding the script and
 * the config text. */
static vf_status stage(const char *trainer, const char *script_name, const struct vf_yamldoc *doc, char *dir,
		       size_t dn, struct vf_error *err)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, dn, "%s/vramfit-pycheck.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return vf_error_set(err, VF_ERR, "%s: cannot make a temporary directory: %s", dir, strerror(errno));
	char name[256], path[PATH_MAX];
	snprintf(name, sizeof name, "profiles/%s/%s", trainer, script_name);
	struct vf_buf b;
	vf_buf_init(&b, PY_SCRIPT_MAX);
	vf_status st = vf_data_load_text(name, &b, PY_SCRIPT_MAX, err);
	snprintf(path, sizeof path, "%s/pycheck.py", dir);
	if (st == VF_OK)
		st = vf_write_file_atomic(path, b.data ? b.data : "", b.len, err);
	vf_buf_release(&b);
	size_t len = 0;
	const char *text = vf_yamldoc_text(doc, &len);
	snprintf(path, sizeof path, "%s/config.yaml", dir);
	if (st == VF_OK)
		st = vf_write_file_atomic(path, text ? text : "", len, err);
	return st;
}

/* Run the helper; true when it gave a verdict (r->ok or r->fail). */
static bool run_helper(const char *python, const char *dir, const char *src_root, const char *module,
		       const char *cls, const cJSON *pc, struct pyrun *r, struct vf_check *out)
{
	char script[PATH_MAX], config[PATH_MAX];
	snprintf(script, sizeof script, "%s/pycheck.py", dir);
	snprintf(config, sizeof config, "%s/config.yaml", dir);
	const char *argv[] = {python, "-B", script, src_root, module, cls, config, NULL};
	const char *env[] = {"PYTHONDONTWRITEBYTECODE=1", NULL};
	double timeout = 30, mem_mb = 4096;
	vf_json_get_double(pc, "timeout_s", &timeout);
	vf_json_get_double(pc, "mem_limit_mb", &mem_mb);
	struct vf_proc p;
	vf_proc_init(&p);
	p.argv = argv;
	p.cwd = dir;
	p.env_extra = env;
	p.timeout_s = timeout;
	p.grace_s = 1;
	p.line_max = 4096;
	p.mem_limit_bytes = (uint64_t)(mem_mb * 1048576.0);
	p.on_line = on_line;
	p.ctx = r;
	struct vf_error e = {0};
	if (vf_proc_run(&p, &e) != VF_OK) {
		snprintf(out->python_note, sizeof out->python_note, "%s", e.msg);
		return false;
	}
	if (p.end == VF_PROC_TIMEOUT) {
		snprintf(out->python_note, sizeof out->python_note, "%s ran past %.0f s and was ended", python,
			 timeout);
		return false;
	}
	if ((p.status == 0 && r->ok) || (p.status == 3 && r->fail))
		return true;
	if (p.status == 127)
		snprintf(out->python_note, sizeof out->python_note, "%s: not found", python);
	else
		snprintf(out->python_note, sizeof out->python_note, "%s exited %d: %s", python, p.status,
			 r->why[0] ? r->why : r->last_err[0] ? r->last_err : "no output");
	return false;
}

/* "src/ltx_trainer/config.py" -> src root "DIR/src", module "ltx_trainer.config" */
static void module_of(const char *dir, const char *file, char *root, size_t rn, char *mod, size_t mn)
{
	bool src = strncmp(file, "src/", 4) == 0;
	snprintf(root, rn, "%s%s", dir, src ? "/src" : "");
	snprintf(mod, mn, "%s", src ? file + 4 : file);
	char *dot = strrchr(mod, '.');
	if (dot && strcmp(dot, ".py") == 0)
		*dot = '\0';
	for (char *p = mod; *p; p++)
		if (*p == '/')
			*p = '.';
}

void vf__check_python(const struct vf_yamldoc *doc, const cJSON *configs, const char *trainer, size_t from,
		      size_t to, struct vf_check *out)
{
	const cJSON *pc = cJSON_GetObjectItemCaseSensitive(configs, "python_check");
	const cJSON *sc = cJSON_GetObjectItemCaseSensitive(configs, "schema");
	const char *file = vf_json_get_str(sc, "file"), *cls = vf_json_get_str(sc, "class");
	const char *script = vf_json_get_str(pc, "script"), *off = getenv("VRAMFIT_NO_PYTHON");
	const char *python = getenv("VRAMFIT_PYTHON");
	if (!python || !*python)
		python = vf_json_get_str(pc, "python") ? vf_json_get_str(pc, "python") : "python3";
	snprintf(out->checked_by, sizeof out->checked_by, "checked statically (vramfit's reader of the schema)");
	if (out->no_python || (off && *off && strcmp(off, "0") != 0)) {
		snprintf(out->python_note, sizeof out->python_note, "turned off (%s)",
			 out->no_python ? "--no-python" : "VRAMFIT_NO_PYTHON");
		return;
	}
	if (!pc || !script || !file || !cls || !out->trainer_dir[0]) {
		snprintf(out->python_note, sizeof out->python_note, "%s",
			 out->trainer_dir[0] ? "the trainer profile names no python check" : "no trainer checkout");
		return;
	}
	char abs[PATH_MAX], root[PATH_MAX + 8], module[256], dir[PATH_MAX];
	if (!realpath(out->trainer_dir, abs))
		snprintf(abs, sizeof abs, "%s", out->trainer_dir);
	module_of(abs, file, root, sizeof root, module, sizeof module);
	struct vf_error e = {0};
	if (stage(trainer, script, doc, dir, sizeof dir, &e) != VF_OK) {
		snprintf(out->python_note, sizeof out->python_note, "%s", e.msg);
		if (strstr(dir, "XXXXXX"))
			return;
	} else {
		struct pyrun *r = calloc(1, sizeof *r);
		if (!r)
			snprintf(out->python_note, sizeof out->python_note, "out of memory");
		else if (run_helper(python, dir, root, module, cls, pc, r, out)) {
			drop_items(out, from, to);
			report(doc, r, out);
			out->python_checked = true;
			snprintf(out->checked_by, sizeof out->checked_by,
				 "checked by the trainer's config class (%s) with %s %s (pydantic %s)", cls, python,
				 r->version, r->pydantic);
		}
		free(r);
	}
	nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}
