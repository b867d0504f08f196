/* sbatch.c - write and check RUN/launch.sbatch (see sbatch.h). The launch
 * line is the profile's (configs.json launch.slurm); vramfit fills in the
 * counts, the config path and the port, Slurm the rank and the address. */
#include "vramfit/trainer/sbatch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vramfit/base/json.h"
#include "vramfit/base/rundir.h"
#include "vramfit/base/shquote.h"
#include "vramfit/trainer/profile.h"

/* sbatch reads an #SBATCH line's arguments its own way (not the shell's):
 * a backslash takes the next byte as it is, anywhere; '...' or "..." group
 * (spaces included), the other quote and # inside being plain; an unquoted
 * # ends the line. A line cannot hold a newline. So a value goes in double
 * quotes with \ before every \ and " (one with nothing special in it goes
 * as it is). In a file-name pattern (--output) %
 * is written %%, and a \ in the name would turn every %j off: refused. */
static vf_status sbatch_arg(struct vf_buf *b, const char *opt, const char *val, bool pattern, const char *what,
			    struct vf_error *err)
{
	for (const char *c = val; *c; c++) {
		if (*c == '\n' || *c == '\r')
			return vf_error_set(err, VF_ERR, "%s %s: holds a line break, which an #SBATCH --%s line cannot "
					    "carry (sbatch reads each directive from one line); choose one without it",
					    what, val, opt);
		if (pattern && *c == '\\')
			return vf_error_set(err, VF_ERR, "%s %s: holds a backslash, which #SBATCH --%s cannot take "
					    "(a \\ in the file name turns sbatch's %%j off); choose a path without it",
					    what, val, opt);
	}
	bool plain = true; /* nothing sbatch reads specially: written as it is */
	for (const char *c = val; *c && plain; c++)
		plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
			strchr("_-./:=@%+,", *c);
	vf_buf_printf(b, NULL, "#SBATCH --%s=%s", opt, plain ? "" : "\"");
	for (const char *c = val; *c; c++) {
		if (*c == '\\' || *c == '"')
			vf_buf_puts(b, "\\", NULL);
		vf_buf_append(b, c, 1, NULL);
		if (pattern && *c == '%')
			vf_buf_puts(b, "%", NULL);
	}
	if (pattern)
		vf_buf_puts(b, "/logs/slurm-%j.out", NULL);
	return vf_buf_puts(b, plain ? "\n" : "\"\n", NULL);
}

/* The value of an #SBATCH argument as sbatch reads it (the reverse of
 * sbatch_arg): s up to the end of the line or an unquoted #. false: an
 * unmatched quote (sbatch refuses the script). */
static bool sbatch_value(const char *s, struct vf_buf *out)
{
	char q = 0;
	bool esc = false;
	for (; *s && *s != '\n' && (q || (*s != ' ' && *s != '\t')); s++) {
		if (esc)
			esc = false;
		else if (*s == '\\') {
			esc = true;
			continue;
		} else if (q && *s == q) {
			q = 0;
			continue;
		} else if (!q && (*s == '"' || *s == '\'')) {
			q = *s;
			continue;
		} else if (!q && *s == '#')
			break;
		vf_buf_append(out, s, 1, NULL);
	}
	if (!out->data)
		vf_buf_puts(out, "", NULL);
	return !q;
}

/* Replace {name} of vars in tpl (unknown names stay); every other $ is
 * escaped, so $SLURM_NODEID and $MAIN_ADDR are expanded by the launcher's
 * own shell on each node, not by the batch script on the first. */
static void fill(struct vf_buf *b, const char *tpl, const char *const *vars)
{
	for (const char *p = tpl; *p;) {
		bool done = false;
		for (int i = 0; *p == '{' && vars[i]; i += 2) {
			size_t n = strlen(vars[i]);
			if (strncmp(p + 1, vars[i], n) == 0 && p[1 + n] == '}') {
				vf_buf_puts(b, vars[i + 1], NULL);
				p += n + 2;
				done = true;
				break;
			}
		}
		if (!done && *p == '$')
			vf_buf_puts(b, "\\", NULL);
		if (!done)
			vf_buf_append(b, p++, 1, NULL);
	}
}

/* --time from the estimate: steps x step time, + margin, + start-up. */
static void time_limit(const struct vf_plan *p, const cJSON *sl, struct vf_sbatch_info *info)
{
	double margin = 25, startup = 20;
	vf_json_get_double(sl, "time_margin_pct", &margin);
	vf_json_get_double(sl, "startup_minutes", &startup);
	if (!p->has_estimate || !(p->estimate.step_seconds > 0) || p->steps <= 0) {
		info->time_s = 0;
		snprintf(info->time_note, sizeof info->time_note, "no --time: no step-time estimate for this plan (%s); "
			 "the partition's default limit applies",
			 p->estimate_note[0] ? p->estimate_note : "see plan.md");
		return;
	}
	double run = p->estimate.step_seconds * (double)p->steps;
	info->time_s = run * (1 + margin / 100) + startup * 60;
	snprintf(info->time_note, sizeof info->time_note,
		 "--time: %lld steps x %.2f s (estimate) = %.2f h, + %.0f %% margin, + %.0f min start-up", (long long)p->steps,
		 p->estimate.step_seconds, run / 3600, margin, startup);
}

static void hms(char *out, size_t n, double s)
{
	long long t = (long long)(s + 59) / 60 * 60; /* whole minutes, rounded up */
	long long d = t / 86400, h = t % 86400 / 3600, m = t % 3600 / 60;
	if (d)
		snprintf(out, n, "%lld-%02lld:%02lld:00", d, h, m);
	else
		snprintf(out, n, "%02lld:%02lld:00", h, m);
}

static vf_status header(const struct vf_plan *p, const struct vf_sbatch_opts *o, struct vf_sbatch_info *info,
		       struct vf_buf *b, struct vf_error *err)
{
	/* the run directory goes into comment lines: a line break there would
	 * start a line of script */
	if (strpbrk(p->run_dir, "\n\r"))
		return vf_error_set(err, VF_ERR, "%s: the run directory holds a line break, which launch.sbatch "
				    "cannot carry (sbatch reads one line per #SBATCH directive); choose a path without it",
				    p->run_dir);
	char script[VF_PLAN_PATH + 32];
	snprintf(script, sizeof script, "%s/launch.sbatch", p->run_dir);
	vf_buf_printf(b, NULL, "#!/bin/bash\n# launch.sbatch - written by vramfit plan --slurm for %s\n"
			       "# %d node%s x %d GPU%s (%s), %lld steps. Submit: sbatch ",
		      p->run_dir, info->nodes, info->nodes > 1 ? "s" : "", info->gpus_per_node,
		      info->gpus_per_node > 1 ? "s" : "", p->gpu_name, (long long)p->steps);
	vf_shell_quote(b, script, NULL);
	vf_buf_printf(b, NULL, "\n# %s\n", info->time_note);
	vf_status st = sbatch_arg(b, "job-name", p->run_name[0] ? p->run_name : "ltx-train", false, "the run name", err);
	if (st)
		return st;
	vf_buf_printf(b, NULL, "#SBATCH --nodes=%d\n#SBATCH --ntasks-per-node=1\n#SBATCH --gres=gpu:%d\n",
		      info->nodes, info->gpus_per_node);
	if ((st = sbatch_arg(b, "output", p->run_dir, true, "the run directory", err)))
		return st;
	if (info->time_s > 0) {
		char t[32];
		hms(t, sizeof t, info->time_s);
		vf_buf_printf(b, NULL, "#SBATCH --time=%s\n", t);
	}
	const char *names[] = {"partition", "account", "qos"};
	const char *what[] = {"--partition", "--account", "--qos"};
	const char *vals[] = {o->partition, o->account, o->qos};
	for (int i = 0; i < 3 && st == VF_OK; i++)
		if (vals[i] && *vals[i])
			st = sbatch_arg(b, names[i], vals[i], false, what[i], err);
	return st;
}

vf_status vf_sbatch_render(const struct vf_plan *p, const struct vf_sbatch_opts *o, struct vf_buf *b,
			   struct vf_sbatch_info *info, struct vf_error *err)
{
	cJSON *configs = NULL;
	vf_status st = vf_profile_part(p->trainer[0] ? p->trainer : VF_PROFILE_DEFAULT, "configs", &configs, err);
	if (st)
		return st;
	const cJSON *sl = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(configs, "launch"), "slurm");
	const char *launcher = vf_json_get_str(sl, "launcher"), *args = vf_json_get_str(sl, "args");
	if (!launcher || !args) {
		cJSON_Delete(configs);
		return vf_error_set(err, VF_ERR, "profiles/%s/configs.json: launch.slurm: expected launcher and args",
				    p->trainer);
	}
	int total = p->gpu_count > 0 ? p->gpu_count : 1;
	info->gpus_per_node = o->gpus_per_node > 0 ? o->gpus_per_node : total < 8 ? total : 8;
	info->nodes = (total + info->gpus_per_node - 1) / info->gpus_per_node;
	time_limit(p, sl, info);
	if ((st = header(p, o, info, b, err))) {
		cJSON_Delete(configs);
		return st;
	}
	char nm[16], np[16], port[16];
	snprintf(nm, sizeof nm, "%d", info->nodes);
	snprintf(np, sizeof np, "%d", info->nodes * info->gpus_per_node);
	double d = 29500;
	vf_json_get_double(sl, "main_port", &d);
	snprintf(port, sizeof port, "%d", (int)d);
	vf_buf_puts(b, "set -euo pipefail\nRUN_DIR=", NULL);
	vf_shell_quote(b, p->run_dir, NULL);
	vf_buf_puts(b, "\nTRAINER_DIR=", NULL);
	vf_shell_quote(b, p->trainer_dir, NULL);
	vf_buf_puts(b, "\nCONFIG=\"$RUN_DIR/config.yaml\"\n"
		       "MAIN_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n"
		       "export CONFIG MAIN_ADDR\nLAUNCH=${VRAMFIT_LAUNCH:-", NULL);
	vf_buf_puts(b, launcher, NULL);
	vf_buf_puts(b, "}\nmkdir -p \"$RUN_DIR/logs\"\ncd \"$TRAINER_DIR\"\n"
		       "# one launcher per node; each gets its rank from $SLURM_NODEID\n"
		       "srun --ntasks-per-node=1 --kill-on-bad-exit=1 --output=\"$RUN_DIR/logs/train-%j-node%n.log\" \\\n"
		       "  bash -c \"$LAUNCH ", NULL);
	const char *full = vf_json_get_str(sl, "full_args");
	if (full && strcmp(p->training_mode, "full") == 0)
		vf_buf_printf(b, NULL, "%s ", full);
	const char *vars[] = {"num_machines", nm, "num_processes", np, "main_port", port, "config", "\\\"\\$CONFIG\\\"", NULL};
	fill(b, args, vars);
	vf_buf_puts(b, "\"\n", NULL);
	cJSON_Delete(configs);
	return b->data ? VF_OK : vf_error_set(err, VF_ENOMEM, "out of memory");
}

vf_status vf_sbatch_write(const struct vf_plan *p, const struct vf_sbatch_opts *o, struct vf_sbatch_info *info,
			  struct vf_error *err)
{
	struct vf_buf b;
	vf_buf_init(&b, VF_SBATCH_MAX_BYTES);
	vf_status st = vf_sbatch_render(p, o, &b, info, err);
	if (st == VF_OK)
		st = vf_rundir_write_file(p->run_dir, "launch.sbatch", b.data, b.len, 0755, err);
	vf_buf_release(&b);
	return st;
}

/* --- the check -------------------------------------------------------------- */

#define KEY "launch.sbatch"

/* The line (1-based) where needle first appears; 0 none. */
static size_t line_of(const char *text, size_t len, const char *needle)
{
	size_t nl = strlen(needle), line = 1;
	for (size_t i = 0; i + nl <= len; i++) {
		if (memcmp(text + i, needle, nl) == 0)
			return line;
		line += text[i] == '\n';
	}
	return 0;
}

/* The integer after "#SBATCH --name=" (-1 absent or not a number). */
static long directive(const char *text, size_t len, const char *name, size_t *line)
{
	char needle[64];
	snprintf(needle, sizeof needle, "#SBATCH --%s=", name);
	*line = line_of(text, len, needle);
	if (!*line)
		return -1;
	const char *p = text;
	for (size_t l = 1; l < *line; l++)
		p = strchr(p, '\n') + 1;
	p = strstr(p, needle) + strlen(needle);
	char *end;
	long v = strtol(p, &end, 10);
	return end == p || v < 0 ? -1 : v;
}

/* The first line that starts with prefix (its 1-based number in *line; 0
 * and NULL when none). */
static const char *line_start(const char *text, size_t len, const char *prefix, size_t *line)
{
	size_t n = strlen(prefix);
	*line = 1;
	for (const char *p = text; p < text + len; (*line)++) {
		if ((size_t)(text + len - p) >= n && memcmp(p, prefix, n) == 0)
			return p;
		const char *nl = memchr(p, '\n', (size_t)(text + len - p));
		if (!nl)
			break;
		p = nl + 1;
	}
	*line = 0;
	return NULL;
}

/* Whether the file-name pattern pat (%% for a %) starts with the path dir. */
static bool pattern_starts(const char *pat, const char *dir)
{
	for (; *dir; dir++, pat++) {
		if (*pat == '%' && pat[1] == '%')
			pat++;
		else if (*pat == '%')
			return false;
		if (*pat != *dir)
			return false;
	}
	return true;
}

void vf_sbatch_check_text(const char *text, size_t len, const char *run_dir, struct vf_check *out)
{
	size_t l;
	if (len < 2 || memcmp(text, "#!", 2) != 0)
		vf_check_add_line(out, VF_CHECK_FAIL, KEY, 1, "not a script: no #! line");
	if (directive(text, len, "nodes", &l) < 1)
		vf_check_add_line(out, VF_CHECK_FAIL, KEY, l, "#SBATCH --nodes=N (N >= 1) missing");
	long g = -1;
	l = line_of(text, len, "#SBATCH --gres=gpu:");
	if (l)
		g = strtol(strstr(text, "#SBATCH --gres=gpu:") + 19, NULL, 10);
	if (g < 1)
		vf_check_add_line(out, VF_CHECK_FAIL, KEY, l, "#SBATCH --gres=gpu:N (N >= 1) missing: the trainer needs GPUs");
	directive(text, len, "time", &l);
	if (!l)
		vf_check_add_line(out, VF_CHECK_PENDING, KEY, 0, "no #SBATCH --time: the partition's default limit applies");
	char want[VF_PLAN_PATH + 64];
	snprintf(want, sizeof want, "%s/logs/", run_dir);
	struct vf_buf v;
	vf_buf_init(&v, VF_SBATCH_MAX_BYTES);
	const char *out_line = line_start(text, len, "#SBATCH --output=", &l);
	if (out_line && !sbatch_value(out_line + 8, &v))
		vf_check_add_line(out, VF_CHECK_FAIL, KEY, l, "#SBATCH --output: unmatched quote (sbatch refuses the script)");
	else if (!out_line || !pattern_starts(v.data + 9, want))
		vf_check_add_line(out, VF_CHECK_FAIL, KEY, l, "#SBATCH --output is not under %s/logs/", run_dir);
	vf_buf_reset(&v);
	const char *rd = line_start(text, len, "RUN_DIR=", &l);
	if (!rd || !vf_shell_word(rd + 8, len - (size_t)(rd + 8 - text), &v, NULL) || strcmp(v.data, run_dir) != 0)
		vf_check_add_line(out, VF_CHECK_FAIL, KEY, l, "RUN_DIR is not this run (%s): the script was written "
				  "for another run directory", run_dir);
	static const char *const need[][2] = {
		{"srun --ntasks-per-node=1", "no srun --ntasks-per-node=1: one launcher per node"},
		{"$SLURM_NODEID", "the machine rank is not $SLURM_NODEID"},
		{"$SLURM_JOB_NODELIST", "the main process address is not taken from $SLURM_JOB_NODELIST"},
		{"$CONFIG", "the launch line does not pass the run's config"},
	};
	for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
		if (!line_of(text, len, need[i][0]))
			vf_check_add_line(out, VF_CHECK_FAIL, KEY, 0, "%s", need[i][1]);
	vf_buf_reset(&v);
	const char *td = line_start(text, len, "TRAINER_DIR=", &l);
	if (td) {
		struct stat sb;
		bool read = vf_shell_word(td + 12, len - (size_t)(td + 12 - text), &v, NULL);
		if (!read || stat(v.data, &sb) != 0 || !S_ISDIR(sb.st_mode))
			vf_check_add_line(out, VF_CHECK_FAIL, KEY, l, "TRAINER_DIR %s is not a directory here",
					  read ? v.data : "(not a plain shell word)");
	}
	vf_buf_release(&v);
}
