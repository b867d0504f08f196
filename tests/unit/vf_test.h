/* vf_test.h - the unit-test harness: CHECK macros, a test list, and the
 * closing line "N passed, N failed" that CI reads.
 *
 *   static void test_x(void) { CHECK(1 + 1 == 2); }
 *   int main(void) { RUN(test_x); return vf_test_done(); }
 *
 * A test counts as passed when none of its CHECKs failed. */
#ifndef VF_TEST_H
#define VF_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int vf_t_passed, vf_t_failed, vf_t_cur_failed;
static const char *vf_t_name;

/* Reports a failed condition of the current test; returns ok. The one
 * place CHECK and REQUIRE say "FAIL"; each evaluates its condition once. */
static inline int vf_t_check(int ok, const char *file, int line, const char *expr)
{
	if (!ok) {
		fprintf(stderr, "  FAIL %s (%s:%d): %s\n", vf_t_name, file, line, expr);
		vf_t_cur_failed++;
	}
	return ok;
}

#define CHECK(cond) ((void)vf_t_check(!!(cond), __FILE__, __LINE__, #cond))

/* A failed CHECK that also ends the test (what it needs is missing). */
#define REQUIRE(cond)                                                  \
	do {                                                           \
		if (!vf_t_check(!!(cond), __FILE__, __LINE__, #cond)) \
			return;                                        \
	} while (0)

#define CHECK_INT(a, b)                                                                     \
	do {                                                                                \
		long long va_ = (long long)(a), vb_ = (long long)(b);                       \
		if (va_ != vb_) {                                                           \
			fprintf(stderr, "  FAIL %s (%s:%d): %s == %lld, expected %s == %lld\n", \
				vf_t_name, __FILE__, __LINE__, #a, va_, #b, vb_);           \
			vf_t_cur_failed++;                                                  \
		}                                                                           \
	} while (0)

#define CHECK_STR(a, b)                                                                   \
	do {                                                                              \
		const char *sa_ = (a), *sb_ = (b);                                        \
		if (!sa_ || !sb_ || strcmp(sa_, sb_) != 0) {                              \
			fprintf(stderr, "  FAIL %s (%s:%d): %s == \"%s\", expected \"%s\"\n", \
				vf_t_name, __FILE__, __LINE__, #a, sa_ ? sa_ : "(null)",  \
				sb_ ? sb_ : "(null)");                                    \
			vf_t_cur_failed++;                                                \
		}                                                                         \
	} while (0)

#define CHECK_CONTAINS(hay, needle)                                                        \
	do {                                                                               \
		const char *h_ = (hay), *n_ = (needle);                                    \
		if (!h_ || !strstr(h_, n_)) {                                              \
			fprintf(stderr, "  FAIL %s (%s:%d): \"%s\" does not contain \"%s\"\n", \
				vf_t_name, __FILE__, __LINE__, h_ ? h_ : "(null)", n_);    \
			vf_t_cur_failed++;                                                 \
		}                                                                          \
	} while (0)

#define RUN(fn)                                                     \
	do {                                                        \
		vf_t_name = #fn;                                    \
		vf_t_cur_failed = 0;                                \
		fn();                                               \
		if (vf_t_cur_failed) {                              \
			vf_t_failed++;                              \
			fprintf(stderr, "not ok - %s\n", #fn);      \
		} else {                                            \
			vf_t_passed++;                              \
			fprintf(stderr, "ok - %s\n", #fn);          \
		}                                                   \
	} while (0)

static inline int vf_test_done(void)
{
	printf("%d passed, %d failed\n", vf_t_passed, vf_t_failed);
	return vf_t_failed ? 1 : 0;
}

/* Paths the build passes in the environment (CMake's test ENVIRONMENT). */
static inline const char *vf_test_env(const char *name, const char *fallback)
{
	const char *v = getenv(name);
	return v && *v ? v : fallback;
}

#endif
