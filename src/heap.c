/* heap.c - the process heap on transparent huge pages (issue 21).
 *
 * On the 2-core Firecracker VM a page fault costs about 10 us (200 faults
 * of a test program: 2.1 ms), and a short command's heap was most of its
 * faults: a one-GPU estimate 122 of 267, the wide fit --search most of its
 * 723, partly in the 64 MiB arenas glibc maps for threads. A 2 MiB
 * transparent huge page costs one fault, 130-280 us with its zeroing.
 *
 * So before a command runs, the heap is steered onto huge pages where the
 * kernel's THP mode allows it ("madvise", the common default, or "always"):
 *   - M_TOP_PAD 16 MiB: the first sbrk reserves that much, so the heap spans
 *     whole aligned 2 MiB ranges before any of them is touched; they are
 *     marked MADV_HUGEPAGE (only those touched are ever faulted);
 *   - the stretch up to the first aligned address is taken by one block
 *     that is kept and never written (its pages are never faulted);
 *   - M_ARENA_MAX 1: threads allocate from this heap too (vramfit's threads
 *     make a few hundred allocations a run: no contention to speak of);
 *   - M_TRIM_THRESHOLD 64 MiB: the huge pages are not handed back after a
 *     burst of frees and refaulted small;
 *   - M_MMAP_THRESHOLD back at glibc's 128 KiB once the lead is taken.
 * Nothing changes when THP is off ("never") or the heap is not one
 * contiguous break: madvise fails or the checks below skip it, and malloc
 * runs as before; what malloc returns is the same either way, so no output
 * changes. VRAMFIT_HEAP=plain leaves glibc's defaults (for paired timing).
 * Not in the sanitizer builds (their allocator is not glibc's). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#if defined(__linux__) && defined(__GLIBC__) && !defined(VF_SANITIZED_BUILD)
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>
#define VF_HEAP_HUGE 1
#endif

#ifdef VF_HEAP_HUGE
/* The block that covers the heap up to the aligned stretch: reachable for
 * the whole run, its interior never touched. volatile: a pointer only
 * written would let the compiler drop the malloc, and with it the lead. */
static void *volatile heap_lead;

void vf_cli_heap_setup(void)
{
	const char *env = getenv("VRAMFIT_HEAP");
	if (env && strcmp(env, "plain") == 0)
		return;
	const uintptr_t huge = (uintptr_t)2 << 20;
	mallopt(M_ARENA_MAX, 1);
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	mallopt(M_TOP_PAD, 16 << 20);
	char *first = malloc(16);
	if (!first)
		return;
	char *end = sbrk(0);
	uintptr_t at = ((uintptr_t)first + 4096 + huge - 1) & ~(huge - 1);
	/* The first block must lie in the break's heap, with at least one
	 * whole aligned 2 MiB range after it. */
	if (end != (char *)-1 && first < end && at + huge <= (uintptr_t)end &&
	    madvise((void *)at, ((uintptr_t)end - at) & ~(huge - 1), MADV_HUGEPAGE) == 0) {
		mallopt(M_MMAP_THRESHOLD, 32 << 20); /* the lead block from the heap */
		heap_lead = malloc(at - (uintptr_t)first - 64);
		mallopt(M_MMAP_THRESHOLD, 128 << 10);
	}
	free(first);
}
#else
void vf_cli_heap_setup(void)
{
}
#endif
