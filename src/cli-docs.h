/* cli-docs.h - what is printed from the verbs' option tables besides their
 * --help: the man page's OPTIONS section (`vramfit help --man`, spliced
 * into docs/vramfit.1 by `make docs`) and the shell completions
 * (`vramfit completion bash|zsh`). */
#ifndef VF_CLI_DOCS_H
#define VF_CLI_DOCS_H

#include <stdio.h>

#include "cli.h"

/* The OPTIONS section in roff, one subsection per command (NULL-ended). */
int vf_cli_docs_man(FILE *f, const struct vf_cli_command *const *cmds);
/* A completion script for shell "bash" or "zsh"; another shell (or none)
 * is a usage error. Returns the exit code. */
int vf_cli_docs_completion(FILE *f, const struct vf_cli_command *const *cmds, const char *shell);

#endif
