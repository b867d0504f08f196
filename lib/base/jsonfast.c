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
 * the two trees equal on every text this path accepts.
 *
 * The same parser also builds a read-only tree in an arena (struct
 * vf_json_doc, vf_json_doc_parse): its nodes and strings are carved out of a
 * few large blocks, and the whole tree is freed with them; for the catalogs
 * read at every start, where a malloc and a free per node and per string
 * were as costly as the parsing itself (issue 21). Texts the fast path
 * declines are parsed by cJSON into an ordinary tree the doc owns. */
#include "vramfit/base/json.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The arena: blocks chained from the newest; each at least ARENA_MIN bytes
 * (or a first block sized from the text), nodes and strings carved in
 * 8-byte steps. */
#define ARENA_MIN (32u << 10)
struct arena_block {
	struct arena_block *prev;
	size_t used, size;
	_Alignas(16) unsigned char data[];
};

struct vf_json_doc {
	struct arena_block *blocks; /* the arena tree's storage, or NULL */
	cJSON *tree;                /* cJSON's own tree (declined texts), or NULL */
	const cJSON *root;
};

struct jf {
	const unsigned char *p, *end;
	int depth;
	struct vf_json_doc *doc; /* NULL: cJSON_malloc'd nodes */
};

/* a new block for n bytes (n a multiple of 8), and n bytes from it */
static void *arena_grow(struct vf_json_doc *d, size_t n)
{
	size_t size = d->blocks ? 2 * d->blocks->size : 0;
	if (size < ARENA_MIN)
		size = ARENA_MIN;
	if (size < n)
		size = n;
	struct arena_block *b = malloc(sizeof *b + size);
	if (!b)
		return NULL;
	b->prev = d->blocks;
	b->used = n;
	b->size = size;
	d->blocks = b;
	return b->data;
}

static inline void *arena_alloc(struct vf_json_doc *d, size_t n)
{
	n = (n + 7) & ~(size_t)7;
	struct arena_block *b = d->blocks;
	if (!b || b->size - b->used < n)
		return arena_grow(d, n);
	void *p = b->data + b->used;
	b->used += n;
	return p;
}

static void *jf_alloc(struct jf *j, size_t n)
{
	return j->doc ? arena_alloc(j->doc, n) : cJSON_malloc(n);
}

/* frees what the parse made on the cJSON path; the arena's go with the doc */
static void jf_free(struct jf *j, void *p)
{
	if (!j->doc)
		cJSON_free(p);
}

static void ws(struct jf *j)
{
	while (j->p < j->end && *j->p <= 32)
		j->p++;
}

static cJSON *node(struct jf *j, int type)
{
	cJSON *n = jf_alloc(j, sizeof *n);
	if (n) {
		memset(n, 0, sizeof *n);
		n->type = type;
	}
	return n;
}

/* The index (0-7) of the first of the 8 bytes at q that is a quote, a
 * backslash or a control byte (< 0x20), or 8 when none is; strings are
 * most of a catalog's bytes (issue 21). (v - 0x01..) & ~v & 0x80.. flags
 * the bytes of v that are zero and (x - 0x20..) & ~x & 0x80.. those of x
 * below 0x20, exactly up to the first one (a borrow can flag a byte after
 * it, never one before). On a big-endian machine the first byte is the
 * high one, where those borrows go: any flag answers 0 (byte by byte). */
static unsigned first_special8(const unsigned char *q)
{
	const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
	uint64_t x;
	memcpy(&x, q, 8);
	uint64_t quote = x ^ (ones * '"'), bslash = x ^ (ones * '\\');
	uint64_t m = (((quote - ones) & ~quote) | ((bslash - ones) & ~bslash) |
		      ((x - ones * 0x20) & ~x)) &
		     highs;
	if (!m)
		return 8;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return (unsigned)__builtin_ctzll(m) / 8;
#else
	return 0;
#endif
}

/* j->p at the opening quote; the string without its quotes, or NULL
 * (declined or out of memory) */
static char *string(struct jf *j)
{
	const unsigned char *s = ++j->p, *q = s;
	size_t esc = 0;
	for (;;) {
		while (j->end - q >= 8) {
			unsigned k = first_special8(q);
			q += k;
			if (k < 8)
				break;
		}
		if (q >= j->end)
			return NULL;
		if (*q == '"')
			break;
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
	char *out = jf_alloc(j, (size_t)(q - s) - esc + 1);
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
			default: jf_free(j, out); return NULL;
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
	cJSON *n = node(j, cJSON_Number);
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
	cJSON *c = node(j, object ? cJSON_Object : cJSON_Array), *tail = NULL;
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
				jf_free(j, key);
				goto fail;
			}
			j->p++;
			ws(j);
		}
		cJSON *v = value(j);
		if (!v) {
			jf_free(j, key);
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
	if (!j->doc)
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
		cJSON *n = node(j, cJSON_String);
		if (!n) {
			jf_free(j, s);
			return NULL;
		}
		n->valuestring = s;
		return n;
	}
	case 't':
		if (!literal(j, "true", 4))
			return NULL;
		cJSON *t = node(j, cJSON_True);
		if (t)
			t->valueint = 1;
		return t;
	case 'f':
		return literal(j, "false", 5) ? node(j, cJSON_False) : NULL;
	case 'n':
		return literal(j, "null", 4) ? node(j, cJSON_NULL) : NULL;
	default:
		return number(j);
	}
}

/* the whole text's tree, or NULL (declined, or out of memory); on the
 * cJSON path a tree that is not returned is deleted */
static cJSON *parse(const char *text, size_t len, struct vf_json_doc *doc)
{
	struct jf j = {(const unsigned char *)text, (const unsigned char *)text + len, 0, doc};
	/* a byte-order mark: cJSON's */
	if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
		return NULL;
	ws(&j);
	cJSON *root = value(&j);
	if (!root)
		return NULL;
	/* after the value JSON's white space only (cJSON's skip takes any
	 * control byte): anything else is declined, and cJSON's path says so */
	while (j.p < j.end && (*j.p == ' ' || *j.p == '\t' || *j.p == '\n' || *j.p == '\r'))
		j.p++;
	if (j.p != j.end) {
		if (!doc)
			cJSON_Delete(root);
		return NULL;
	}
	return root;
}

cJSON *vf__json_parse_fast(const char *text, size_t len)
{
	return parse(text, len, NULL);
}

static void arena_release(struct vf_json_doc *d)
{
	while (d->blocks) {
		struct arena_block *b = d->blocks;
		d->blocks = b->prev;
		free(b);
	}
}

vf_status vf_json_doc_parse(const char *text, size_t len, const char *what,
			    struct vf_json_doc **out, struct vf_error *err)
{
	*out = NULL;
	vf_status nst = vf__json_check_nul(text, len, what, err);
	if (nst != VF_OK)
		return nst;
	struct vf_json_doc *d = calloc(1, sizeof *d);
	if (!d)
		return vf_error_set(err, VF_ENOMEM, "%s: out of memory", what);
	/* a first block that holds a catalog's whole tree: 1.6 to 3.1 bytes of
	 * tree per byte of the shipped catalogs' text (gpus.json 2.9) */
	size_t first = len < (SIZE_MAX >> 4) ? 3 * len + 4096 : 0;
	if (first > ARENA_MIN && first < (64u << 20) && !arena_alloc(d, first)) {
		free(d);
		return vf_error_set(err, VF_ENOMEM, "%s: out of memory", what);
	}
	if (d->blocks)
		d->blocks->used = 0;
	d->root = parse(text, len, d);
	if (!d->root) {
		arena_release(d);
		vf_status st = vf__json_parse_cjson(text, len, what, &d->tree, err);
		if (st != VF_OK) {
			free(d);
			return st;
		}
		d->root = d->tree;
	}
	*out = d;
	return VF_OK;
}

const cJSON *vf_json_doc_root(const struct vf_json_doc *d)
{
	return d ? d->root : NULL;
}

void vf_json_doc_free(struct vf_json_doc *d)
{
	if (!d)
		return;
	arena_release(d);
	cJSON_Delete(d->tree);
	free(d);
}

/* --- a doc from a tree image (cmake/json-image.c writes them at build time
 * for the embedded catalogs; issue 21: no text scanned, no string copied).
 * The image, in the host's byte order:
 *   u32 VF_JSON_IMAGE_MAGIC, u32 node count n, u32 pool length
 *   n records of 24 bytes in preorder: u32 type (one cJSON type bit),
 *     u32 key (pool offset + 1, 0 for none), u32 string (pool offset + 1,
 *     0 for none), u32 children (those records follow), f64 number
 *   the pool: NUL-terminated strings, its last byte a NUL.
 * Strings point into the image (read-only, like every doc's tree). */
#define IMG_HEAD 12u
#define IMG_REC 24u

struct img {
	const unsigned char *rec, *pool;
	uint32_t n, next, pool_len;
	cJSON *nodes;
};

static uint32_t img_u32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* a record as the image holds it (IMG_REC bytes, no padding) */
struct img_rec {
	uint32_t type, key, str, kids;
	double num;
};
_Static_assert(sizeof(struct img_rec) == IMG_REC, "a tree image record is 24 bytes");

/* the pool string at off - 1 into *s (NULL for 0); false when off is outside */
static inline bool img_string(const struct img *m, uint32_t off, char **s)
{
	*s = off ? (char *)(uintptr_t)(m->pool + off - 1) : NULL;
	return off <= m->pool_len;
}

/* a scalar's fields as cJSON sets them; false when r is not a scalar */
static bool img_scalar(cJSON *c, const struct img_rec *r)
{
	switch (r->type) {
	case cJSON_String:
		return c->valuestring && !r->kids;
	case cJSON_True:
		c->valueint = 1; /* as cJSON sets it */
		/* fall through */
	case cJSON_False:
	case cJSON_NULL:
		return !c->valuestring && !r->kids;
	case cJSON_Number:
		if (c->valuestring || r->kids || !(r->num - r->num == 0)) /* NaN, inf */
			return false;
		c->valuedouble = r->num;
		c->valueint = r->num >= INT_MAX	       ? INT_MAX
			      : r->num <= (double)INT_MIN ? INT_MIN
							  : (int)r->num;
		return true;
	default:
		return false;
	}
}

/* node m->next and its children; keyed: a member of an object */
static cJSON *img_node(struct img *m, int depth, bool keyed)
{
	if (m->next >= m->n || depth > VF__JSON_FAST_DEPTH)
		return NULL;
	struct img_rec r;
	memcpy(&r, m->rec + (size_t)m->next * IMG_REC, IMG_REC);
	cJSON *c = &m->nodes[m->next++];
	*c = (cJSON){.type = (int)r.type};
	if (!img_string(m, r.key, &c->string) || !img_string(m, r.str, &c->valuestring) ||
	    (c->string != NULL) != keyed)
		return NULL;
	if (r.type != cJSON_Array && r.type != cJSON_Object)
		return img_scalar(c, &r) ? c : NULL;
	if (c->valuestring || r.kids > m->n - m->next)
		return NULL;
	cJSON *tail = NULL;
	for (uint32_t i = 0; i < r.kids; i++) {
		cJSON *v = img_node(m, depth + 1, r.type == cJSON_Object);
		if (!v)
			return NULL;
		append(c, &tail, v);
	}
	return c;
}

vf_status vf__json_doc_from_image(const unsigned char *image, size_t len, const char *what,
				  struct vf_json_doc **out, struct vf_error *err)
{
	*out = NULL;
	struct img m = {0};
	if (len < IMG_HEAD || img_u32(image) != VF_JSON_IMAGE_MAGIC)
		return vf_error_set(err, VF_ERR, "%s: not a tree image", what);
	m.n = img_u32(image + 4);
	m.pool_len = img_u32(image + 8);
	if (m.n == 0 || m.n > (len - IMG_HEAD) / IMG_REC || m.pool_len == 0 ||
	    m.pool_len != len - IMG_HEAD - (size_t)m.n * IMG_REC)
		return vf_error_set(err, VF_ERR, "%s: tree image of a wrong size", what);
	m.rec = image + IMG_HEAD;
	m.pool = m.rec + (size_t)m.n * IMG_REC;
	if (m.pool[m.pool_len - 1] != '\0')
		return vf_error_set(err, VF_ERR, "%s: tree image pool not terminated", what);
	struct vf_json_doc *d = calloc(1, sizeof *d);
	if (!d || !(m.nodes = arena_alloc(d, (size_t)m.n * sizeof(cJSON)))) {
		free(d);
		return vf_error_set(err, VF_ENOMEM, "%s: out of memory", what);
	}
	d->root = img_node(&m, 1, false);
	if (!d->root || m.next != m.n) {
		vf_json_doc_free(d);
		return vf_error_set(err, VF_ERR, "%s: malformed tree image (node %u)", what,
				    (unsigned)m.next);
	}
	*out = d;
	return VF_OK;
}
