/* safetensors.c - read the header of a .safetensors file.
 * Layout: u64 little-endian N, N bytes of JSON, then tensor data
 * (never read here). Validation follows the reference implementation
 * (huggingface/safetensors, Metadata::validate): header length bounded
 * and within the file, a UTF-8 JSON object, tensors sorted by offset must
 * tile [0, end) exactly, each tensor's bytes = numel x bits / 8 with
 * overflow checks, and the file ends exactly at 8 + N + end. The JSON is
 * scanned in one pass for what a tensor needs (no tree is built); the same
 * scanner reads a sharded checkpoint's index. */
#include "vramfit/model/safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "vramfit/base/hash.h"
#include "vramfit/base/json.h"

static const struct {
	const char *name;
	int bits;
} dtypes[VF_DT_COUNT] = {
	[VF_DT_F64] = {"F64", 64},         [VF_DT_F32] = {"F32", 32},
	[VF_DT_F16] = {"F16", 16},         [VF_DT_BF16] = {"BF16", 16},
	[VF_DT_F8_E4M3] = {"F8_E4M3", 8},  [VF_DT_F8_E5M2] = {"F8_E5M2", 8},
	[VF_DT_F8_E8M0] = {"F8_E8M0", 8},  [VF_DT_F6_E2M3] = {"F6_E2M3", 6},
	[VF_DT_F6_E3M2] = {"F6_E3M2", 6},  [VF_DT_F4] = {"F4", 4},
	[VF_DT_C64] = {"C64", 64},         [VF_DT_I64] = {"I64", 64},
	[VF_DT_I32] = {"I32", 32},         [VF_DT_I16] = {"I16", 16},
	[VF_DT_I8] = {"I8", 8},            [VF_DT_U64] = {"U64", 64},
	[VF_DT_U32] = {"U32", 32},         [VF_DT_U16] = {"U16", 16},
	[VF_DT_U8] = {"U8", 8},            [VF_DT_BOOL] = {"BOOL", 8},
};

const char *vf_dtype_name(enum vf_dtype d)
{
	return (unsigned)d < VF_DT_COUNT ? dtypes[d].name : "?";
}

int vf_dtype_bits(enum vf_dtype d)
{
	return (unsigned)d < VF_DT_COUNT ? dtypes[d].bits : 0;
}

bool vf_dtype_from_name(const char *name, enum vf_dtype *out)
{
	for (int i = 0; i < VF_DT_COUNT; i++)
		if (dtypes[i].name[0] == name[0] && strcmp(dtypes[i].name, name) == 0) {
			*out = (enum vf_dtype)i;
			return true;
		}
	return false;
}

void vf_safetensors_release(struct vf_safetensors *st)
{
	if (!st)
		return;
	free(st->tensors);
	free(st->names);
	free(st->dims);
	cJSON_Delete(st->metadata);
	free(st->path);
	memset(st, 0, sizeof *st);
}

/* ---- the header scanner -------------------------------------------------
 * One pass over the JSON text that keeps only what a tensor needs (name,
 * dtype, shape, data_offsets) and __metadata__, with no tree in between.
 * The syntax is strict JSON (RFC 8259, as the reference's serde_json):
 * whitespace is space, tab, CR, LF; strings hold no raw control
 * characters; escapes are the JSON ones, \uXXXX with surrogate pairs;
 * numbers follow the JSON grammar; nesting stops at VF_ST_MAX_DEPTH.
 * A syntax error anywhere wins over a problem with a tensor (as when the
 * whole text was parsed first): the first tensor problem is kept aside
 * and the scan goes on checking the syntax only. */

#define VF_ST_MAX_DEPTH 128

struct scanner {
	const char *s, *p, *e; /* text, position, end */
	const char *what;
	struct vf_error *err;
	const char *syntax;   /* why the text is not JSON, or NULL */
	size_t syntax_at;     /* byte of it */
	vf_status problem;    /* the first tensor / metadata problem (in err) */
	struct vf_safetensors *st;
	size_t cap;           /* tensors allocated */
	size_t ndims, dims_cap;
	size_t names_len;     /* bytes used in st->names */
};

/* Remember the first syntax error; false, to return from the caller. */
static bool syntax(struct scanner *sc, const char *why)
{
	if (!sc->syntax) {
		sc->syntax = why;
		sc->syntax_at = (size_t)(sc->p - sc->s);
	}
	return false;
}

/* The first problem with a tensor or the metadata; later ones are not news. */
static bool problem(struct scanner *sc, vf_status code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static bool problem(struct scanner *sc, vf_status code, const char *fmt, ...)
{
	if (sc->problem != VF_OK)
		return false;
	char msg[VF_ERROR_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	sc->problem = vf_error_set(sc->err, code, "%s: %s", sc->what, msg);
	return false;
}

static inline void ws(struct scanner *sc)
{
	while (sc->p < sc->e &&
	       (*sc->p == ' ' || *sc->p == '\n' || *sc->p == '\r' || *sc->p == '\t'))
		sc->p++;
}

/* The next byte after whitespace is c: consume it. */
static inline bool expect(struct scanner *sc, char c, const char *why)
{
	ws(sc);
	if (sc->p >= sc->e || *sc->p != c)
		return syntax(sc, why);
	sc->p++;
	return true;
}

/* 8 bytes at a time: does any byte need a look (a quote, a backslash, a
 * control character)? */
static inline bool word_special(uint64_t x)
{
	const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
	uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\');
	uint64_t hq = (q - ones) & ~q, hb = (b - ones) & ~b;
	uint64_t ctl = (x - ones * 0x20) & ~x;
	return ((hq | hb | ctl) & high) != 0;
}

static int hex4(const char *p)
{
	int v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		int d = c >= '0' && c <= '9'   ? c - '0'
			: c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10
					       : -1;
		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/* Code point cp as UTF-8 into tmp (4 bytes); returns its length. */
static inline size_t utf8_encode(unsigned cp, char *tmp)
{
	if (cp < 0x80) {
		tmp[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		tmp[0] = (char)(0xC0 | (cp >> 6));
		tmp[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		tmp[0] = (char)(0xE0 | (cp >> 12));
		tmp[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		tmp[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	tmp[0] = (char)(0xF0 | (cp >> 18));
	tmp[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	tmp[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	tmp[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

/* The text [a, p) of a string with escapes, decoded (and checked) into
 * out (when not NULL), NUL-terminated; *len: its decoded length. */
static __attribute__((noinline)) bool string_decode(struct scanner *sc, char *out, const char *a,
						    const char *p, size_t *len)
{
	/* decode (and check) the escapes */
	char tmp[8];
	size_t n = 0;
	for (const char *q = a; q < p;) {
		if (*q != '\\') {
			if (out)
				out[n] = *q;
			n++;
			q++;
			continue;
		}
		const char *at = q;
		q++;
		unsigned cp;
		switch (*q++) {
		case '"': cp = '"'; break;
		case '\\': cp = '\\'; break;
		case '/': cp = '/'; break;
		case 'b': cp = '\b'; break;
		case 'f': cp = '\f'; break;
		case 'n': cp = '\n'; break;
		case 'r': cp = '\r'; break;
		case 't': cp = '\t'; break;
		case 'u': {
			int h = p - q >= 4 ? hex4(q) : -1;
			if (h < 0) {
				sc->p = at;
				return syntax(sc, "bad \\u escape");
			}
			q += 4;
			cp = (unsigned)h;
			if (cp >= 0xDC00 && cp <= 0xDFFF) {
				sc->p = at;
				return syntax(sc, "lone low surrogate in a \\u escape");
			}
			if (cp >= 0xD800 && cp <= 0xDBFF) {
				int l = p - q >= 6 && q[0] == '\\' && q[1] == 'u' ? hex4(q + 2) : -1;
				if (l < 0xDC00 || l > 0xDFFF) {
					sc->p = at;
					return syntax(sc, "lone high surrogate in a \\u escape");
				}
				q += 6;
				cp = 0x10000 + ((cp - 0xD800) << 10) + ((unsigned)l - 0xDC00);
			}
			if (cp == 0) {
				sc->p = at;
				return syntax(sc, "\\u0000 in a string (names are C strings)");
			}
			break;
		}
		default:
			sc->p = at;
			return syntax(sc, "bad escape in a string");
		}
		size_t k = utf8_encode(cp, tmp);
		if (out)
			memcpy(out + n, tmp, k);
		n += k;
	}
	if (out)
		out[n] = 0;
	*len = n;
	return true;
}


/* A string at sc->p (after whitespace). Its text without escapes is
 * [*raw, *raw + *rawlen) when *escaped is false. When out is not NULL the
 * text is copied there, escapes decoded, NUL-terminated: out needs room for
 * rawlen + 1 bytes (callers give it the rest of an arena as long as the
 * text: a decoded string never outgrows its quotes). *len: decoded length. */
static inline __attribute__((always_inline)) bool
string(struct scanner *sc, char *out, const char **raw, size_t *rawlen, bool *escaped,
       size_t *len)
{
	ws(sc);
	if (sc->p >= sc->e || *sc->p != '"')
		return syntax(sc, "expected a string");
	const char *a = ++sc->p, *p = a, *e = sc->e;
	bool esc = false;
	for (;;) {
#ifdef __SSE2__
		while (e - p >= 16) {
			__m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
			__m128i hit = _mm_or_si128(
				_mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')),
					     _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))),
				/* bytes < 0x20 (unsigned): min(x, 0x1f) == x */
				_mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(0x1f)), x));
			int mask = _mm_movemask_epi8(hit);
			if (mask) {
				p += __builtin_ctz((unsigned)mask);
				break;
			}
			p += 16;
		}
#endif
		while (e - p >= 8) {
			uint64_t x;
			memcpy(&x, p, 8);
			if (word_special(x))
				break;
			p += 8;
		}
		if (p >= e) {
			sc->p = p;
			return syntax(sc, "unterminated string");
		}
		unsigned char c = (unsigned char)*p;
		if (c == '"')
			break;
		if (c < 0x20) {
			sc->p = p;
			return syntax(sc, "control character in a string");
		}
		if (c == '\\') {
			esc = true;
			if (e - p < 2) {
				sc->p = p;
				return syntax(sc, "unterminated string");
			}
			p += 2; /* the escape's letter is checked when decoding */
			continue;
		}
		p++;
	}
	*raw = a;
	*rawlen = (size_t)(p - a);
	*escaped = esc;
	*len = *rawlen;
	sc->p = p + 1;
	if (!esc) {
		if (out) {
			memcpy(out, a, *rawlen);
			out[*rawlen] = 0;
		}
		return true;
	}
	return string_decode(sc, out, a, p, len);
}

/* A string decoded into a malloc'd C string (NULL with a problem set when
 * memory runs out, or after a syntax error). */
static char *string_dup(struct scanner *sc)
{
	const char *raw;
	size_t rawlen, len;
	bool esc;
	const char *at = sc->p;
	if (!string(sc, NULL, &raw, &rawlen, &esc, &len))
		return NULL;
	char *s = malloc(rawlen + 1);
	if (!s) {
		problem(sc, VF_ENOMEM, "out of memory");
		return NULL;
	}
	sc->p = at;
	string(sc, s, &raw, &rawlen, &esc, &len);
	return s;
}

/* A JSON number: plain (digits only) with its value, or not (a sign, a
 * fraction, an exponent, more than 64 bits): then *d holds it as a double. */
struct number {
	bool plain, big;
	uint64_t u;
	double d;
};

static bool number(struct scanner *sc, struct number *nb)
{
	const char *a = sc->p, *p = a, *e = sc->e;
	bool neg = p < e && *p == '-';
	if (neg)
		p++;
	if (p >= e || *p < '0' || *p > '9')
		return syntax(sc, "bad number");
	uint64_t u = 0;
	bool big = false;
	if (*p == '0') {
		p++;
	} else {
		/* one pass: 19 digits or fewer cannot overflow 64 bits; a
		 * longer run is read again with the overflow checked */
		const char *d = p;
		for (unsigned c; p < e && (c = (unsigned)(*p - '0')) < 10; p++)
			u = u * 10 + c;
		if (p - d > 19) {
			u = 0;
			for (; d < p; d++)
				if (__builtin_mul_overflow(u, 10, &u) ||
				    __builtin_add_overflow(u, (uint64_t)(*d - '0'), &u))
					big = true;
		}
	}
	bool frac = false;
	if (p < e && *p == '.') {
		p++;
		if (p >= e || *p < '0' || *p > '9') {
			sc->p = p;
			return syntax(sc, "bad number");
		}
		while (p < e && *p >= '0' && *p <= '9')
			p++;
		frac = true;
	}
	if (p < e && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < e && (*p == '+' || *p == '-'))
			p++;
		if (p >= e || *p < '0' || *p > '9') {
			sc->p = p;
			return syntax(sc, "bad number");
		}
		while (p < e && *p >= '0' && *p <= '9')
			p++;
		frac = true;
	}
	sc->p = p;
	nb->plain = !neg && !frac && !big;
	nb->big = big;
	nb->u = u;
	nb->d = 0;
	if (!nb->plain) {
		char buf[64];
		size_t n = (size_t)(p - a);
		if (n < sizeof buf) {
			memcpy(buf, a, n);
			buf[n] = 0;
			nb->d = strtod(buf, NULL);
		} else { /* a long literal: its value needs the whole text */
			char *t = strndup(a, n);
			nb->d = t ? strtod(t, NULL) : NAN;
			free(t);
		}
	}
	return true;
}

static bool skip_value(struct scanner *sc, int depth);

static bool skip_object(struct scanner *sc, int depth)
{
	sc->p++; /* '{' */
	ws(sc);
	if (sc->p < sc->e && *sc->p == '}') {
		sc->p++;
		return true;
	}
	for (;;) {
		const char *raw;
		size_t rawlen, len;
		bool esc;
		if (!string(sc, NULL, &raw, &rawlen, &esc, &len) ||
		    !expect(sc, ':', "expected ':'") || !skip_value(sc, depth))
			return false;
		ws(sc);
		if (sc->p < sc->e && *sc->p == ',') {
			sc->p++;
			continue;
		}
		return expect(sc, '}', "expected ',' or '}'");
	}
}

static bool skip_array(struct scanner *sc, int depth)
{
	sc->p++; /* '[' */
	ws(sc);
	if (sc->p < sc->e && *sc->p == ']') {
		sc->p++;
		return true;
	}
	for (;;) {
		if (!skip_value(sc, depth))
			return false;
		ws(sc);
		if (sc->p < sc->e && *sc->p == ',') {
			sc->p++;
			continue;
		}
		return expect(sc, ']', "expected ',' or ']'");
	}
}

static bool literal(struct scanner *sc, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(sc->e - sc->p) < n || memcmp(sc->p, word, n) != 0)
		return syntax(sc, "expected a value");
	sc->p += n;
	return true;
}

/* Any value at sc->p (after whitespace); depth: containers around it. */
static bool skip_value(struct scanner *sc, int depth)
{
	ws(sc);
	if (sc->p >= sc->e)
		return syntax(sc, "expected a value");
	const char *raw;
	size_t rawlen, len;
	bool esc;
	struct number nb;
	switch (*sc->p) {
	case '{':
	case '[':
		if (depth + 1 > VF_ST_MAX_DEPTH)
			return syntax(sc, "nested deeper than 128");
		return *sc->p == '{' ? skip_object(sc, depth + 1) : skip_array(sc, depth + 1);
	case '"': return string(sc, NULL, &raw, &rawlen, &esc, &len);
	case 't': return literal(sc, "true");
	case 'f': return literal(sc, "false");
	case 'n': return literal(sc, "null");
	default: return number(sc, &nb);
	}
}

/* The kind of the value at sc->p, after whitespace: '{', '[', '"', 'n'
 * (null), 'b' (true/false), ']' or '}' (a container ends), '0' (anything
 * else: a number, or a syntax error number() reports), or 0 at the end. */
static inline char peek(struct scanner *sc)
{
	ws(sc);
	if (sc->p >= sc->e)
		return 0;
	char c = *sc->p;
	if (c == '{' || c == '[' || c == '"' || c == 'n' || c == ']' || c == '}')
		return c;
	if (c == 't' || c == 'f')
		return 'b';
	return '0';
}

/* An offset: a whole number in [0, 2^53] (exact in a double, as the
 * previous cJSON reading took it). */
static bool offset_value(const struct number *nb, uint64_t *out)
{
	if (nb->plain) {
		if (nb->u > 9007199254740992ull)
			return false;
		*out = nb->u;
		return true;
	}
	double d = nb->d;
	if (!isfinite(d) || d < 0 || d != floor(d) || d > 9007199254740992.0)
		return false;
	*out = (uint64_t)d;
	return true;
}

/* A dimension: a whole number >= 0; *big when it does not fit 64 bits. */
static bool dim_value(const struct number *nb, uint64_t *out, bool *big)
{
	*big = false;
	if (nb->plain) {
		*out = nb->u;
		return true;
	}
	double d = nb->d;
	if (!isfinite(d) || d < 0 || d != floor(d))
		return false;
	if (d >= 18446744073709551616.0) {
		*big = true;
		*out = UINT64_MAX;
		return true;
	}
	*out = (uint64_t)d;
	return true;
}

static bool push_dim(struct scanner *sc, int64_t v)
{
	struct vf_safetensors *st = sc->st;
	if (sc->ndims == sc->dims_cap) {
		size_t cap = sc->dims_cap ? 2 * sc->dims_cap : 1024;
		int64_t *d = realloc(st->dims, cap * sizeof *d);
		if (!d)
			return false;
		st->dims = d;
		sc->dims_cap = cap;
	}
	st->dims[sc->ndims++] = v;
	return true;
}

/* What one tensor's object said, checked once it is closed (in the order
 * the fields were checked when they came from a tree). */
struct fields {
	char dtype[40];
	bool has_dtype, dtype_str, dtype_long;
	bool has_shape, shape_arr, shape_bad, overflow;
	bool has_offs, offs_arr, offs_bad;
	int noffs;
	uint64_t numel, off[2];
	int ndim;
};

/* "shape": [dims] */
static bool read_shape(struct scanner *sc, struct fields *f, int depth)
{
	f->has_shape = true;
	if (peek(sc) != '[')
		return skip_value(sc, depth);
	f->shape_arr = true;
	f->numel = 1;
	sc->p++;
	if (peek(sc) == ']') {
		sc->p++;
		return true;
	}
	for (;;) {
		if (peek(sc) == '0') {
			struct number nb;
			if (!number(sc, &nb))
				return false;
			uint64_t v;
			bool big;
			if (!dim_value(&nb, &v, &big)) {
				f->shape_bad = true;
			} else {
				if (big)
					f->overflow = true;
				if (!f->overflow && __builtin_mul_overflow(f->numel, v, &f->numel))
					f->overflow = true;
				if (sc->problem == VF_OK && !push_dim(sc, (int64_t)v)) {
					problem(sc, VF_ENOMEM, "out of memory");
					return false;
				}
				if (f->ndim < INT32_MAX)
					f->ndim++;
			}
		} else {
			f->shape_bad = true;
			if (!skip_value(sc, depth + 1))
				return false;
		}
		ws(sc);
		if (sc->p < sc->e && *sc->p == ',') {
			sc->p++;
			continue;
		}
		return expect(sc, ']', "expected ',' or ']'");
	}
}

/* "data_offsets": [begin, end] */
static bool read_offsets(struct scanner *sc, struct fields *f, int depth)
{
	f->has_offs = true;
	if (peek(sc) != '[')
		return skip_value(sc, depth);
	f->offs_arr = true;
	sc->p++;
	if (peek(sc) == ']') {
		sc->p++;
		return true;
	}
	for (;;) {
		if (peek(sc) == '0') {
			struct number nb;
			if (!number(sc, &nb))
				return false;
			if (f->noffs < 2 && !offset_value(&nb, &f->off[f->noffs]))
				f->offs_bad = true;
		} else {
			if (f->noffs < 2)
				f->offs_bad = true;
			if (!skip_value(sc, depth + 1))
				return false;
		}
		if (f->noffs < 3)
			f->noffs++;
		ws(sc);
		if (sc->p < sc->e && *sc->p == ',') {
			sc->p++;
			continue;
		}
		return expect(sc, ']', "expected ',' or ']'");
	}
}

/* "dtype": "BF16" */
static bool read_dtype(struct scanner *sc, struct fields *f, int depth)
{
	f->has_dtype = true;
	if (peek(sc) != '"')
		return skip_value(sc, depth);
	f->dtype_str = true;
	const char *raw;
	size_t rawlen, len;
	bool esc;
	const char *at = sc->p;
	if (!string(sc, NULL, &raw, &rawlen, &esc, &len))
		return false;
	if (rawlen < sizeof f->dtype) {
		sc->p = at;
		string(sc, f->dtype, &raw, &rawlen, &esc, &len);
	} else { /* no dtype is that long: keep its start for the message */
		f->dtype_long = true;
		memcpy(f->dtype, raw, sizeof f->dtype - 1);
		f->dtype[sizeof f->dtype - 1] = 0;
	}
	return true;
}

/* The checks on one tensor's fields, in the order of the tree reading. */
static bool check_tensor(struct scanner *sc, struct vf_tensor *t, struct fields *f)
{
	const char *name = t->name;
	if (!f->has_dtype)
		return problem(sc, VF_ERR, "tensor '%s': missing field dtype", name);
	if (!f->dtype_str)
		return problem(sc, VF_ERR, "tensor '%s': field dtype: expected a string", name);
	if (f->dtype_long || !vf_dtype_from_name(f->dtype, &t->dtype))
		return problem(sc, VF_ERR, "tensor '%s': unknown dtype '%.32s'", name, f->dtype);
	if (!f->has_shape)
		return problem(sc, VF_ERR, "tensor '%s': missing field shape", name);
	if (!f->shape_arr)
		return problem(sc, VF_ERR, "tensor '%s': field shape: expected an array of integers",
			       name);
	if (!f->has_offs)
		return problem(sc, VF_ERR, "tensor '%s': missing field data_offsets", name);
	if (!f->offs_arr || f->noffs != 2)
		return problem(sc, VF_ERR, "tensor '%s': field data_offsets: expected [begin, end]",
			       name);
	if (f->offs_bad)
		return problem(sc, VF_ERR,
			       "tensor '%s': field data_offsets: expected two integers >= 0", name);
	t->begin = f->off[0];
	t->end = f->off[1];
	if (t->end < t->begin)
		return problem(sc, VF_ERR, "tensor '%s': data_offsets [%llu, %llu] are reversed",
			       name, (unsigned long long)t->begin, (unsigned long long)t->end);
	if (f->shape_bad)
		return problem(sc, VF_ERR, "tensor '%s': field shape: expected integers >= 0", name);
	t->ndim = f->ndim;
	uint64_t bits = 0, numel = f->numel;
	if (f->overflow || numel > INT64_MAX ||
	    __builtin_mul_overflow(numel, (uint64_t)vf_dtype_bits(t->dtype), &bits))
		return problem(sc, VF_ERR, "tensor '%s': shape product overflows 64 bits", name);
	if (bits % 8 != 0)
		return problem(sc, VF_ERR,
			       "tensor '%s': %llu elements of %s are not a whole number of bytes",
			       name, (unsigned long long)numel, f->dtype);
	t->numel = (int64_t)numel;
	if (t->end - t->begin != bits / 8)
		return problem(sc, VF_ERR,
			       "tensor '%s': data_offsets [%llu, %llu] hold %llu bytes, dtype %s x "
			       "shape needs %llu",
			       name, (unsigned long long)t->begin, (unsigned long long)t->end,
			       (unsigned long long)(t->end - t->begin), f->dtype,
			       (unsigned long long)(bits / 8));
	return true;
}

/* A key inside a tensor's object: which field it names (0 none). */
static int field_key(struct scanner *sc)
{
	const char *raw;
	size_t rawlen, len;
	bool esc;
	const char *at = sc->p;
	if (!string(sc, NULL, &raw, &rawlen, &esc, &len))
		return -1;
	char buf[16];
	const char *k = raw;
	if (esc) {
		if (rawlen >= sizeof buf)
			return 0;
		sc->p = at;
		string(sc, buf, &raw, &rawlen, &esc, &len);
		k = buf;
	}
	if (len == 5 && memcmp(k, "dtype", 5) == 0)
		return 1;
	if (len == 5 && memcmp(k, "shape", 5) == 0)
		return 2;
	if (len == 12 && memcmp(k, "data_offsets", 12) == 0)
		return 3;
	return 0;
}

/* Are the 8 bytes of x (in memory order) all ASCII digits? */
static inline bool eight_digits(uint64_t x)
{
	return ((x & 0xF0F0F0F0F0F0F0F0ull) |
		(((x + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) >> 4)) ==
	       0x3333333333333333ull;
}

/* The value of 8 ASCII digits loaded little-endian (first digit lowest):
 * pairs, then quads, then the whole, by multiplies. */
static inline uint64_t eight_digits_value(uint64_t x)
{
	x -= 0x3030303030303030ull;
	x = x * 10 + (x >> 8); /* each even byte: a two-digit pair */
	x = (((x & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
	     (((x >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >>
	    32;
	return x & 0xFFFFFFFFull;
}

/* A whole number as writers write it at *pp: digits, no leading zero, at
 * most 19 (no overflow); false (nothing consumed) otherwise. */
static inline bool plain_number(const char **pp, const char *e, uint64_t *out)
{
	const char *p = *pp, *d = p;
	uint64_t u = 0;
	/* 8 digits at a time while 19 cannot be passed (a long run is refused
	 * below all the same) */
	for (uint64_t x; e - p >= 8 && p - d <= 8 && (memcpy(&x, p, 8), eight_digits(x)); p += 8)
		u = u * 100000000ull + eight_digits_value(x);
	for (unsigned c; p < e && (c = (unsigned)(*p - '0')) < 10; p++)
		u = u * 10 + c;
	size_t n = (size_t)(p - d);
	if (n == 0 || n > 19 || (n > 1 && *d == '0'))
		return false;
	*pp = p;
	*out = u;
	return true;
}

/* A tensor's object exactly as the writers lay it out:
 * {"dtype":"<A-Z0-9_>","shape":[n,...],"data_offsets":[b,e]} with plain
 * numbers, no whitespace: read without the general scan, into the same
 * fields the general reading fills from that text. False when the text is
 * anything else (nothing consumed, no dim kept): the general reading then
 * takes it, and finds what it finds. */
static bool canonical_tensor(struct scanner *sc, struct fields *f)
{
	static const char k_dtype[] = "{\"dtype\":\"", k_shape[] = "\",\"shape\":[",
			  k_offs[] = ",\"data_offsets\":[";
	const char *p = sc->p, *e = sc->e;
	size_t ndims = sc->ndims;
	if ((size_t)(e - p) < sizeof k_dtype - 1 || memcmp(p, k_dtype, sizeof k_dtype - 1) != 0)
		return false;
	p += sizeof k_dtype - 1;
	const char *d = p;
	while (p < e && p - d < (ptrdiff_t)sizeof f->dtype - 1 &&
	       ((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
		p++;
	size_t dl = (size_t)(p - d);
	if ((size_t)(e - p) < sizeof k_shape - 1 || memcmp(p, k_shape, sizeof k_shape - 1) != 0)
		return false;
	memcpy(f->dtype, d, dl);
	f->dtype[dl] = 0;
	p += sizeof k_shape - 1;
	f->numel = 1;
	if (p < e && *p == ']') {
		p++;
	} else {
		for (;;) {
			uint64_t v;
			if (!plain_number(&p, e, &v))
				goto fail;
			if (!f->overflow && __builtin_mul_overflow(f->numel, v, &f->numel))
				f->overflow = true;
			if (sc->problem == VF_OK && !push_dim(sc, (int64_t)v))
				goto fail; /* the general reading meets it again */
			f->ndim++;
			if (p < e && *p == ',') {
				p++;
				continue;
			}
			if (p < e && *p == ']') {
				p++;
				break;
			}
			goto fail;
		}
	}
	if ((size_t)(e - p) < sizeof k_offs - 1 || memcmp(p, k_offs, sizeof k_offs - 1) != 0)
		goto fail;
	p += sizeof k_offs - 1;
	if (!plain_number(&p, e, &f->off[0]) || p >= e || *p++ != ',' ||
	    !plain_number(&p, e, &f->off[1]) || e - p < 2 || p[0] != ']' || p[1] != '}')
		goto fail;
	p += 2;
	/* offsets past 2^53 are not whole numbers the reading takes */
	f->offs_bad = f->off[0] > 9007199254740992ull || f->off[1] > 9007199254740992ull;
	f->has_dtype = f->dtype_str = true;
	f->has_shape = f->shape_arr = true;
	f->has_offs = f->offs_arr = true;
	f->noffs = 2;
	sc->p = p;
	return true;
fail:
	sc->ndims = ndims;
	memset(f, 0, sizeof *f);
	return false;
}

/* One tensor: its object at sc->p (depth 1: inside the header). */
static bool read_tensor(struct scanner *sc, struct vf_tensor *t)
{
	if (peek(sc) != '{') {
		problem(sc, VF_ERR, "tensor '%s': expected an object", t->name);
		return skip_value(sc, 1);
	}
	struct fields f;
	memset(&f, 0, sizeof f);
	if (canonical_tensor(sc, &f)) {
		if (sc->problem == VF_OK)
			check_tensor(sc, t, &f);
		return true;
	}
	sc->p++;
	static const char *const names[] = {"", "dtype", "shape", "data_offsets"};
	bool seen[4] = {false, false, false, false};
	ws(sc);
	if (sc->p < sc->e && *sc->p == '}') {
		sc->p++;
	} else {
		for (;;) {
			int k = field_key(sc);
			if (k < 0 || !expect(sc, ':', "expected ':'"))
				return false;
			if (k > 0 && seen[k])
				problem(sc, VF_ERR, "tensor '%s': field %s appears twice", t->name,
					names[k]);
			bool ok = k == 0 || seen[k] ? skip_value(sc, 2)
				  : k == 1	     ? read_dtype(sc, &f, 2)
				  : k == 2	     ? read_shape(sc, &f, 2)
						     : read_offsets(sc, &f, 2);
			if (!ok)
				return false;
			if (k > 0)
				seen[k] = true;
			ws(sc);
			if (sc->p < sc->e && *sc->p == ',') {
				sc->p++;
				continue;
			}
			if (!expect(sc, '}', "expected ',' or '}'"))
				return false;
			break;
		}
	}
	if (sc->problem == VF_OK)
		check_tensor(sc, t, &f);
	return true;
}

/* "__metadata__": null or an object of strings, kept as a small cJSON. */
static bool read_metadata(struct scanner *sc)
{
	char c = peek(sc);
	if (c == 'n')
		return literal(sc, "null");
	if (c != '{') {
		problem(sc, VF_ERR, "__metadata__: expected an object of strings");
		return skip_value(sc, 1);
	}
	cJSON *meta = sc->problem == VF_OK ? cJSON_CreateObject() : NULL;
	if (sc->problem == VF_OK && !meta)
		problem(sc, VF_ENOMEM, "out of memory");
	sc->p++;
	ws(sc);
	bool ok = true;
	if (sc->p < sc->e && *sc->p == '}') {
		sc->p++;
	} else {
		for (;;) {
			char *key = string_dup(sc);
			if (!key || !expect(sc, ':', "expected ':'")) {
				free(key);
				ok = false;
				break;
			}
			if (peek(sc) != '"') {
				problem(sc, VF_ERR, "__metadata__: value of '%.64s' is not a string",
					key);
				ok = skip_value(sc, 2);
			} else {
				char *val = string_dup(sc);
				ok = val != NULL;
				if (ok && sc->problem == VF_OK) {
					cJSON *s = cJSON_CreateString(val);
					if (s)
						cJSON_AddItemToObject(meta, key, s);
					else
						problem(sc, VF_ENOMEM, "out of memory");
				}
				free(val);
			}
			free(key);
			if (!ok)
				break;
			ws(sc);
			if (sc->p < sc->e && *sc->p == ',') {
				sc->p++;
				continue;
			}
			ok = expect(sc, '}', "expected ',' or '}'");
			break;
		}
	}
	if (ok && sc->problem == VF_OK) {
		sc->st->metadata = meta;
		return true;
	}
	cJSON_Delete(meta);
	return ok;
}

static bool header_entry(struct scanner *sc, bool *have_meta)
{
	struct vf_safetensors *st = sc->st;
	/* the key, decoded straight into the names arena */
	const char *raw;
	size_t rawlen, len;
	bool esc;
	char *name = st->names + sc->names_len;
	if (!string(sc, name, &raw, &rawlen, &esc, &len))
		return false;
	if (!expect(sc, ':', "expected ':'"))
		return false;
	if (len == 12 && memcmp(name, "__metadata__", 12) == 0) {
		if (*have_meta)
			problem(sc, VF_ERR, "__metadata__ appears twice");
		if (*have_meta || sc->problem != VF_OK)
			return skip_value(sc, 1);
		*have_meta = true;
		return read_metadata(sc);
	}
	if (sc->problem != VF_OK)
		return skip_value(sc, 1);
	if (st->ntensors == sc->cap) {
		size_t cap = sc->cap ? 2 * sc->cap : 64;
		struct vf_tensor *t = realloc(st->tensors, cap * sizeof *t);
		if (!t) {
			problem(sc, VF_ENOMEM, "out of memory");
			return skip_value(sc, 1);
		}
		st->tensors = t;
		sc->cap = cap;
	}
	struct vf_tensor *t = &st->tensors[st->ntensors++];
	memset(t, 0, sizeof *t);
	t->name = name;
	sc->names_len += len + 1;
	return read_tensor(sc, t);
}

static vf_status parse_json(const char *text, size_t n, const char *what,
			    struct vf_safetensors *st, struct vf_error *err)
{
	size_t bad = vf_utf8_check((const unsigned char *)text, n);
	if (bad != n)
		return vf_error_set(err, VF_ERR, "%s: header is not UTF-8 (byte %zu)", what, bad);
	struct scanner sc = {.s = text, .p = text, .e = text + n, .what = what, .err = err,
			     .st = st};
	ws(&sc);
	if (sc.p == sc.e || *sc.p != '{')
		return vf_error_set(err, VF_ERR, "%s: header is not a JSON object", what);
	/* decoded names are never longer than their quoted text */
	st->names = malloc(n + 1);
	if (!st->names)
		return vf_error_set(err, VF_ENOMEM, "%s: out of memory", what);
	bool have_meta = false, ok = true;
	sc.p++;
	ws(&sc);
	if (sc.p < sc.e && *sc.p == '}') {
		sc.p++;
	} else {
		for (;;) {
			if (!header_entry(&sc, &have_meta)) {
				ok = false;
				break;
			}
			ws(&sc);
			if (sc.p < sc.e && *sc.p == ',') {
				sc.p++;
				continue;
			}
			ok = expect(&sc, '}', "expected ',' or '}'");
			break;
		}
	}
	if (!ok && !sc.syntax) /* out of memory */
		return sc.problem != VF_OK ? sc.problem
					   : vf_error_set(err, VF_ENOMEM, "%s: out of memory", what);
	if (!ok)
		return vf_error_set(err, VF_ERR, "%s: header is not valid JSON (near byte %zu: %s)",
				    what, sc.syntax_at, sc.syntax);
	/* only whitespace may follow the object (writers pad with spaces) */
	ws(&sc);
	if (sc.p < sc.e)
		return vf_error_set(err, VF_ERR, "%s: header has data after its JSON object (byte %zu)",
				    what, (size_t)(sc.p - text));
	if (sc.problem != VF_OK)
		return sc.problem;
	/* every tensor's dims were pushed in order: point at them */
	size_t d = 0;
	for (size_t i = 0; i < st->ntensors; i++) {
		struct vf_tensor *t = &st->tensors[i];
		t->shape = t->ndim ? st->dims + d : NULL;
		d += (size_t)t->ndim;
	}
	return VF_OK;
}

static int cmp_offset(const void *a, const void *b)
{
	const struct vf_tensor *x = *(const struct vf_tensor *const *)a;
	const struct vf_tensor *y = *(const struct vf_tensor *const *)b;
	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return 0;
}

/* Names unique (a hash set; the message names the first duplicate in
 * name order, as a sorted scan would); offsets tile [0, end) exactly
 * (sorted by begin: header order when it already is, as writers do). */
static vf_status check_layout(const char *what, struct vf_safetensors *st, struct vf_error *err)
{
	size_t n = st->ntensors;
	if (n == 0)
		return VF_OK;
	size_t cap = 16;
	while (cap < 2 * n)
		cap *= 2;
	size_t *slot = calloc(cap, sizeof *slot); /* tensor index + 1, 0 empty */
	if (!slot)
		return vf_error_set(err, VF_ENOMEM, "%s: out of memory", what);
	const char *dup = NULL;
	for (size_t i = 0; i < n; i++) {
		const char *name = st->tensors[i].name;
		size_t h = (size_t)vf_hash_str(name) & (cap - 1);
		while (slot[h] && strcmp(st->tensors[slot[h] - 1].name, name) != 0)
			h = (h + 1) & (cap - 1);
		if (!slot[h])
			slot[h] = i + 1;
		else if (!dup || strcmp(name, dup) < 0)
			dup = name;
	}
	free(slot);
	if (dup)
		return vf_error_set(err, VF_ERR, "%s: tensor '%s' appears twice", what, dup);
	bool sorted = true;
	for (size_t i = 1; i < n && sorted; i++) {
		const struct vf_tensor *a = &st->tensors[i - 1], *b = &st->tensors[i];
		sorted = cmp_offset(&a, &b) <= 0;
	}
	struct vf_tensor **p = NULL;
	if (!sorted) {
		p = malloc(n * sizeof *p);
		if (!p)
			return vf_error_set(err, VF_ENOMEM, "%s: out of memory", what);
		for (size_t i = 0; i < n; i++)
			p[i] = &st->tensors[i];
		qsort(p, n, sizeof *p, cmp_offset);
	}
	vf_status rc = VF_OK;
	uint64_t pos = 0;
	for (size_t i = 0; i < n; i++) {
		const struct vf_tensor *t = p ? p[i] : &st->tensors[i];
		if (t->begin > pos) {
			rc = vf_error_set(err, VF_ERR,
					  "%s: tensor '%s': data_offsets [%llu, %llu] leave a gap after "
					  "byte %llu",
					  what, t->name, (unsigned long long)t->begin,
					  (unsigned long long)t->end, (unsigned long long)pos);
			break;
		}
		if (t->begin < pos) {
			rc = vf_error_set(err, VF_ERR,
					  "%s: tensor '%s': data_offsets [%llu, %llu] overlap the "
					  "previous tensor (ends at %llu)",
					  what, t->name, (unsigned long long)t->begin,
					  (unsigned long long)t->end, (unsigned long long)pos);
			break;
		}
		pos = t->end;
	}
	st->data_bytes = pos;
	free(p);
	return rc;
}

/* A file whose first 8 bytes read as an impossible header length and
 * whose byte 8 is not the '{' that opens every header is no safetensors
 * file: say what it starts with (text, a known magic, else the bytes). */
static vf_status not_safetensors(const unsigned char *b, size_t len, const char *what,
				 struct vf_error *err)
{
	char text[17];
	size_t n = len < 16 ? len : 16, i;
	for (i = 0; i < n; i++) {
		if (b[i] == '\n' || b[i] == '\r' || b[i] == '\t')
			text[i] = ' ';
		else if (b[i] >= 0x20 && b[i] < 0x7f)
			text[i] = (char)b[i];
		else
			break;
	}
	text[i] = 0;
	if (i == n)
		return vf_error_set(err, VF_ERR,
				    "%s: not a safetensors file: it starts with text \"%s\" where an 8-byte "
				    "header length and a JSON header are expected",
				    what, text);
	const char *kind = memcmp(b, "GGUF", 4) == 0		? " (a GGUF file)"
			   : memcmp(b, "PK\x03\x04", 4) == 0	? " (a zip archive, as torch.save writes)"
			   : b[0] == 0x80 && b[1] >= 2 && b[1] <= 5 ? " (a Python pickle)"
								 : "";
	return vf_error_set(err, VF_ERR,
			    "%s: not a safetensors file: it starts with bytes %02x %02x %02x %02x %02x %02x "
			    "%02x %02x%s, a header length beyond the file and no JSON header after it",
			    what, b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], kind);
}

vf_status vf_safetensors_parse(const void *buf, size_t len, uint64_t file_bytes,
			       const char *what, struct vf_safetensors *st, struct vf_error *err)
{
	memset(st, 0, sizeof *st);
	st->path = strdup(what);
	if (!st->path)
		return vf_error_set(err, VF_ENOMEM, "%s: out of memory", what);
	st->file_bytes = file_bytes;
	const unsigned char *b = buf;
	if (file_bytes < 8 || len < 8)
		return vf_error_set(err, VF_ERR,
				    "%s: truncated: %llu bytes, a safetensors file starts with an "
				    "8-byte header length",
				    what, (unsigned long long)file_bytes);
	uint64_t n = 0;
	for (int i = 7; i >= 0; i--)
		n = (n << 8) | b[i];
	st->header_len = n;
	if ((n > VF_SAFETENSORS_MAX_HEADER || n > file_bytes - 8) && len > 8 && b[8] != '{')
		return not_safetensors(b, len, what, err);
	if (n > VF_SAFETENSORS_MAX_HEADER)
		return vf_error_set(err, VF_ERR,
				    "%s: header length %llu exceeds the limit of %u bytes", what,
				    (unsigned long long)n, VF_SAFETENSORS_MAX_HEADER);
	if (n > file_bytes - 8)
		return vf_error_set(err, VF_ERR,
				    "%s: header length %llu exceeds the file size (%llu bytes)", what,
				    (unsigned long long)n, (unsigned long long)file_bytes);
	if (len < 8 + n)
		return vf_error_set(err, VF_ERR, "%s: truncated header (%zu of %llu bytes)", what,
				    len - 8, (unsigned long long)n);
	vf_status rc = parse_json((const char *)b + 8, (size_t)n, what, st, err);
	if (rc == VF_OK)
		rc = check_layout(what, st, err);
	if (rc != VF_OK)
		return rc;
	if (8 + n + st->data_bytes != file_bytes)
		return vf_error_set(err, VF_ERR,
				    "%s: file is %llu bytes, header and data need exactly %llu "
				    "(8 + %llu + %llu)",
				    what, (unsigned long long)file_bytes,
				    (unsigned long long)(8 + n + st->data_bytes),
				    (unsigned long long)n, (unsigned long long)st->data_bytes);
	for (size_t i = 0; i < st->ntensors; i++) {
		st->params += st->tensors[i].numel;
		st->dtype_params[st->tensors[i].dtype] += st->tensors[i].numel;
	}
	return VF_OK;
}

static vf_status pread_all(int fd, void *buf, size_t n, off_t off, const char *path,
			   struct vf_error *err)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(fd, (char *)buf + got, n - got, off + (off_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return vf_error_set(err, VF_ERR, "%s: %s", path, strerror(errno));
		if (r == 0)
			return vf_error_set(err, VF_ERR, "%s: truncated while reading the header",
					    path);
		got += (size_t)r;
	}
	return VF_OK;
}

/* The first read: most headers (a shard of a 7B model: ~30 KiB) fit, so a
 * file costs one pread; a longer header takes a second for the rest. */
#define FIRST_READ (128u << 10)

/* A header stub (safetensors.h): magic, the real size, the first 8 + N
 * bytes; the whole stub is read (no more than the header limit). */
static vf_status read_stub(int fd, uint64_t size, const char *path, struct vf_safetensors *st,
			   struct vf_error *err)
{
	if (size < 24 || size > 24 + (uint64_t)VF_SAFETENSORS_MAX_HEADER)
		return vf_error_set(err, VF_ERR, "%s: header stub of %llu bytes (expected 24 to "
					      "%llu)",
				    path, (unsigned long long)size,
				    24 + (unsigned long long)VF_SAFETENSORS_MAX_HEADER);
	unsigned char *buf = malloc((size_t)size);
	if (!buf)
		return vf_error_set(err, VF_ENOMEM, "%s: out of memory", path);
	vf_status rc = pread_all(fd, (char *)buf, (size_t)size, 0, path, err);
	uint64_t real = 0;
	for (int i = 15; i >= 8; i--)
		real = (real << 8) | buf[i];
	uint64_t n = 0;
	for (int i = 23; i >= 16; i--)
		n = (n << 8) | buf[i];
	if (rc == VF_OK && n != size - 24)
		rc = vf_error_set(err, VF_ERR, "%s: header stub holds %llu header bytes, its length "
					      "says %llu",
				  path, (unsigned long long)(size - 24), (unsigned long long)n);
	if (rc == VF_OK)
		rc = vf_safetensors_parse(buf + 16, (size_t)size - 16, real, path, st, err);
	if (rc == VF_OK)
		st->stub = true;
	free(buf);
	return rc;
}

vf_status vf_safetensors_read(const char *path, struct vf_safetensors *st,
			      struct vf_error *err)
{
	memset(st, 0, sizeof *st);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		return vf_error_set(err, e == ENOENT ? VF_ENOTFOUND : VF_ERR, "%s: %s", path,
				    e == ELOOP ? "symlink loop (too many levels of symbolic links)"
					       : strerror(e));
	}
	struct stat sb;
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return vf_error_set(err, VF_ERR, "%s: not a regular file", path);
	}
	uint64_t size = (uint64_t)sb.st_size;
	unsigned char head[8];
	vf_status rc = VF_OK;
	char *buf = NULL;
	if (size < 8) {
		rc = vf_safetensors_parse(head, 0, size, path, st, err);
		goto out;
	}
	size_t first = size < FIRST_READ ? (size_t)size : FIRST_READ;
	buf = malloc(first);
	if (!buf) {
		rc = vf_error_set(err, VF_ENOMEM, "%s: out of memory", path);
		goto out;
	}
	rc = pread_all(fd, buf, first, 0, path, err);
	if (rc != VF_OK)
		goto out;
	if (first >= 8 && memcmp(buf, VF_SAFETENSORS_STUB_MAGIC, 8) == 0) {
		rc = read_stub(fd, size, path, st, err);
		goto out;
	}
	uint64_t n = 0;
	for (int i = 7; i >= 0; i--)
		n = (n << 8) | (unsigned char)buf[i];
	if (n > VF_SAFETENSORS_MAX_HEADER || n > size - 8) {
		rc = vf_safetensors_parse(buf, first, size, path, st, err); /* the length error */
		goto out;
	}
	if (8 + n > first) {
		char *b = realloc(buf, 8 + (size_t)n);
		if (!b) {
			rc = vf_error_set(err, VF_ENOMEM, "%s: out of memory for a %llu-byte header",
					  path, (unsigned long long)n);
			goto out;
		}
		buf = b;
		rc = pread_all(fd, buf + first, 8 + (size_t)n - first, (off_t)first, path, err);
		if (rc != VF_OK)
			goto out;
	}
	rc = vf_safetensors_parse(buf, 8 + (size_t)n, size, path, st, err);
out:
	free(buf);
	close(fd);
	return rc;
}

/* ---- the index of a sharded checkpoint ----------------------------------
 * model.safetensors.index.json: {"metadata": {...}, "weight_map": {tensor:
 * file}}. Scanned like a header: the map's pairs kept in order, the rest
 * checked as JSON and skipped. */

static bool index_map(struct scanner *sc, struct vf_safetensors_index *ix, char **arena,
		      size_t *cap)
{
	if (peek(sc) != '{') {
		problem(sc, VF_ERR, "field weight_map: expected an object");
		return skip_value(sc, 1);
	}
	ix->have_map = true;
	sc->p++;
	ws(sc);
	if (sc->p < sc->e && *sc->p == '}') {
		sc->p++;
		return true;
	}
	/* the last file name read without escapes: maps list a shard's
	 * tensors together, so the next is most often the same bytes, which
	 * need no scan (none of them is special) and share its string */
	const char *last_raw = NULL, *last = NULL;
	size_t last_len = 0;
	for (;;) {
		const char *raw;
		size_t rawlen, len;
		bool esc;
		char *key = *arena;
		if (!string(sc, key, &raw, &rawlen, &esc, &len))
			return false;
		*arena += len + 1;
		if (!expect(sc, ':', "expected ':'"))
			return false;
		if (peek(sc) != '"') {
			problem(sc, VF_ERR, "weight_map['%.128s']: expected a file name", key);
			if (!skip_value(sc, 2))
				return false;
		} else {
			const char *file;
			if (last && (size_t)(sc->e - sc->p) > last_len + 1 &&
			    sc->p[1 + last_len] == '"' && memcmp(sc->p + 1, last_raw, last_len) == 0) {
				file = last;
				sc->p += last_len + 2;
			} else {
				char *out = *arena;
				if (!string(sc, out, &raw, &rawlen, &esc, &len))
					return false;
				*arena += len + 1;
				file = out;
				if (!esc) {
					last_raw = raw;
					last_len = rawlen;
					last = out;
				}
			}
			if (ix->n == *cap) {
				/* first room for the entries of a typical map (75
				 * bytes each or so) twice over */
				size_t c = *cap ? 2 * *cap : 256 + (size_t)(sc->e - sc->p) / 32;
				const char **t = realloc(ix->tensors, c * sizeof *t);
				if (t)
					ix->tensors = t;
				const char **f = t ? realloc(ix->files, c * sizeof *f) : NULL;
				if (f)
					ix->files = f;
				if (!t || !f) {
					problem(sc, VF_ENOMEM, "out of memory");
					return false;
				}
				*cap = c;
			}
			ix->tensors[ix->n] = key;
			ix->files[ix->n] = file;
			ix->n++;
		}
		ws(sc);
		if (sc->p < sc->e && *sc->p == ',') {
			sc->p++;
			continue;
		}
		return expect(sc, '}', "expected ',' or '}'");
	}
}

vf_status vf_safetensors_index_parse(const char *text, size_t len, const char *what,
				     struct vf_safetensors_index *ix, struct vf_error *err)
{
	memset(ix, 0, sizeof *ix);
	struct scanner sc = {.s = text, .p = text, .e = text + len, .what = what, .err = err};
	ix->arena = malloc(len + 1); /* decoded strings never outgrow their quotes */
	if (!ix->arena)
		return vf_error_set(err, VF_ENOMEM, "%s: out of memory", what);
	char *arena = ix->arena;
	size_t cap = 0;
	bool ok;
	if (peek(&sc) != '{') {
		ok = skip_value(&sc, 0);
	} else {
		sc.p++;
		ws(&sc);
		ok = true;
		if (sc.p < sc.e && *sc.p == '}') {
			sc.p++;
		} else {
			for (;;) {
				const char *raw;
				size_t rawlen, n;
				bool esc;
				char key[16];
				const char *at = sc.p;
				ok = string(&sc, NULL, &raw, &rawlen, &esc, &n);
				if (ok && rawlen < sizeof key) {
					sc.p = at;
					string(&sc, key, &raw, &rawlen, &esc, &n);
				}
				bool wm = ok && rawlen < sizeof key && n == 10 &&
					  memcmp(key, "weight_map", 10) == 0 && !ix->have_map &&
					  sc.problem == VF_OK;
				ok = ok && expect(&sc, ':', "expected ':'") &&
				     (wm ? index_map(&sc, ix, &arena, &cap) : skip_value(&sc, 1));
				if (!ok)
					break;
				ws(&sc);
				if (sc.p < sc.e && *sc.p == ',') {
					sc.p++;
					continue;
				}
				ok = expect(&sc, '}', "expected ',' or '}'");
				break;
			}
		}
	}
	if (ok) { /* only whitespace may follow */
		ws(&sc);
		if (sc.p < sc.e)
			ok = syntax(&sc, "data after the JSON value");
	}
	if (!ok && !sc.syntax) /* out of memory */
		return sc.problem != VF_OK ? sc.problem
					   : vf_error_set(err, VF_ENOMEM, "%s: out of memory", what);
	if (!ok)
		return vf_error_set(err, VF_ERR, "%s: invalid JSON near byte %zu (%s)", what,
				    sc.syntax_at, sc.syntax);
	if (sc.problem != VF_OK)
		return sc.problem;
	if (!ix->have_map)
		return vf_error_set(err, VF_ERR, "%s: field weight_map: expected an object", what);
	return VF_OK;
}

void vf_safetensors_index_release(struct vf_safetensors_index *ix)
{
	if (!ix)
		return;
	free(ix->tensors);
	free(ix->files);
	free(ix->arena);
	memset(ix, 0, sizeof *ix);
}

const struct vf_tensor *vf_safetensors_find(const struct vf_safetensors *st, const char *name)
{
	for (size_t i = 0; i < st->ntensors; i++)
		if (strcmp(st->tensors[i].name, name) == 0)
			return &st->tensors[i];
	return NULL;
}
