/* main.c - vramfit's entry point: the command table, global --help and
 * --version, and dispatch to src/cmd-<verb>.c. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli-docs.h"
#include "parse-options.h"

#define VF_COMMAND(name) extern const struct vf_cli_command vf_cmd_##name;
#include "commands.def"
#undef VF_COMMAND

static const struct vf_cli_command *const commands[] = {
#define VF_COMMAND(name) &vf_cmd_##name,
#include "commands.def"
#undef VF_COMMAND
	NULL,
};

static const struct vf_cli_command *find(const char *name)
{
	for (size_t i = 0; commands[i]; i++)
		if (strcmp(commands[i]->name, name) == 0)
			return commands[i];
	return NULL;
}

/* "unknown command 'x'" with the nearest one or two commands. */
static int unknown_command(const char *name)
{
	const char *names[64];
	size_t n = 0;
	for (; commands[n] && n < 64; n++)
		names[n] = commands[n]->name;
	char hint[160];
	if (vf_opt_suggest(name, names, n, "", hint, sizeof hint))
		fprintf(stderr, "vramfit: unknown command '%s'; did you mean %s?\n", vf_cli_safe(name), hint);
	else
		fprintf(stderr, "vramfit: unknown command '%s'\n", vf_cli_safe(name));
	fputs("Try 'vramfit --help'.\n", stderr);
	return VF_EXIT_USAGE;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vramfit <command> [options]\n"
		"\n"
		"Will this training run fit on these GPUs, with which settings, how fast,\n"
		"at what cost? vramfit answers before a GPU-hour is spent.\n"
		"\n"
		"Commands:\n");
	for (size_t i = 0; commands[i]; i++)
		fprintf(f, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
	fprintf(f,
		"\n"
		"  vramfit help <command>    details of one command (also <command> --help)\n"
		"  vramfit help --man        the man page's OPTIONS section, from the option tables\n"
		"  vramfit completion bash|zsh   shell completion of commands and options\n"
		"  vramfit --version         the version\n"
		"\n"
		"Exit status: 0 success, 1 failure (the message says why), 2 usage error.\n"
		"Environment: NO_COLOR disables colour; see README.md for the test hooks\n"
		"(VRAMFIT_NVML_LIB, VRAMFIT_NVIDIA_SMI) and data overrides (VRAMFIT_DATA_DIR).\n");
}

/* Output that could not be written (a full disk, a closed descriptor) is a
 * failure, not a success with a truncated report. */
static int finish(int rc)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		int e = errno;
		fprintf(stderr, "vramfit: error: standard output: %s\n",
			e ? strerror(e) : "write error");
		return VF_EXIT_FAIL;
	}
	return rc;
}

static int dispatch(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return VF_EXIT_USAGE;
	}
	const char *verb = argv[1];
	if (strcmp(verb, "--help") == 0 || strcmp(verb, "-h") == 0) {
		usage(stdout);
		return VF_EXIT_OK;
	}
	if (strcmp(verb, "--version") == 0 || strcmp(verb, "version") == 0) {
		printf("vramfit %s\n", VF_VERSION);
		return VF_EXIT_OK;
	}
	if (strcmp(verb, "help") == 0) {
		if (argc < 3) {
			usage(stdout);
			return VF_EXIT_OK;
		}
		if (strcmp(argv[2], "--man") == 0)
			return vf_cli_docs_man(stdout, commands);
		const struct vf_cli_command *c = find(argv[2]);
		if (!c)
			return unknown_command(argv[2]);
		vf_cli_print_help(stdout, c);
		return VF_EXIT_OK;
	}
	if (strcmp(verb, "completion") == 0)
		return vf_cli_docs_completion(stdout, commands, argc > 2 ? argv[2] : NULL);
	const struct vf_cli_command *c = find(verb);
	if (!c)
		return unknown_command(verb);
	if (vf_cli_wants_help(argc - 1, argv + 1)) {
		vf_cli_print_help(stdout, c);
		return VF_EXIT_OK;
	}
	vf_cli_heap_setup();
	return c->run(argc - 1, argv + 1);
}

int main(int argc, char **argv)
{
	return finish(dispatch(argc, argv));
}
