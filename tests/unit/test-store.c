/* test-store.c - the SQLite trial history: schema, put/find/replace, NULLs
 * for unknowns, listing, forgetting a run, a newer schema refused; a
 * reader that writes nothing (an older schema read as it is, an empty
 * file left empty); another program's database refused, its bytes kept. */
#include <stdlib.h>
#include <unistd.h>

#include <sqlite3.h>

#include "vf_test.h"
#include "vramfit/tune/store.h"

static char dir[64];

static void test_default_path(void)
{
	char p[1024];
	unsetenv("VRAMFIT_HISTORY");
	setenv("XDG_DATA_HOME", "/tmp/xdg", 1);
	CHECK_STR(vf_store_default_path(p, sizeof p), "/tmp/xdg/vramfit/history.db");
	unsetenv("XDG_DATA_HOME");
	setenv("HOME", "/home/u", 1);
	CHECK_STR(vf_store_default_path(p, sizeof p), "/home/u/.local/share/vramfit/history.db");
	setenv("VRAMFIT_HISTORY", "/x/h.db", 1);
	CHECK_STR(vf_store_default_path(p, sizeof p), "/x/h.db");
	unsetenv("VRAMFIT_HISTORY");
}

static void test_hash(void)
{
	char a[17], b[17], c[17];
	vf_store_hash("abc", 3, "cmd", a);
	vf_store_hash("abc", 3, "cmd", b);
	vf_store_hash("abd", 3, "cmd", c);
	CHECK_STR(a, b);
	CHECK(strcmp(a, c) != 0);
	vf_store_hash("abc", 3, "cmd2", c);
	CHECK(strcmp(a, c) != 0);
	CHECK_INT(strlen(a), 16);
}

static void test_put_find_list(void)
{
	char path[128];
	snprintf(path, sizeof path, "%s/sub/dir/history.db", dir);
	struct vf_error err = {0};
	struct vf_store *s = NULL;
	CHECK(vf_store_open(path, &s, &err) == VF_OK);
	if (!s) {
		fprintf(stderr, "  %s\n", err.msg);
		return;
	}
	struct vf_store_ctx ctx = {.run_dir = "/runs/a", .trainer = "ltx2", .gpu = "cpu", .tier = NULL};
	struct vf_trial t;
	vf_trial_init(&t);
	t.index = 1;
	snprintf(t.change, sizeof t.change, "baseline");
	snprintf(t.config_hash, sizeof t.config_hash, "00000000000000aa");
	t.outcome = VF_OUTCOME_OK;
	t.status = 0;
	t.steps_done = 50;
	t.step_seconds = 0.25;
	t.peak_bytes = 1000;
	t.predicted_peak_bytes = 1100;
	t.wall_seconds = 12.5;
	CHECK(vf_store_put(s, &ctx, &t, &err) == VF_OK);
	struct vf_trial u;
	vf_trial_init(&u);
	snprintf(u.config_hash, sizeof u.config_hash, "00000000000000bb");
	u.index = 2;
	snprintf(u.change, sizeof u.change, "quantization off");
	snprintf(u.deltas, sizeof u.deltas, "{\"acceleration.quantization\": null}");
	u.outcome = VF_OUTCOME_OOM;
	snprintf(u.evidence, sizeof u.evidence, "CUDA out of memory");
	CHECK(vf_store_put(s, &ctx, &u, &err) == VF_OK);

	struct vf_trial got;
	bool found = false;
	CHECK(vf_store_find(s, "00000000000000bb", &got, &found, &err) == VF_OK);
	CHECK(found);
	CHECK_STR(vf_outcome_name(got.outcome), "oom");
	CHECK_INT(got.status, -1);
	CHECK(got.step_seconds < 0);
	CHECK_INT(got.peak_bytes, -1);
	CHECK_STR(got.deltas, "{\"acceleration.quantization\": null}");
	CHECK(vf_store_find(s, "ffff", &got, &found, &err) == VF_OK);
	CHECK(!found);

	/* replace by hash */
	u.outcome = VF_OUTCOME_OK;
	CHECK(vf_store_put(s, &ctx, &u, &err) == VF_OK);
	struct vf_store_row *rows;
	size_t n;
	CHECK(vf_store_list(s, "/runs/a", &rows, &n, &err) == VF_OK);
	CHECK_INT(n, 2);
	if (n == 2) {
		CHECK_INT(rows[0].t.index, 1);
		CHECK_INT(rows[0].t.predicted_peak_bytes, 1100);
		CHECK(rows[0].t.step_seconds == 0.25);
		CHECK_STR(rows[0].gpu, "cpu");
		CHECK_STR(vf_outcome_name(rows[1].t.outcome), "ok");
		CHECK_INT(strlen(rows[0].recorded_at), 20);
	}
	free(rows);
	CHECK(vf_store_list(s, "/runs/other", &rows, &n, &err) == VF_OK);
	CHECK_INT(n, 0);
	free(rows);
	CHECK(vf_store_forget_run(s, "/runs/a", &err) == VF_OK);
	CHECK(vf_store_list(s, NULL, &rows, &n, &err) == VF_OK);
	CHECK_INT(n, 0);
	free(rows);
	vf_store_close(s);

	/* WAL is on */
	sqlite3 *db;
	CHECK(sqlite3_open(path, &db) == SQLITE_OK);
	sqlite3_stmt *st;
	CHECK(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL) == SQLITE_OK);
	CHECK(sqlite3_step(st) == SQLITE_ROW);
	CHECK_STR((const char *)sqlite3_column_text(st, 0), "wal");
	sqlite3_finalize(st);
	/* a newer schema is refused */
	CHECK(sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(db);
	CHECK(vf_store_open(path, &s, &err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "schema version 99 is newer");
	CHECK(s == NULL);
}

/* A version-1 history (before the predicted step time) is migrated in
 * place: its records kept, the new column empty; a new record keeps the
 * estimate's step time. */
static void test_migrate_v1(void)
{
	char path[128];
	snprintf(path, sizeof path, "%s/v1.db", dir);
	sqlite3 *db;
	CHECK(sqlite3_open(path, &db) == SQLITE_OK);
	CHECK(sqlite3_exec(db,
			   "CREATE TABLE trials (config_hash TEXT PRIMARY KEY, run_dir TEXT NOT NULL, trainer TEXT,"
			   " gpu TEXT, tier TEXT, trial_index INTEGER NOT NULL, change TEXT NOT NULL, deltas TEXT NOT NULL,"
			   " outcome TEXT NOT NULL, evidence TEXT, exit_status INTEGER, steps_done INTEGER, step_seconds REAL,"
			   " peak_bytes INTEGER, predicted_peak_bytes INTEGER, wall_seconds REAL, recorded_at TEXT NOT NULL);"
			   "INSERT INTO trials VALUES ('old', '/runs/v1', 'ltx2', 'gpu', NULL, 1, 'baseline', '{}', 'ok', '',"
			   " 0, 50, 1.5, 1000, 2000, 80.0, '2026-01-01T00:00:00Z');"
			   "PRAGMA user_version = 1;",
			   NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(db);
	struct vf_error err = {0};
	struct vf_store *s = NULL;
	CHECK(vf_store_open(path, &s, &err) == VF_OK);
	struct vf_trial t;
	bool found = false;
	CHECK(vf_store_find(s, "old", &t, &found, &err) == VF_OK);
	CHECK(found);
	CHECK_INT(t.predicted_peak_bytes, 2000);
	CHECK(t.predicted_step_seconds < 0);
	vf_trial_init(&t);
	snprintf(t.config_hash, sizeof t.config_hash, "new");
	snprintf(t.change, sizeof t.change, "quantization off");
	t.index = 2;
	t.outcome = VF_OUTCOME_OK;
	t.predicted_step_seconds = 2.25;
	struct vf_store_ctx ctx = {.run_dir = "/runs/v1", .trainer = "ltx2", .gpu = "gpu"};
	CHECK(vf_store_put(s, &ctx, &t, &err) == VF_OK);
	CHECK(vf_store_find(s, "new", &t, &found, &err) == VF_OK);
	CHECK(found && t.predicted_step_seconds == 2.25);
	vf_store_close(s);
}

/* A version-2 history (before vramfit run's recoveries) is migrated in
 * place: its trials read as before, an empty recoveries table that keeps
 * what vramfit run records, one row per run and attempt. */
static void test_migrate_v2_recoveries(void)
{
	char path[128];
	snprintf(path, sizeof path, "%s/v2.db", dir);
	sqlite3 *db;
	CHECK(sqlite3_open(path, &db) == SQLITE_OK);
	CHECK(sqlite3_exec(db,
			   "CREATE TABLE trials (config_hash TEXT PRIMARY KEY, run_dir TEXT NOT NULL, trainer TEXT,"
			   " gpu TEXT, tier TEXT, trial_index INTEGER NOT NULL, change TEXT NOT NULL, deltas TEXT NOT NULL,"
			   " outcome TEXT NOT NULL, evidence TEXT, exit_status INTEGER, steps_done INTEGER, step_seconds REAL,"
			   " peak_bytes INTEGER, predicted_peak_bytes INTEGER, wall_seconds REAL, recorded_at TEXT NOT NULL,"
			   " predicted_step_seconds REAL);"
			   "INSERT INTO trials VALUES ('v2', '/runs/v2', 'ltx2', 'gpu', NULL, 1, 'baseline', '{}', 'oom', 'x',"
			   " 1, 7, NULL, 3000, 2000, 9.0, '2026-02-01T00:00:00Z', 0.5);"
			   "PRAGMA user_version = 2;",
			   NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(db);
	struct vf_error err = {0};
	struct vf_store *s = NULL;
	CHECK(vf_store_open(path, &s, &err) == VF_OK);
	struct vf_store_row *rows = NULL;
	size_t n = 0;
	CHECK(vf_store_list(s, "/runs/v2", &rows, &n, &err) == VF_OK);
	CHECK_INT(n, 1);
	if (n == 1) {
		CHECK(rows[0].t.outcome == VF_OUTCOME_OOM && rows[0].t.predicted_step_seconds == 0.5);
		CHECK(rows[0].t.step_seconds < 0 && rows[0].t.peak_bytes == 3000);
	}
	free(rows);
	struct vf_store_recovery_row *rr = NULL;
	CHECK(vf_store_list_recoveries(s, "/runs/v2", &rr, &n, &err) == VF_OK);
	CHECK_INT(n, 0);
	free(rr);
	struct vf_store_recovery rec = {.run_dir = "/runs/v2", .attempt = 1, .step = 69, .cause = "oom",
					.evidence = "CUDA out of memory", .change = "use the 8-bit optimizer",
					.settings = "{\"optimization.optimizer_type\": \"\\\"adamw8bit\\\"\"}",
					.predicted_peak_bytes = -1};
	CHECK(vf_store_put_recovery(s, &rec, &err) == VF_OK);
	rec.attempt = 2;
	rec.step = -1;
	rec.predicted_peak_bytes = 5000;
	CHECK(vf_store_put_recovery(s, &rec, &err) == VF_OK);
	CHECK(vf_store_put_recovery(s, &rec, &err) == VF_OK); /* the same attempt replaces */
	CHECK(vf_store_list_recoveries(s, "/runs/v2", &rr, &n, &err) == VF_OK);
	CHECK_INT(n, 2);
	if (n == 2) {
		CHECK(rr[0].attempt == 1 && rr[0].step == 69 && rr[0].predicted_peak_bytes == -1);
		CHECK_STR(rr[0].cause, "oom");
		CHECK_STR(rr[0].change, "use the 8-bit optimizer");
		CHECK_CONTAINS(rr[0].settings, "adamw8bit");
		CHECK(rr[1].attempt == 2 && rr[1].step == -1 && rr[1].predicted_peak_bytes == 5000);
		CHECK_INT(strlen(rr[1].recorded_at), 20);
	}
	free(rr);
	/* every run's (run_dir NULL, for vramfit history): by run, then attempt */
	rec.run_dir = "/runs/a-first";
	rec.attempt = 3;
	CHECK(vf_store_put_recovery(s, &rec, &err) == VF_OK);
	CHECK(vf_store_list_recoveries(s, NULL, &rr, &n, &err) == VF_OK);
	CHECK_INT(n, 3);
	if (n == 3) {
		CHECK_STR(rr[0].run_dir, "/runs/a-first");
		CHECK(rr[1].attempt == 1 && rr[2].attempt == 2);
		CHECK_STR(rr[2].run_dir, "/runs/v2");
	}
	free(rr);
	vf_store_close(s);
	CHECK(sqlite3_open(path, &db) == SQLITE_OK);
	sqlite3_stmt *st;
	CHECK(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK);
	CHECK(sqlite3_step(st) == SQLITE_ROW);
	CHECK_INT(sqlite3_column_int(st, 0), 3);
	sqlite3_finalize(st);
	sqlite3_close(db);
}

static void test_not_a_database(void)
{
	char path[128];
	snprintf(path, sizeof path, "%s/junk.db", dir);
	FILE *f = fopen(path, "w");
	fputs("this is not sqlite, just text long enough to be a header........", f);
	fclose(f);
	struct vf_error err = {0};
	struct vf_store *s = NULL;
	CHECK(vf_store_open(path, &s, &err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "junk.db");
	vf_store_close(s);
}

/* The bytes of path into buf (at most n); their count, -1 unreadable. */
static long file_bytes(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	long got = (long)fread(buf, 1, n, f);
	fclose(f);
	return got;
}

static void exec_sql(const char *path, const char *sql)
{
	sqlite3 *db;
	CHECK(sqlite3_open(path, &db) == SQLITE_OK);
	CHECK(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(db);
}

static char before[1 << 16], after[1 << 16];

/* A reader opens a schema-1 history read-only: its trial read (no
 * predicted step time, no recoveries), nothing migrated, not a byte
 * written. */
static void test_reader_v1(void)
{
	char path[128];
	snprintf(path, sizeof path, "%s/reader-v1.db", dir);
	exec_sql(path, "CREATE TABLE trials (config_hash TEXT PRIMARY KEY, run_dir TEXT NOT NULL, trainer TEXT,"
		       " gpu TEXT, tier TEXT, trial_index INTEGER NOT NULL, change TEXT NOT NULL, deltas TEXT NOT NULL,"
		       " outcome TEXT NOT NULL, evidence TEXT, exit_status INTEGER, steps_done INTEGER, step_seconds REAL,"
		       " peak_bytes INTEGER, predicted_peak_bytes INTEGER, wall_seconds REAL, recorded_at TEXT NOT NULL);"
		       "INSERT INTO trials VALUES ('old', '/runs/v1', 'ltx2', 'gpu', NULL, 1, 'baseline', '{}', 'ok', '',"
		       " 0, 50, 1.5, 1000, 2000, 80.0, '2026-01-01T00:00:00Z');"
		       "PRAGMA user_version = 1;");
	long nb = file_bytes(path, before, sizeof before);
	CHECK(nb > 0);
	struct vf_error err = {0};
	struct vf_store *s = NULL;
	CHECK(vf_store_open_existing(path, &s, &err) == VF_OK);
	struct vf_store_row *rows = NULL;
	size_t n = 0;
	CHECK(s && vf_store_list(s, NULL, &rows, &n, &err) == VF_OK);
	CHECK_INT(n, 1);
	if (n == 1)
		CHECK(rows[0].t.predicted_peak_bytes == 2000 && rows[0].t.predicted_step_seconds < 0);
	free(rows);
	struct vf_store_recovery_row *rr = NULL;
	CHECK(s && vf_store_list_recoveries(s, NULL, &rr, &n, &err) == VF_OK);
	CHECK_INT(n, 0);
	free(rr);
	vf_store_close(s);
	CHECK(file_bytes(path, after, sizeof after) == nb && memcmp(before, after, (size_t)nb) == 0);
	CHECK(vf_store_check(path, &err) == VF_OK);
}

/* An empty file: a reader reads no trials and leaves it empty; a writer
 * makes it a history. */
static void test_reader_empty_file(void)
{
	char path[128];
	snprintf(path, sizeof path, "%s/empty.db", dir);
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (f)
		fclose(f);
	struct vf_error err = {0};
	struct vf_store *s = NULL;
	CHECK(vf_store_open_existing(path, &s, &err) == VF_OK);
	struct vf_store_row *rows = NULL;
	size_t n = 1;
	CHECK(s && vf_store_list(s, NULL, &rows, &n, &err) == VF_OK && n == 0 && rows == NULL);
	struct vf_trial t;
	bool found = true;
	CHECK(s && vf_store_find(s, "x", &t, &found, &err) == VF_OK && !found);
	vf_store_close(s);
	CHECK(file_bytes(path, after, sizeof after) == 0);
	CHECK(vf_store_check(path, &err) == VF_OK);
	CHECK(vf_store_open(path, &s, &err) == VF_OK);
	vf_store_close(s);
	CHECK(file_bytes(path, after, sizeof after) > 0);
}

/* expect_refused(path, what): every open of path refused with what, the
 * file's bytes as they were */
static void expect_refused(const char *path, const char *what)
{
	long nb = file_bytes(path, before, sizeof before);
	struct vf_error err = {0};
	struct vf_store *s = NULL;
	CHECK(vf_store_open(path, &s, &err) == VF_ERR && s == NULL);
	CHECK_CONTAINS(err.msg, what);
	CHECK(strchr(err.msg, '\n') == NULL);
	vf_error_clear(&err);
	CHECK(vf_store_open_existing(path, &s, &err) == VF_ERR && s == NULL);
	CHECK_CONTAINS(err.msg, what);
	vf_error_clear(&err);
	CHECK(vf_store_check(path, &err) == VF_ERR);
	CHECK_CONTAINS(err.msg, what);
	struct vf_store_row *rows = NULL;
	size_t n = 0;
	CHECK(vf_store_list_at(path, NULL, &rows, &n, &err) == VF_ERR && rows == NULL);
	CHECK(file_bytes(path, after, sizeof after) == nb && memcmp(before, after, (size_t)nb) == 0);
}

/* Another program's database (tables, no vramfit schema) is refused by
 * writers and readers alike, before a byte is written. */
static void test_foreign(void)
{
	char path[128], msg[256];
	snprintf(path, sizeof path, "%s/foreign.db", dir);
	exec_sql(path, "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT);"
		       "CREATE TABLE trades (id INTEGER, what TEXT); INSERT INTO users VALUES (1, 'ada');");
	snprintf(msg, sizeof msg,
		 "%s: not a vramfit history (it has tables trades, users and no vramfit tables); name another "
		 "history database",
		 path);
	expect_refused(path, msg);
	/* a table of its own named trials, however the user_version reads */
	exec_sql(path, "CREATE TABLE trials (id INTEGER, arm TEXT); PRAGMA user_version = 2;");
	expect_refused(path, "(it has tables trades, trials, users and no vramfit schema)");
	/* many tables: six named, then the count; a control byte in a name is no line break */
	exec_sql(path, "CREATE TABLE a1 (x); CREATE TABLE a2 (x); CREATE TABLE a3 (x); CREATE VIEW \"a\nb\" AS "
		       "SELECT 1;");
	expect_refused(path, "(it has tables a?b, a1, a2, a3, trades, trials, ... (7 tables) and no vramfit schema)");
	/* no tables, but another program's user_version */
	snprintf(path, sizeof path, "%s/versioned.db", dir);
	exec_sql(path, "PRAGMA user_version = 7;");
	expect_refused(path, "not a vramfit history (it has no tables but user_version 7)");
}

int main(void)
{
	snprintf(dir, sizeof dir, "/tmp/vf-test-store-XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	RUN(test_default_path);
	RUN(test_hash);
	RUN(test_put_find_list);
	RUN(test_not_a_database);
	RUN(test_migrate_v1);
	RUN(test_migrate_v2_recoveries);
	RUN(test_reader_v1);
	RUN(test_reader_empty_file);
	RUN(test_foreign);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		return 1;
	return vf_test_done();
}
