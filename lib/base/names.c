/* names.c - forgiving name matching (names.h): compact forms, edit
 * distance with adjacent transpositions, and the "did you mean" list. */
#include "vramfit/base/names.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define CMP_MAX 63

char *vf_names_compact(const char *in, char *out, size_t n)
{
	size_t o = 0;
	if (!n)
		return out;
	for (const unsigned char *p = (const unsigned char *)(in ? in : ""); *p && o + 1 < n; p++)
		if (isalnum(*p) || *p == '.')
			out[o++] = (char)tolower(*p);
	out[o] = '\0';
	return out;
}

int vf_names_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	int extra = 0;
	if (la > CMP_MAX) {
		extra += (int)(la - CMP_MAX);
		la = CMP_MAX;
	}
	if (lb > CMP_MAX) {
		extra += (int)(lb - CMP_MAX);
		lb = CMP_MAX;
	}
	int d[CMP_MAX + 1][CMP_MAX + 1];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (int)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			int cost = a[i - 1] != b[j - 1];
			int v = d[i - 1][j] + 1;                     /* deletion */
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;                 /* insertion */
			if (d[i - 1][j - 1] + cost < v)
				v = d[i - 1][j - 1] + cost;          /* substitution */
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;             /* transposition */
			d[i][j] = v;
		}
	}
	return d[la][lb] + extra;
}

void vf_names_suggest_init(struct vf_names_suggest *s, const char *query)
{
	memset(s, 0, sizeof *s);
	vf_names_compact(query, s->query, sizeof s->query);
}

void vf_names_suggest_offer(struct vf_names_suggest *s, const char *display, const char *key)
{
	char k[64];
	vf_names_compact(key, k, sizeof k);
	if (!s->query[0] || !k[0])
		return;
	size_t ql = strlen(s->query);
	int limit = ql <= 4 ? 1 : ql / 3 > 2 ? (int)(ql / 3) : 2;
	int dist = vf_names_distance(s->query, k);
	if (dist > limit) {
		if (ql < 3 || !strstr(k, s->query))
			return;
		dist = limit + 1; /* a part of it: after the near misses */
	}
	for (int i = 0; i < s->n; i++) {
		if (strcmp(s->names[i], display) != 0)
			continue;
		if (s->dist[i] <= dist)
			return;
		for (int j = i; j + 1 < s->n; j++) { /* drop it: re-inserted below */
			memcpy(s->names[j], s->names[j + 1], sizeof s->names[j]);
			s->dist[j] = s->dist[j + 1];
		}
		s->n--;
		break;
	}
	int at = s->n;
	while (at > 0 && s->dist[at - 1] > dist)
		at--;
	if (at >= VF_NAMES_SUGGEST)
		return;
	int last = s->n < VF_NAMES_SUGGEST ? s->n : VF_NAMES_SUGGEST - 1;
	for (int j = last; j > at; j--) {
		memcpy(s->names[j], s->names[j - 1], sizeof s->names[j]);
		s->dist[j] = s->dist[j - 1];
	}
	snprintf(s->names[at], sizeof s->names[at], "%s", display);
	s->dist[at] = dist;
	if (s->n < VF_NAMES_SUGGEST)
		s->n++;
}

char *vf_names_suggest_hint(const struct vf_names_suggest *s, char *out, size_t n)
{
	size_t o = 0;
	if (!n)
		return out;
	out[0] = '\0';
	/* only the nearest: a near miss hides the names further off */
	int best = s->n ? s->dist[0] : 0;
	for (int i = 0; i < s->n; i++) {
		if (s->dist[i] > best)
			break;
		int w = snprintf(out + o, n - o, "%s%s", i ? ", " : "; did you mean ", s->names[i]);
		if (w < 0 || (size_t)w >= n - o) {
			out[o] = '\0';
			break;
		}
		o += (size_t)w;
	}
	if (o && o + 1 < n)
		snprintf(out + o, n - o, "?");
	return out;
}
