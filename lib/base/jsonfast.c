/* jsonfast.c - a faster path to the cJSON tree cJSON_ParseWithLengthOpts
 * builds, for the plain JSON our catalogs are written in (issue 21: parsing
 * the embedded catalogs was a third of a one-GPU estimate's instructions).
 *
 * It accepts a strict subset and declines everything else, so that
 * vf_json_parse hands those texts to cJSON, whose tree and error position
 * stay the answer for them:
 *   - numbers -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]{1,3})? with at most
 *     19 digits before the exponent, a mantissa m of at most 2^53 (the
 *     digits without the point) and a power of ten k (the exponent less the
 *     decimals) within +-22: m * 10^k or m / 10^-k is then one correctly
 *     rounded IEEE operation on two exact values, the double strtod returns
 *     (Clinger's fast path); a leading zero or a longer number: declined;
 *   - strings of bytes >= 0x20 with the escapes \" \\ \/ \b \f \n \r \t
 *     (\u, a control byte: declined);
 *   - nesting up to VF__JSON_FAST_DEPTH (cJSON's limit is 1000);
 *   - nothing but whitespace after the value (cJSON ignores a tail; declined).
 * Whitespace is every byte <= 32, as cJSON skips it. The nodes are the
 * ones cJSON makes (cJSON_malloc, the same fields, valueint saturated as
 * cJSON saturates it, the first child's prev the last one), so cJSON_Delete
 * and every cJSON call work on them unchanged. tests/fuzz/fuzz-json.c checks
 * the two trees equal on every text this path accepts. */
#include "vramfit/base/json.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

struct jf {
	const unsigned char *p, *end;
	int depth;
};

static void ws(struct jf *j)
{
	while (j->p < j->end && *j->p <= 32)
		j->p++;
}

static cJSON *node(int type)
{
	cJSON *n = cJSON_malloc(sizeof *n);
	if (n) {
		memset(n, 0, sizeof *n);
		n->type = type;
	}
	return n;
}

/* j->p at the opening quote; the string without its quotes, or NULL
 * (declined or out of memory) */
static char *string(struct jf *j)
{
	const unsigned char *s = ++j->p, *q = s;
	size_t esc = 0;
	while (q < j->end && *q != '"') {
		if (*q < 0x20)
			return NULL;
		if (*q == '\\') {
			if (q + 1 >= j->end)
				return NULL;
			esc++;
			q++;
		}
		q++;
	}
	if (q >= j->end)
		return NULL;
	char *out = cJSON_malloc((size_t)(q - s) - esc + 1);
	if (!out)
		return NULL;
	char *o = out;
	if (!esc) {
		memcpy(o, s, (size_t)(q - s));
		o += q - s;
	} else {
		for (const unsigned char *c = s; c < q; c++) {
			if (*c != '\\') {
				*o++ = (char)*c;
				continue;
			}
			switch (*++c) {
			case '"': *o++ = '"'; break;
			case '\\': *o++ = '\\'; break;
			case '/': *o++ = '/'; break;
			case 'b': *o++ = '\b'; break;
			case 'f': *o++ = '\f'; break;
			case 'n': *o++ = '\n'; break;
			case 'r': *o++ = '\r'; break;
			case 't': *o++ = '\t'; break;
			default: cJSON_free(out); return NULL;
			}
		}
	}
	*o = '\0';
	j->p = q + 1;
	return out;
}

static const double pow10_exact[23] = {
	1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

static int digit(const unsigned char *p, const unsigned char *end)
{
	return p < end && *p >= '0' && *p <= '9';
}

static cJSON *number(struct jf *j)
{
	const unsigned char *p = j->p;
	int neg = 0;
	if (*p == '-') {
		neg = 1;
		p++;
	}
	if (!digit(p, j->end))
		return NULL;
	uint64_t m = 0;
	int nd = 0, dec = 0;
	if (*p == '0') {
		p++;
		nd = 1;
	} else {
		while (digit(p, j->end)) {
			m = m * 10 + (uint64_t)(*p++ - '0');
			if (++nd > 19)
				return NULL;
		}
	}
	if (p < j->end && *p == '.') {
		p++;
		if (!digit(p, j->end))
			return NULL;
		while (digit(p, j->end)) {
			m = m * 10 + (uint64_t)(*p++ - '0');
			dec++;
			if (++nd > 19)
				return NULL;
		}
	}
	int e = 0;
	if (p < j->end && (*p == 'e' || *p == 'E')) {
		int eneg = 0;
		p++;
		if (p < j->end && (*p == '+' || *p == '-'))
			eneg = *p++ == '-';
		if (!digit(p, j->end))
			return NULL;
		for (int k = 0; digit(p, j->end); k++) {
			if (k == 3)
				return NULL;
			e = e * 10 + (*p++ - '0');
		}
		if (eneg)
			e = -e;
	}
	/* what cJSON reads as part of a number must end here */
	if (p < j->end && (*p == 'e' || *p == 'E' || *p == '+' || *p == '-' || *p == '.' ||
			   (*p >= '0' && *p <= '9')))
		return NULL;
	int p10 = e - dec;
	if (m > (1ull << 53) || p10 < -22 || p10 > 22)
		return NULL;
	double d = (double)m;
	if (p10 < 0)
		d /= pow10_exact[-p10];
	else if (p10 > 0)
		d *= pow10_exact[p10];
	if (neg)
		d = -d;
	cJSON *n = node(cJSON_Number);
	if (!n)
		return NULL;
	n->valuedouble = d;
	if (d >= INT_MAX)
		n->valueint = INT_MAX;
	else if (d <= (double)INT_MIN)
		n->valueint = INT_MIN;
	else
		n->valueint = (int)d;
	j->p = p;
	return n;
}

static cJSON *value(struct jf *j);

/* appends v to the container c's children as cJSON links them */
static void append(cJSON *c, cJSON **tail, cJSON *v)
{
	if (!*tail) {
		c->child = v;
	} else {
		(*tail)->next = v;
		v->prev = *tail;
	}
	*tail = v;
	c->child->prev = v;
}

static cJSON *container(struct jf *j, int object)
{
	if (++j->depth > VF__JSON_FAST_DEPTH)
		return NULL;
	cJSON *c = node(object ? cJSON_Object : cJSON_Array), *tail = NULL;
	if (!c)
		return NULL;
	j->p++;
	ws(j);
	unsigned char close = object ? '}' : ']';
	if (j->p < j->end && *j->p == close) {
		j->p++;
		j->depth--;
		return c;
	}
	for (;;) {
		char *key = NULL;
		if (object) {
			if (j->p >= j->end || *j->p != '"' || !(key = string(j)))
				goto fail;
			ws(j);
			if (j->p >= j->end || *j->p != ':') {
				cJSON_free(key);
				goto fail;
			}
			j->p++;
			ws(j);
		}
		cJSON *v = value(j);
		if (!v) {
			cJSON_free(key);
			goto fail;
		}
		v->string = key;
		append(c, &tail, v);
		ws(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			ws(j);
			continue;
		}
		if (j->p < j->end && *j->p == close) {
			j->p++;
			j->depth--;
			return c;
		}
		goto fail;
	}
fail:
	cJSON_Delete(c);
	return NULL;
}

static int literal(struct jf *j, const char *word, size_t n)
{
	if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0)
		return 0;
	j->p += n;
	return 1;
}

static cJSON *value(struct jf *j)
{
	if (j->p >= j->end)
		return NULL;
	switch (*j->p) {
	case '{':
		return container(j, 1);
	case '[':
		return container(j, 0);
	case '"': {
		char *s = string(j);
		if (!s)
			return NULL;
		cJSON *n = node(cJSON_String);
		if (!n) {
			cJSON_free(s);
			return NULL;
		}
		n->valuestring = s;
		return n;
	}
	case 't':
		if (!literal(j, "true", 4))
			return NULL;
		cJSON *t = node(cJSON_True);
		if (t)
			t->valueint = 1;
		return t;
	case 'f':
		return literal(j, "false", 5) ? node(cJSON_False) : NULL;
	case 'n':
		return literal(j, "null", 4) ? node(cJSON_NULL) : NULL;
	default:
		return number(j);
	}
}

cJSON *vf__json_parse_fast(const char *text, size_t len)
{
	struct jf j = {(const unsigned char *)text, (const unsigned char *)text + len, 0};
	/* a byte-order mark: cJSON's */
	if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
		return NULL;
	ws(&j);
	cJSON *root = value(&j);
	if (!root)
		return NULL;
	ws(&j);
	if (j.p != j.end) {
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}
