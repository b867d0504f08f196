/* samples.c - read tune's memory-sample files (RUN/logs/trial-N.samples,
 * report.h): a header line "# vramfit memory samples v1 source=SOURCE",
 * then one "SECONDS BYTES" line per poll of the trainer's memory. A last
 * line without its newline (the writer was killed mid-line) is dropped;
 * any other bad line is an error naming its number. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vramfit/report/report.h"

#define HEADER "# vramfit memory samples v1"
#define LINE_MAX_LEN 128

void vf_samples_init(struct vf_samples *s)
{
	memset(s, 0, sizeof *s);
}

void vf_samples_release(struct vf_samples *s)
{
	free(s->t);
	free(s->bytes);
	vf_samples_init(s);
}

static vf_status push(struct vf_samples *s, size_t *cap, double t, int64_t b, struct vf_error *err)
{
	if (s->n == *cap) {
		size_t nc = *cap ? *cap * 2 : 256;
		double *nt = realloc(s->t, nc * sizeof *nt);
		if (nt)
			s->t = nt;
		int64_t *nb = realloc(s->bytes, nc * sizeof *nb);
		if (nb)
			s->bytes = nb;
		if (!nt || !nb)
			return vf_error_set(err, VF_ENOMEM, "samples: out of memory");
		*cap = nc;
	}
	s->t[s->n] = t;
	s->bytes[s->n++] = b;
	return VF_OK;
}

/* One "SECONDS BYTES" line (NUL-terminated, no newline). */
static bool parse_line(const char *l, double *t, int64_t *b)
{
	char *end;
	errno = 0;
	double v = strtod(l, &end);
	if (end == l || *end != ' ' || !isfinite(v) || v < 0 || v > 1e9 || errno)
		return false;
	const char *p = end + 1;
	if (*p < '0' || *p > '9')
		return false;
	long long n = strtoll(p, &end, 10);
	if (*end || errno || n < 0)
		return false;
	*t = v, *b = (int64_t)n;
	return true;
}

static void read_header(const char *l, struct vf_samples *s)
{
	const char *src = strstr(l, " source=");
	if (!src)
		return;
	src += 8;
	size_t n = strcspn(src, " ");
	if (n >= sizeof s->source)
		n = sizeof s->source - 1;
	memcpy(s->source, src, n);
	s->source[n] = '\0';
}

vf_status vf_samples_parse(const char *text, size_t len, const char *what, struct vf_samples *s,
			   struct vf_error *err)
{
	vf_samples_release(s);
	size_t cap = 0, lineno = 0, pos = 0;
	char l[LINE_MAX_LEN + 1];
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		lineno++;
		bool complete = nl != NULL;
		if (n > LINE_MAX_LEN) {
			vf_samples_release(s);
			return vf_error_set(err, VF_ERR, "%s:%zu: line longer than %d bytes", what, lineno, LINE_MAX_LEN);
		}
		memcpy(l, text + pos, n);
		l[n] = '\0';
		if (memchr(l, '\0', n)) {
			vf_samples_release(s);
			return vf_error_set(err, VF_ERR, "%s:%zu: NUL byte", what, lineno);
		}
		pos += n + (nl ? 1 : 0);
		if (lineno == 1) {
			if (strncmp(l, HEADER, strlen(HEADER)) != 0)
				return vf_error_set(err, VF_ERR, "%s: not a vramfit samples file (expected \"%s\")", what, HEADER);
			read_header(l, s);
			continue;
		}
		if (n == 0 || l[0] == '#')
			continue;
		double t;
		int64_t b;
		if (!parse_line(l, &t, &b)) {
			if (!complete)
				break; /* cut mid-line */
			vf_samples_release(s);
			return vf_error_set(err, VF_ERR, "%s:%zu: expected \"SECONDS BYTES\"", what, lineno);
		}
		if (s->n >= VF_SAMPLES_MAX_LINES) {
			vf_samples_release(s);
			return vf_error_set(err, VF_ERR, "%s: more than %d samples", what, VF_SAMPLES_MAX_LINES);
		}
		vf_status st = push(s, &cap, t, b, err);
		if (st) {
			vf_samples_release(s);
			return st;
		}
	}
	if (lineno == 0)
		return vf_error_set(err, VF_ERR, "%s: empty (expected \"%s\")", what, HEADER);
	return VF_OK;
}

vf_status vf_samples_read(const char *path, struct vf_samples *s, struct vf_error *err)
{
	struct vf_buf b;
	vf_buf_init(&b, VF_SAMPLES_MAX_BYTES);
	vf_status st = vf_buf_read_file(&b, path, VF_SAMPLES_MAX_BYTES, err);
	if (!st)
		st = vf_samples_parse(b.data ? b.data : "", b.len, path, s, err);
	vf_buf_release(&b);
	return st;
}

size_t vf_samples_thin(const struct vf_samples *s, size_t max, double *t, int64_t *bytes)
{
	if (max == 0)
		return 0;
	if (s->n <= max) {
		for (size_t i = 0; i < s->n; i++)
			t[i] = s->t[i], bytes[i] = s->bytes[i];
		return s->n;
	}
	size_t o = 0;
	for (size_t k = 0; k < max; k++) {
		size_t a = s->n * k / max, b = s->n * (k + 1) / max, best = a;
		for (size_t i = a; i < b; i++)
			if (s->bytes[i] > s->bytes[best])
				best = i;
		if (b > a)
			t[o] = s->t[best], bytes[o++] = s->bytes[best];
	}
	return o;
}
