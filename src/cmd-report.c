/* cmd-report.c - `vramfit report KIND ...`: one self-contained HTML page
 * (lib/report/) for an estimate, a fit, a tune run directory or the
 * history. `report estimate` and `report fit` run those commands with
 * --html FILE (their text output silenced); a run directory and the
 * history are read from the history database. --open hands the page to
 * xdg-open when there is a display. */
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "parse-options.h"
#include "vramfit/report/report.h"

extern const struct vf_cli_command vf_cmd_estimate, vf_cmd_fit;
extern char **environ;

#define MAX_ARGS 256

static const char usage[] =
	"usage: vramfit report estimate MODEL [setup flags] [--gpu SPEC]... [-o FILE] [--open]\n"
	"       vramfit report fit MODEL [fit flags] [-o FILE] [--open]\n"
	"       vramfit report RUN_DIR [--history PATH] [-o FILE] [--open]\n"
	"       vramfit report history [--history PATH] [-o FILE] [--open]\n"
	"\n"
	"Write one self-contained HTML page (inline SVG charts and CSS, no network,\n"
	"readable without JavaScript, light and dark, prints on A4) with the numbers\n"
	"beside every chart and the report's data embedded as one JSON object\n"
	"(<script id=\"vramfit-data\">).\n"
	"\n"
	"  estimate MODEL  memory at each phase of a step stacked by term with each GPU's\n"
	"                  capacity, peak vs micro-batch per GPU, step time and tokens/s\n"
	"                  vs micro-batch, every assumption (flags as vramfit estimate;\n"
	"                  same as estimate --html FILE). Default FILE: MODEL.html\n"
	"  fit MODEL       GPUs x GPU counts coloured by fit and largest micro-batch, time\n"
	"                  and cost per cell, the cost-time Pareto front with the chosen\n"
	"                  settings (flags as vramfit fit; same as fit --html FILE).\n"
	"                  Default FILE: MODEL-fit.html\n"
	"  RUN_DIR         a tune run: the plan's decisions, every trial's change and\n"
	"                  outcome, step time per logged step, memory over time (from\n"
	"                  RUN_DIR/logs/trial-N.samples), predicted vs measured peak, the\n"
	"                  winner and its saving. Default FILE: RUN_DIR/report.html (tune\n"
	"                  writes it at the end of a sweep)\n"
	"  history         predicted vs measured peak over all recorded trials, the error\n"
	"                  by run and by setup change, measured step times.\n"
	"                  Default FILE: history.html\n";

struct report_args {
	const char *output, *history;
	bool open;
};

#define OPT_T struct report_args
static const struct vf_option options[] = {
	{.type = VF_OPT_STRING, .name = "output", .short_name = 'o', .argh = "FILE",
	 .help = "where to write the page (written atomically)", .off = offsetof(OPT_T, output),
	 .flags = VF_OPTF_NONEMPTY, .complete = "file"},
	OPT_BOOL("open", open, "open it with xdg-open when a display is available"),
	OPT_FILE("history", "PATH", history, "the history database (default as vramfit history)"),
	OPT_END(),
};
#undef OPT_T

static const char tail[] =
	"Exit status: 0 written, 1 failure (e.g. no trials recorded), 2 usage error.\n";

/* Run an estimate/fit command with --html, its stdout silenced. */
static int run_with_html(const struct vf_cli_command *cmd, int argc, char **argv, const char *out)
{
	char *args[MAX_ARGS + 3];
	int n = 0;
	args[n++] = (char *)cmd->name;
	for (int i = 0; i < argc && n < MAX_ARGS; i++)
		args[n++] = argv[i];
	args[n++] = "--html";
	args[n++] = (char *)out;
	args[n] = NULL;
	fflush(stdout);
	int saved = dup(1), null = open("/dev/null", O_WRONLY);
	if (saved >= 0 && null >= 0)
		dup2(null, 1);
	int rc = cmd->run(n, args);
	fflush(stdout);
	if (saved >= 0) {
		dup2(saved, 1);
		close(saved);
	}
	if (null >= 0)
		close(null);
	return rc;
}

static void open_page(const char *path)
{
	const char *d = getenv("DISPLAY"), *wd = getenv("WAYLAND_DISPLAY");
	if (!(d && *d) && !(wd && *wd)) {
		vf_cli_note("no display: open %s in a browser", path);
		return;
	}
	char *av[] = {"xdg-open", (char *)path, NULL};
	pid_t pid;
	if (posix_spawnp(&pid, "xdg-open", NULL, NULL, av, environ) != 0)
		vf_cli_warn("xdg-open not found: open %s in a browser", path);
}

/* The default page name for a MODEL argument: its last path part. */
static void model_name(const char *model, const char *suffix, char *out, size_t n)
{
	size_t len = strlen(model);
	while (len > 1 && model[len - 1] == '/')
		len--;
	const char *b = model;
	for (size_t i = 0; i < len; i++)
		if (model[i] == '/')
			b = model + i + 1;
	snprintf(out, n, "%.*s%s.html", (int)(len - (size_t)(b - model)), b, suffix);
}

/* Whether dir holds what `vramfit plan` writes into a run workspace. */
static bool is_workspace(const char *dir)
{
	static const char *const marks[] = {"config.yaml", "plan.md", "plan.json"};
	char path[4096];
	for (size_t i = 0; i < sizeof marks / sizeof *marks; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, marks[i]);
		if (access(path, F_OK) == 0)
			return true;
	}
	return false;
}

/* The report of a run directory or of the history. */
static int stored_report(const char *run_dir, const char *db, const char *out, bool out_named, char *plan_page,
			 size_t plan_n)
{
	struct vf_error err = {0};
	cJSON *data = NULL;
	vf_status st = run_dir ? vf_report_run_data(run_dir, db, 0, &data, &err)
			       : vf_report_history_data(db, &data, &err);
	if (st == VF_ENOTFOUND && run_dir) {
		/* before tune: the page that exists is the plan's */
		char plan[4096];
		struct vf_buf b;
		snprintf(plan, sizeof plan, "%s/plan.html", run_dir);
		vf_buf_init(&b, 1u << 24);
		if (vf_buf_read_file(&b, plan, 1u << 24, NULL) == VF_OK && b.data) {
			struct vf_error e2 = {0};
			vf_status ws = out_named ? vf_write_file_atomic(out, b.data, b.len, &e2) : VF_OK;
			vf_buf_release(&b);
			if (ws)
				return vf_cli_fail_err(&e2);
			snprintf(plan_page, plan_n, "%s", out_named ? out : plan);
			return VF_EXIT_OK;
		}
		vf_buf_release(&b);
		if (!is_workspace(run_dir))
			return vf_cli_fail("%s: not a run workspace: expected config.yaml or plan.md (vramfit plan "
					   "writes them) or trials recorded by vramfit tune",
					   run_dir);
	}
	if (st)
		return vf_cli_fail_err(&err);
	/* the default, RUN/report.html, never through a link; a file named
	 * with -o is the user's choice */
	st = run_dir && !out_named ? vf_report_write_run(data, run_dir, "report.html", &err) : vf_report_write(data, out, &err);
	cJSON_Delete(data);
	return st ? vf_cli_fail_err(&err) : VF_EXIT_OK;
}

static int run(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		if (argc < 2)
			return vf_cli_usage("report", "expected estimate, fit, history or a RUN_DIR");
		fputs(usage, stdout);
		return VF_EXIT_OK;
	}
	const char *kind = argv[1];
	bool fit = strcmp(kind, "fit") == 0, passthrough = fit || strcmp(kind, "estimate") == 0;
	struct report_args ra = {0};
	int nrest, prc = vf_opt_parse("report", options, &ra, argc - 1, argv + 1,
				      passthrough ? VF_PARSE_KEEP_UNKNOWN : 0, &nrest);
	if (prc >= 0)
		return prc;
	if (nrest > MAX_ARGS)
		return vf_cli_usage("report", "too many arguments");
	if (!passthrough && nrest)
		return vf_cli_usage("report", "unexpected argument '%s'", argv[1]);
	if (passthrough && ra.history)
		return vf_cli_usage("report", "--history goes with a RUN_DIR or history");
	if (ra.history && access(ra.history, F_OK) != 0) /* a typo: a read creates nothing */
		return vf_cli_fail("%s: no such history database (vramfit tune writes it)", ra.history);
	char **rest = argv + 1;
	const char *out = ra.output, *db = ra.history;
	bool open = ra.open;
	char name[PATH_MAX], plan_page[PATH_MAX + 16] = "";
	int rc;
	if (passthrough) {
		if (!out && (nrest == 0 || rest[0][0] == '-'))
			return vf_cli_usage("report", "%s: give MODEL first, or -o FILE", kind);
		if (!out)
			model_name(rest[0], fit ? "-fit" : "", name, sizeof name);
		rc = run_with_html(fit ? &vf_cmd_fit : &vf_cmd_estimate, nrest, rest, out ? out : name);
	} else if (strcmp(kind, "history") == 0) {
		rc = stored_report(NULL, db, out ? out : "history.html", true, plan_page, sizeof plan_page);
	} else {
		struct stat sb;
		if (kind[0] == '-')
			return vf_cli_usage("report", "unknown option '%s'", kind);
		if (stat(kind, &sb) != 0 || !S_ISDIR(sb.st_mode))
			return vf_cli_usage("report", "%s: %s (report takes estimate, fit, history or a run directory)",
					    kind, stat(kind, &sb) != 0 ? "no such directory" : "not a directory");
		if (!out)
			snprintf(name, sizeof name, "%s/report.html", kind);
		rc = stored_report(kind, db, out ? out : name, out != NULL, plan_page, sizeof plan_page);
	}
	if (rc)
		return rc;
	const char *path = out ? out : (strcmp(kind, "history") == 0 ? "history.html" : name);
	if (plan_page[0]) { /* before tune: the plan's page */
		path = plan_page;
		printf("%s: no trials recorded yet (vramfit tune adds the run's page); the plan's page: %s\n", kind, path);
	} else {
		printf("wrote %s\n", path);
	}
	if (open)
		open_page(path);
	return VF_EXIT_OK;
}

const struct vf_cli_command vf_cmd_report = {
	.name = "report",
	.summary = "one self-contained HTML page with charts: estimate, fit, a tune run, the history",
	.usage = usage,
	.options = options,
	.tail = tail,
	.run = run,
};
