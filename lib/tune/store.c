/* store.c - the SQLite trial history (see store.h).
 * Schema version 1:
 *   trials(config_hash TEXT PRIMARY KEY, run_dir, trainer, gpu, tier,
 *          trial_index, change, deltas, outcome, evidence, exit_status,
 *          steps_done, step_seconds, peak_bytes, predicted_peak_bytes,
 *          wall_seconds, recorded_at)
 * Version 2: trials.predicted_step_seconds. Version 3: recoveries
 * (vramfit run's changes after a failed training launch: run_dir, attempt,
 * step, cause, evidence, change, settings as JSON, predicted_peak_bytes,
 * recorded_at), a table of its own: a training launch is not a trial and
 * its config is no key a sweep resumes by. Older histories are migrated in
 * place, their rows kept, by a writer; a reader (read-only) reads an
 * older schema as it is. A database that holds tables but no vramfit
 * schema is another program's: refused before a byte is written.
 * Unknown numbers are stored as NULL, never as 0. */
#include "vramfit/tune/store.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

struct vf_store {
	sqlite3 *db;
	int version; /* the schema's: a reader's may be older (0: no tables yet) */
	char path[1024];
};

static const char schema_v1[] =
	"CREATE TABLE IF NOT EXISTS trials ("
	" config_hash TEXT PRIMARY KEY,"
	" run_dir TEXT NOT NULL,"
	" trainer TEXT, gpu TEXT, tier TEXT,"
	" trial_index INTEGER NOT NULL,"
	" change TEXT NOT NULL,"
	" deltas TEXT NOT NULL,"
	" outcome TEXT NOT NULL,"
	" evidence TEXT,"
	" exit_status INTEGER,"
	" steps_done INTEGER,"
	" step_seconds REAL,"
	" peak_bytes INTEGER,"
	" predicted_peak_bytes INTEGER,"
	" wall_seconds REAL,"
	" recorded_at TEXT NOT NULL);"
	"CREATE INDEX IF NOT EXISTS trials_run ON trials(run_dir, trial_index);";

static const char schema_v2[] = "ALTER TABLE trials ADD COLUMN predicted_step_seconds REAL;";

static const char schema_v3[] =
	"CREATE TABLE IF NOT EXISTS recoveries ("
	" run_dir TEXT NOT NULL,"
	" attempt INTEGER NOT NULL,"
	" step INTEGER,"
	" cause TEXT NOT NULL,"
	" evidence TEXT,"
	" change TEXT NOT NULL,"
	" settings TEXT NOT NULL,"
	" predicted_peak_bytes INTEGER,"
	" recorded_at TEXT NOT NULL,"
	" PRIMARY KEY (run_dir, attempt));";

const char *vf_store_default_path(char *out, size_t n)
{
	const char *h = getenv("VRAMFIT_HISTORY");
	if (h && *h) {
		snprintf(out, n, "%s", h);
		return out;
	}
	const char *x = getenv("XDG_DATA_HOME");
	if (x && *x == '/') {
		snprintf(out, n, "%s/vramfit/history.db", x);
		return out;
	}
	const char *home = getenv("HOME");
	if (!home || !*home)
		return NULL;
	snprintf(out, n, "%s/.local/share/vramfit/history.db", home);
	return out;
}

/* mkdir -p of the directory holding path. */
static vf_status mkdirs_for(const char *path, struct vf_error *err)
{
	char dir[1024];
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return VF_OK;
	*slash = '\0';
	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0755) != 0 && errno != EEXIST)
			return vf_error_set(err, VF_ERR, "%s: cannot create directory: %s", dir, strerror(errno));
		*p = '/';
	}
	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return vf_error_set(err, VF_ERR, "%s: cannot create directory: %s", dir, strerror(errno));
	return VF_OK;
}

static vf_status db_fail(struct vf_store *s, const char *what, struct vf_error *err)
{
	return vf_error_set(err, VF_ERR, "%s: %s: %s", s->path, what, sqlite3_errmsg(s->db));
}

static vf_status exec(struct vf_store *s, const char *sql, struct vf_error *err)
{
	char *msg = NULL;
	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		vf_error_set(err, VF_ERR, "%s: %s", s->path, msg ? msg : sqlite3_errmsg(s->db));
		sqlite3_free(msg);
		return VF_ERR;
	}
	return VF_OK;
}

static int user_version(struct vf_store *s)
{
	sqlite3_stmt *st;
	int v = -1;
	if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			v = sqlite3_column_int(st, 0);
		sqlite3_finalize(st);
	}
	return v;
}

/* One schema step in one transaction: sql, then user_version = to. */
static vf_status migrate(struct vf_store *s, const char *sql, int to, struct vf_error *err)
{
	char ver[48];
	snprintf(ver, sizeof ver, "PRAGMA user_version = %d", to);
	vf_status st = exec(s, "BEGIN IMMEDIATE", err);
	if (st)
		return st;
	if (user_version(s) >= to) /* another writer got there first */
		return exec(s, "COMMIT", err);
	if ((st = exec(s, sql, err)) || (st = exec(s, ver, err))) {
		exec(s, "ROLLBACK", NULL);
		return st;
	}
	return exec(s, "COMMIT", err);
}

void vf_store_close(struct vf_store *s)
{
	if (!s)
		return;
	sqlite3_close(s->db);
	free(s);
}

/* The names of the tables and views in s (SQLite's own left out), for
 * the refusal of a foreign database: at most 6, each at most 40 bytes,
 * control bytes as '?', ", "-separated, "... (N tables)" beyond; *count
 * all of them, *trials whether one is named trials. -1 when the schema
 * cannot be read. */
static int schema_names(struct vf_store *s, char *out, size_t n, bool *trials)
{
	static const char sql[] = "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')"
				  " AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name";
	sqlite3_stmt *st;
	int count = 0, rc;
	out[0] = '\0';
	*trials = false;
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		name = name ? name : "";
		*trials = *trials || strcmp(name, "trials") == 0;
		size_t l = strlen(out);
		if (count++ < 6) {
			snprintf(out + l, n - l, "%s%.40s", l ? ", " : "", name);
			for (char *c = out + l; *c; c++)
				if ((unsigned char)*c < 0x20 || *c == 0x7f)
					*c = '?';
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return -1;
	if (count > 6) {
		size_t l = strlen(out);
		snprintf(out + l, n - l, ", ... (%d tables)", count);
	}
	return count;
}

/* Whether trials is vramfit's: its key columns are there. */
static bool vramfit_trials(struct vf_store *s)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT config_hash, run_dir, trial_index, outcome FROM trials LIMIT 0", -1,
			       &st, NULL) != SQLITE_OK)
		return false;
	sqlite3_finalize(st);
	return true;
}

/* What s holds, read before anything is written: *version 0 for a new or
 * empty database (no tables, user_version 0), else the vramfit schema
 * version of a history (a vramfit trials table and user_version 1..).
 * Anything else is another program's database, refused: vramfit adds no
 * table to it. A schema newer than this build's is refused too. */
static vf_status check_schema(struct vf_store *s, int *version, struct vf_error *err)
{
	char names[400];
	bool trials;
	int v = user_version(s);
	int count = v < 0 ? -1 : schema_names(s, names, sizeof names, &trials);
	if (v < 0 || count < 0)
		return db_fail(s, "not a history database", err);
	*version = v;
	if (count == 0 && v == 0)
		return VF_OK;
	if (trials && v >= 1 && vramfit_trials(s)) {
		if (v > VF_STORE_SCHEMA_VERSION)
			return vf_error_set(err, VF_ERR, "%s: schema version %d is newer than this vramfit's (%d)",
					    s->path, v, VF_STORE_SCHEMA_VERSION);
		return VF_OK;
	}
	if (count == 0)
		return vf_error_set(err, VF_ERR,
				    "%s: not a vramfit history (it has no tables but user_version %d);"
				    " name another history database",
				    s->path, v);
	return vf_error_set(err, VF_ERR, "%s: not a vramfit history (it has %s %s and no vramfit %s);"
			    " name another history database", s->path, count == 1 ? "table" : "tables", names,
			    trials ? "schema" : "tables");
}

/* Bring a writer's history to this build's schema: the tables of a new
 * one, the migrations of an older one, each step one transaction. */
static vf_status upgrade(struct vf_store *s, struct vf_error *err)
{
	vf_status st;
	if (s->version < 1 && (st = migrate(s, schema_v1, 1, err)))
		return st;
	if (s->version < 2 && (st = migrate(s, schema_v2, 2, err))) /* the estimate's step time (issue 29) */
		return st;
	if (s->version < 3 && (st = migrate(s, schema_v3, 3, err))) /* vramfit run's recoveries (issue 26) */
		return st;
	s->version = VF_STORE_SCHEMA_VERSION;
	return VF_OK;
}

/* Open path. A writer (`create`) creates the file (with its directory)
 * when missing, turns WAL on and brings the schema up to date; a reader
 * opens it read-only and writes nothing (an older schema is read as it
 * is). Either refuses a database that is not a vramfit history before it
 * writes a byte. */
static vf_status open_at(const char *path, bool create, struct vf_store **out, struct vf_error *err)
{
	*out = NULL;
	vf_status st = create ? mkdirs_for(path, err) : VF_OK;
	if (st)
		return st;
	struct vf_store *s = calloc(1, sizeof *s);
	if (!s)
		return vf_error_set(err, VF_ENOMEM, "%s: out of memory", path);
	snprintf(s->path, sizeof s->path, "%s", path);
	int flags = create ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
	if (sqlite3_open_v2(path, &s->db, flags, NULL) != SQLITE_OK) {
		st = db_fail(s, "cannot open", err);
		goto fail;
	}
	sqlite3_busy_timeout(s->db, 5000);
	if ((st = check_schema(s, &s->version, err)))
		goto fail;
	if (create && ((st = exec(s, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", err)) ||
		       (st = upgrade(s, err))))
		goto fail;
	*out = s;
	return VF_OK;
fail:
	vf_store_close(s);
	return st;
}

vf_status vf_store_open(const char *path, struct vf_store **out, struct vf_error *err)
{
	*out = NULL;
	char def[1024];
	if (!path && !(path = vf_store_default_path(def, sizeof def)))
		return vf_error_set(err, VF_ERR,
				    "history: no location for history.db (set XDG_DATA_HOME or HOME)");
	return open_at(path, true, out, err);
}

vf_status vf_store_open_existing(const char *path, struct vf_store **out, struct vf_error *err)
{
	*out = NULL;
	const char *env = getenv("VRAMFIT_HISTORY");
	bool named = path || (env && *env); /* a name given is a typo when it names nothing */
	char def[1024];
	if (!path && !(path = vf_store_default_path(def, sizeof def)))
		return vf_error_set(err, VF_ERR,
				    "history: no location for history.db (set XDG_DATA_HOME or HOME)");
	struct stat sb;
	if (stat(path, &sb) != 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			return vf_error_set(err, VF_ERR, "%s: cannot read the history database: %s", path,
					    strerror(errno));
		if (named)
			return vf_error_set(err, VF_ERR, "%s: no such history database (vramfit tune writes it)",
					    path);
		return vf_error_set(err, VF_ENOTFOUND, "%s: no trials recorded yet", path);
	}
	return open_at(path, false, out, err);
}

vf_status vf_store_check(const char *path, struct vf_error *err)
{
	char def[1024];
	if (!path && !(path = vf_store_default_path(def, sizeof def)))
		return vf_error_set(err, VF_ERR,
				    "history: no location for history.db (set XDG_DATA_HOME or HOME)");
	struct stat sb;
	if (stat(path, &sb) != 0) /* a writer creates it */
		return VF_OK;
	struct vf_store *s;
	vf_status st = open_at(path, false, &s, err);
	vf_store_close(s);
	return st;
}

void vf_store_hash(const void *config, size_t len, const char *trainer_cmd, char *out)
{
	uint64_t h = 0xcbf29ce484222325ull;
	const unsigned char *p = config;
	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	h = (h ^ 0) * 0x100000001b3ull;
	for (const unsigned char *c = (const unsigned char *)(trainer_cmd ? trainer_cmd : ""); *c; c++)
		h = (h ^ *c) * 0x100000001b3ull;
	snprintf(out, 17, "%016llx", (unsigned long long)h);
}

static void bind_text(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static void bind_real_or_null(sqlite3_stmt *st, int i, double v)
{
	if (v >= 0)
		sqlite3_bind_double(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

static void bind_i64_or_null(sqlite3_stmt *st, int i, int64_t v)
{
	if (v >= 0)
		sqlite3_bind_int64(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

vf_status vf_store_put(struct vf_store *s, const struct vf_store_ctx *ctx, const struct vf_trial *t,
		       struct vf_error *err)
{
	static const char sql[] =
		"INSERT OR REPLACE INTO trials (config_hash, run_dir, trainer, gpu, tier, trial_index,"
		" change, deltas, outcome, evidence, exit_status, steps_done, step_seconds, peak_bytes,"
		" predicted_peak_bytes, wall_seconds, recorded_at, predicted_step_seconds)"
		" VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?, strftime('%Y-%m-%dT%H:%M:%SZ','now'), ?)";
	vf_status rc = exec(s, "BEGIN IMMEDIATE", err);
	if (rc)
		return rc;
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
		rc = db_fail(s, "prepare", err);
		goto fail;
	}
	bind_text(st, 1, t->config_hash);
	bind_text(st, 2, ctx->run_dir);
	bind_text(st, 3, ctx->trainer);
	bind_text(st, 4, ctx->gpu);
	bind_text(st, 5, ctx->tier);
	sqlite3_bind_int(st, 6, t->index);
	bind_text(st, 7, t->change);
	bind_text(st, 8, t->deltas);
	bind_text(st, 9, vf_outcome_name(t->outcome));
	bind_text(st, 10, t->evidence);
	if (t->status >= 0)
		sqlite3_bind_int(st, 11, t->status);
	else
		sqlite3_bind_null(st, 11);
	sqlite3_bind_int(st, 12, t->steps_done);
	bind_real_or_null(st, 13, t->step_seconds);
	bind_i64_or_null(st, 14, t->peak_bytes > 0 ? t->peak_bytes : -1); /* 0 is no sample */
	bind_i64_or_null(st, 15, t->predicted_peak_bytes);
	bind_real_or_null(st, 16, t->wall_seconds);
	bind_real_or_null(st, 17, t->predicted_step_seconds);
	if (sqlite3_step(st) != SQLITE_DONE) {
		rc = db_fail(s, "insert", err);
		goto fail;
	}
	sqlite3_finalize(st);
	return exec(s, "COMMIT", err);
fail:
	sqlite3_finalize(st);
	exec(s, "ROLLBACK", NULL);
	return rc;
}

static void col_text(sqlite3_stmt *st, int i, char *out, size_t n)
{
	const unsigned char *v = sqlite3_column_text(st, i);
	snprintf(out, n, "%s", v ? (const char *)v : "");
}

static double col_real(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? -1 : sqlite3_column_double(st, i);
}

static int64_t col_i64(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, i);
}

#define ROW_COLS_V1                                                                               \
	"config_hash, run_dir, trainer, gpu, tier, trial_index, change, deltas, outcome, evidence," \
	" exit_status, steps_done, step_seconds, peak_bytes, predicted_peak_bytes, wall_seconds,"    \
	" recorded_at, "
#define ROW_COLS ROW_COLS_V1 "predicted_step_seconds"
#define RECOVERY_COLS \
	"run_dir, attempt, step, cause, evidence, change, settings, predicted_peak_bytes, recorded_at"

/* The SELECT of ROW_COLS from trials, then `rest`: a reader's schema-1
 * history has no predicted step time yet (NULL in its place). */
static void trials_select(const struct vf_store *s, const char *rest, char *sql, size_t n)
{
	snprintf(sql, n, "SELECT %s FROM trials %s", s->version < 2 ? ROW_COLS_V1 "NULL" : ROW_COLS, rest);
}

/* One trials row (ROW_COLS) into a struct vf_store_row. */
static void read_row(sqlite3_stmt *st, void *row)
{
	struct vf_store_row *r = row;
	memset(r, 0, sizeof *r);
	vf_trial_init(&r->t);
	col_text(st, 0, r->t.config_hash, sizeof r->t.config_hash);
	col_text(st, 1, r->run_dir, sizeof r->run_dir);
	col_text(st, 2, r->trainer, sizeof r->trainer);
	col_text(st, 3, r->gpu, sizeof r->gpu);
	col_text(st, 4, r->tier, sizeof r->tier);
	r->t.index = sqlite3_column_int(st, 5);
	col_text(st, 6, r->t.change, sizeof r->t.change);
	col_text(st, 7, r->t.deltas, sizeof r->t.deltas);
	char oc[32];
	col_text(st, 8, oc, sizeof oc);
	if (!vf_outcome_parse(oc, &r->t.outcome))
		r->t.outcome = VF_OUTCOME_CRASH;
	col_text(st, 9, r->t.evidence, sizeof r->t.evidence);
	r->t.status = (int)col_i64(st, 10);
	r->t.steps_done = sqlite3_column_int(st, 11);
	r->t.step_seconds = col_real(st, 12);
	r->t.peak_bytes = col_i64(st, 13);
	r->t.predicted_peak_bytes = col_i64(st, 14);
	r->t.wall_seconds = col_real(st, 15);
	col_text(st, 16, r->recorded_at, sizeof r->recorded_at);
	r->t.predicted_step_seconds = col_real(st, 17);
}

/* One recoveries row (RECOVERY_COLS) into a struct vf_store_recovery_row. */
static void read_recovery(sqlite3_stmt *st, void *row)
{
	struct vf_store_recovery_row *r = row;
	memset(r, 0, sizeof *r);
	col_text(st, 0, r->run_dir, sizeof r->run_dir);
	r->attempt = sqlite3_column_int(st, 1);
	r->step = (int)col_i64(st, 2);
	col_text(st, 3, r->cause, sizeof r->cause);
	col_text(st, 4, r->evidence, sizeof r->evidence);
	col_text(st, 5, r->change, sizeof r->change);
	col_text(st, 6, r->settings, sizeof r->settings);
	r->predicted_peak_bytes = col_i64(st, 7);
	col_text(st, 8, r->recorded_at, sizeof r->recorded_at);
}

/* Every row sql selects (arg bound to its one parameter when not NULL),
 * each read by read into the next element (elem bytes) of a growing
 * array. Caller owns *rows (NULL when none); free(). */
static vf_status select_rows(struct vf_store *s, const char *sql, const char *arg, size_t elem,
			     void (*read)(sqlite3_stmt *, void *), void **rows, size_t *n, struct vf_error *err)
{
	*rows = NULL;
	*n = 0;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_fail(s, "prepare", err);
	if (arg)
		bind_text(st, 1, arg);
	char *v = NULL;
	size_t alloc = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == alloc) {
			size_t na = alloc ? alloc * 2 : 16;
			char *g = realloc(v, na * elem);
			if (!g) {
				rc = SQLITE_NOMEM;
				break;
			}
			v = g;
			alloc = na;
		}
		read(st, v + (*n)++ * elem);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(v);
		*n = 0;
		return rc == SQLITE_NOMEM ? vf_error_set(err, VF_ENOMEM, "%s: out of memory", s->path)
					  : db_fail(s, "select", err);
	}
	*rows = v;
	return VF_OK;
}

vf_status vf_store_find(struct vf_store *s, const char *config_hash, struct vf_trial *out,
			bool *found, struct vf_error *err)
{
	void *rows = NULL;
	size_t n = 0;
	char sql[512];
	trials_select(s, "WHERE config_hash = ?", sql, sizeof sql);
	vf_status st = s->version < 1 ? VF_OK /* a reader's empty database */
				      : select_rows(s, sql, config_hash, sizeof(struct vf_store_row), read_row,
						    &rows, &n, err);
	*found = st == VF_OK && n > 0;
	if (*found)
		*out = ((struct vf_store_row *)rows)[0].t;
	free(rows);
	return st;
}

vf_status vf_store_forget_run(struct vf_store *s, const char *run_dir, struct vf_error *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "DELETE FROM trials WHERE run_dir = ?", -1, &st, NULL) != SQLITE_OK)
		return db_fail(s, "prepare", err);
	bind_text(st, 1, run_dir);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? VF_OK : db_fail(s, "delete", err);
}

vf_status vf_store_list(struct vf_store *s, const char *run_dir, struct vf_store_row **rows,
			size_t *n, struct vf_error *err)
{
	char sql[512];
	trials_select(s, run_dir ? "WHERE run_dir = ? ORDER BY recorded_at, run_dir, trial_index"
				 : "ORDER BY recorded_at, run_dir, trial_index",
		      sql, sizeof sql);
	*rows = NULL;
	*n = 0;
	if (s->version < 1) /* a reader's empty database: no trials */
		return VF_OK;
	void *v;
	vf_status st = select_rows(s, sql, run_dir, sizeof **rows, read_row, &v, n, err);
	*rows = v;
	return st;
}

vf_status vf_store_list_at(const char *path, const char *run_dir, struct vf_store_row **rows, size_t *n,
			   struct vf_error *err)
{
	struct vf_store *st = NULL;
	*rows = NULL;
	*n = 0;
	vf_status s = vf_store_open_existing(path, &st, err);
	if (s == VF_ENOTFOUND) { /* the default location holds none yet */
		vf_error_clear(err);
		return VF_OK;
	}
	if (s)
		return s;
	s = vf_store_list(st, run_dir, rows, n, err);
	vf_store_close(st);
	return s;
}

vf_status vf_store_put_recovery(struct vf_store *s, const struct vf_store_recovery *r, struct vf_error *err)
{
	static const char sql[] =
		"INSERT OR REPLACE INTO recoveries (run_dir, attempt, step, cause, evidence, change, settings,"
		" predicted_peak_bytes, recorded_at) VALUES (?,?,?,?,?,?,?,?, strftime('%Y-%m-%dT%H:%M:%SZ','now'))";
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_fail(s, "prepare", err);
	bind_text(st, 1, r->run_dir);
	sqlite3_bind_int(st, 2, r->attempt);
	if (r->step >= 0)
		sqlite3_bind_int(st, 3, r->step);
	else
		sqlite3_bind_null(st, 3);
	bind_text(st, 4, r->cause);
	bind_text(st, 5, r->evidence);
	bind_text(st, 6, r->change);
	bind_text(st, 7, r->settings);
	bind_i64_or_null(st, 8, r->predicted_peak_bytes);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? VF_OK : db_fail(s, "insert", err);
}

vf_status vf_store_list_recoveries(struct vf_store *s, const char *run_dir, struct vf_store_recovery_row **rows,
				   size_t *n, struct vf_error *err)
{
	const char *sql = run_dir ? "SELECT " RECOVERY_COLS " FROM recoveries WHERE run_dir = ? ORDER BY attempt"
				  : "SELECT " RECOVERY_COLS " FROM recoveries ORDER BY run_dir, attempt";
	*rows = NULL;
	*n = 0;
	if (s->version < 3) /* a reader's history from before vramfit run: none */
		return VF_OK;
	void *v;
	vf_status st = select_rows(s, sql, run_dir, sizeof **rows, read_recovery, &v, n, err);
	*rows = v;
	return st;
}
