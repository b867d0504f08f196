/* names.h - forgiving name matching: the compact form of a name (what is
 * left when case, spaces and separators are dropped: "RTX 4090", "rtx-4090"
 * and "rtx4090" are one name) and the "did you mean ..." list of the known
 * names nearest to an unknown one (edit distance with transpositions). */
#ifndef VRAMFIT_NAMES_H
#define VRAMFIT_NAMES_H

#include <stddef.h>

/* Lower-case letters, digits and '.' of in, into out (n bytes, always
 * NUL-terminated; truncated). Returns out. */
char *vf_names_compact(const char *in, char *out, size_t n);

/* Optimal-string-alignment distance between a and b (each up to 63 bytes
 * compared; longer tails count one edit per byte). */
int vf_names_distance(const char *a, const char *b);

#define VF_NAMES_SUGGEST 4

/* The nearest candidates offered so far (no more than VF_NAMES_SUGGEST). */
struct vf_names_suggest {
	char query[64];                /* compact form of the unknown name */
	char names[VF_NAMES_SUGGEST][64]; /* display names, nearest first */
	int dist[VF_NAMES_SUGGEST];
	int n;
};

void vf_names_suggest_init(struct vf_names_suggest *s, const char *query);
/* Offer a known name: display is what the hint shows, key the form compared
 * (compacted here). Kept when near enough: at most max(2, len/3) edits, or
 * the query is a part of it. A display name already kept keeps its best. */
void vf_names_suggest_offer(struct vf_names_suggest *s, const char *display, const char *key);
/* "; did you mean a, b?" (or "" when nothing is near) into out. */
char *vf_names_suggest_hint(const struct vf_names_suggest *s, char *out, size_t n);

#endif
