/* cli-docs.c - the man page's OPTIONS section and the bash and zsh
 * completions, printed from the verbs' option tables (cli-docs.h), so an
 * option added to a table is documented and completed without another
 * edit. */
#include "cli-docs.h"

#include <string.h>

#include "parse-options.h"

/* ---- man page ---- */

/* Text as roff: '-' and '\' escaped, a line never starting with a
 * control character. */
static void roff(FILE *f, const char *s)
{
	bool bol = true;
	for (; *s; s++) {
		if (bol && (*s == '.' || *s == '\''))
			fputs("\\&", f);
		bol = *s == '\n';
		if (*s == '-')
			fputs("\\-", f);
		else if (*s == '\\')
			fputs("\\e", f);
		else
			fputc(*s, f);
	}
}

static void man_row(const struct vf_option *o, void *ctx)
{
	FILE *f = ctx;
	if (o->type == VF_OPT_GROUP) {
		fputs(".PP\n", f);
		roff(f, o->help);
		fputc('\n', f);
		return;
	}
	if (o->flags & VF_OPTF_HIDDEN)
		return;
	char arg[200];
	vf_opt_argh(o, arg, sizeof arg);
	fputs(".TP\n.B ", f);
	if (o->short_name)
		fprintf(f, "\\-%c\\fR, \\fB", o->short_name);
	fputs("\\-\\-", f);
	roff(f, o->name);
	if (*arg) {
		fputs(" \\fI", f);
		roff(f, arg);
		fputs("\\fR", f);
	}
	fputc('\n', f);
	roff(f, o->help && *o->help ? o->help : "(no description)");
	fputc('\n', f);
}

int vf_cli_docs_man(FILE *f, const struct vf_cli_command *const *cmds)
{
	fputs(".SH OPTIONS\n"
	      "Each command's options, as its\n.B \\-\\-help\nlists them (printed from the "
	      "same option tables by\n.BR \"vramfit help \\-\\-man\" ).\n"
	      "A value is given as\n.B \\-\\-opt value\nor\n.BR \\-\\-opt=value ;\n"
	      "a repeated option's last value counts (a list, as\n.BR \\-\\-gpu ,\n"
	      "keeps every value);\n.B \\-\\-\nends the options.\n",
	      f);
	for (size_t i = 0; cmds[i]; i++) {
		if (!cmds[i]->options)
			continue;
		fprintf(f, ".SS vramfit %s\n", cmds[i]->name);
		vf_opt_walk(cmds[i]->options, man_row, f);
	}
	return VF_EXIT_OK;
}

/* ---- completions ---- */

struct comp {
	FILE *f;
	int pass; /* bash: 0 the option names, 1 the value cases */
};

/* A shell word: only the characters an option value list needs. */
static void shell_word(FILE *f, const char *s)
{
	for (; *s; s++)
		if (strchr("abcdefghijklmnopqrstuvwxyz0123456789-_.,:=+", *s) ||
		    (*s >= 'A' && *s <= 'Z'))
			fputc(*s, f);
}

static bool takes_value(const struct vf_option *o)
{
	return o->type == VF_OPT_CALLBACK ? o->argh != NULL : o->type != VF_OPT_BOOL;
}

static void bash_row(const struct vf_option *o, void *ctx)
{
	struct comp *c = ctx;
	if (!o->name || (o->flags & VF_OPTF_HIDDEN))
		return;
	if (c->pass == 0) {
		fprintf(c->f, " --%s", o->name);
		return;
	}
	if (!takes_value(o))
		return;
	fprintf(c->f, "\t\t--%s)", o->name);
	if (o->choices) {
		fputs(" COMPREPLY=($(compgen -W \"", c->f);
		for (size_t i = 0; o->choices[i]; i++) {
			fputs(i ? " " : "", c->f);
			shell_word(c->f, o->choices[i]);
		}
		fputs("\" -- \"$cur\")) ;;\n", c->f);
	} else if (o->complete && strcmp(o->complete, "dir") == 0) {
		fputs(" COMPREPLY=($(compgen -d -- \"$cur\")) ;;\n", c->f);
	} else if (o->complete) {
		fputs(" COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n", c->f);
	} else {
		fputs(" ;;\n", c->f);
	}
}

static void bash(FILE *f, const struct vf_cli_command *const *cmds)
{
	fputs("# bash completion for vramfit (vramfit completion bash), from its option tables\n"
	      "_vramfit() {\n"
	      "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
	      "\tCOMPREPLY=()\n"
	      "\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W \"help completion",
	      f);
	for (size_t i = 0; cmds[i]; i++)
		fprintf(f, " %s", cmds[i]->name);
	fputs("\" -- \"$cur\"))\n\t\treturn\n\tfi\n\tcase ${COMP_WORDS[1]} in\n", f);
	struct comp c = {.f = f};
	for (size_t i = 0; cmds[i]; i++) {
		if (!cmds[i]->options)
			continue;
		fprintf(f, "\t%s)\n\t\tcase $prev in\n", cmds[i]->name);
		c.pass = 1;
		vf_opt_walk(cmds[i]->options, bash_row, &c);
		fputs("\t\t*) COMPREPLY=($(compgen -W \"", f);
		c.pass = 0;
		vf_opt_walk(cmds[i]->options, bash_row, &c);
		fputs("\" -- \"$cur\")) ;;\n\t\tesac ;;\n", f);
	}
	fputs("\thelp) COMPREPLY=($(compgen -W \"--man", f);
	for (size_t i = 0; cmds[i]; i++)
		fprintf(f, " %s", cmds[i]->name);
	fputs("\" -- \"$cur\")) ;;\n"
	      "\tcompletion) COMPREPLY=($(compgen -W \"bash zsh\" -- \"$cur\")) ;;\n"
	      "\tesac\n}\ncomplete -o default -F _vramfit vramfit\n",
	      f);
}

/* The first line of the help, without what _arguments reads as syntax. */
static void zsh_help(FILE *f, const char *s)
{
	for (; s && *s && *s != '\n'; s++)
		fputc(strchr("[]:'\\`$\"", *s) ? ' ' : *s, f);
}

static void zsh_row(const struct vf_option *o, void *ctx)
{
	struct comp *c = ctx;
	if (!o->name || (o->flags & VF_OPTF_HIDDEN))
		return;
	bool list = o->type == VF_OPT_LIST;
	fprintf(c->f, " \\\n\t\t\t'%s--%s%s[", list ? "*" : "", o->name, takes_value(o) ? "=" : "");
	zsh_help(c->f, o->help);
	fputc(']', c->f);
	if (takes_value(o)) {
		fputs(":value:", c->f);
		if (o->choices) {
			fputc('(', c->f);
			for (size_t i = 0; o->choices[i]; i++) {
				fputs(i ? " " : "", c->f);
				shell_word(c->f, o->choices[i]);
			}
			fputc(')', c->f);
		} else if (o->complete) {
			fputs(strcmp(o->complete, "dir") == 0 ? "_files -/" : "_files", c->f);
		} else {
			fputc(' ', c->f);
		}
	}
	fputc('\'', c->f);
}

static void zsh(FILE *f, const struct vf_cli_command *const *cmds)
{
	fputs("#compdef vramfit\n# zsh completion for vramfit (vramfit completion zsh), from its option tables\n"
	      "_vramfit() {\n\tlocal -a cmds\n\tcmds=(\n\t\t'help:details of one command'\n"
	      "\t\t'completion:shell completion script'\n",
	      f);
	for (size_t i = 0; cmds[i]; i++) {
		fprintf(f, "\t\t'%s:", cmds[i]->name);
		zsh_help(f, cmds[i]->summary);
		fputs("'\n", f);
	}
	fputs("\t)\n\tif (( CURRENT == 2 )); then\n\t\t_describe command cmds\n\t\treturn\n\tfi\n"
	      "\tlocal verb=$words[2]\n\tshift words\n\t(( CURRENT-- ))\n\tcase $verb in\n",
	      f);
	struct comp c = {.f = f};
	for (size_t i = 0; cmds[i]; i++) {
		if (!cmds[i]->options)
			continue;
		fprintf(f, "\t%s)\n\t\t_arguments -s", cmds[i]->name);
		vf_opt_walk(cmds[i]->options, zsh_row, &c);
		fputs(" \\\n\t\t\t'*:argument:_files' ;;\n", f);
	}
	fputs("\tcompletion) _values shell bash zsh ;;\n\tesac\n}\n_vramfit \"$@\"\n", f);
}

int vf_cli_docs_completion(FILE *f, const struct vf_cli_command *const *cmds, const char *shell)
{
	if (shell && strcmp(shell, "bash") == 0)
		bash(f, cmds);
	else if (shell && strcmp(shell, "zsh") == 0)
		zsh(f, cmds);
	else {
		fprintf(stderr, "vramfit completion: expected bash or zsh\nTry 'vramfit --help'.\n");
		return VF_EXIT_USAGE;
	}
	return VF_EXIT_OK;
}
