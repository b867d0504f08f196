/* hub-internal.h - what hfcache.c and hub.c share: cache folders and the
 * marker of a complete snapshot in vramfit's cache. */
#ifndef VRAMFIT_HUB_INTERNAL_H
#define VRAMFIT_HUB_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

/* Written last into a snapshot of vramfit's cache: all its files are there. */
#define VF_HUB_COMPLETE ".vramfit-complete"

void vf__hf_home(char *out, size_t n);
void vf__hub_cache_dir(char *out, size_t n);
/* root/models--org--name */
void vf__hub_repo_dir(const char *root, const char *repo, char *out, size_t n);
/* The snapshot folder's suffix for a tag: ":" and the tag in lower case
 * (tags match file names case-insensitively); "" for none. */
void vf__hub_tag_suffix(const char *tag, char *out, size_t n);
/* 40 lower-case hex digits */
bool vf__hub_is_commit(const char *s);

#endif
