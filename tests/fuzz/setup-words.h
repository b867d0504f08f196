/* setup-words.h - shared by the fuzz targets whose input is a command line
 * of setup flags (fuzz-split, fuzz-mechanisms): the bytes are split into
 * words on white space and every "--name value", "--name=value" or
 * "--switch" goes to vf_setup_set by name, then vf_setup_finish. */
#ifndef VF_FUZZ_SETUP_WORDS_H
#define VF_FUZZ_SETUP_WORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "vramfit/estimate/setup.h"
#include "fuzz-input.h"

/* Fill *s from the input; false when a flag or the finished setup is
 * refused (the fuzz target then has nothing more to run). */
static inline bool fuzz_setup_from_words(const uint8_t *data, size_t size, struct vf_setup *s)
{
	char buf[1024];
	char *argv[64];
	int argc = 0;
	fuzz_text(data, size, buf, sizeof buf);
	for (char *p = strtok(buf, " \t\n"); p && argc < 64; p = strtok(NULL, " \t\n"))
		argv[argc++] = p;
	struct vf_error err = {0};
	vf_setup_defaults(s);
	for (int i = 0; i < argc; i++) {
		if (strncmp(argv[i], "--", 2) != 0)
			continue;
		char *name = argv[i] + 2, *eq = strchr(name, '='), *v = NULL;
		if (eq) {
			*eq = 0;
			v = eq + 1;
		} else if (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) {
			v = argv[++i];
		}
		if (vf_setup_set(s, name, v, &err) != VF_OK)
			return false;
	}
	return vf_setup_finish(s, &err) == VF_OK;
}

#endif
