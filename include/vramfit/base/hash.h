/* hash.h - a string hash for the open-addressing tables that look names up
 * (tensor names in a header, an index's weight_map, names seen before):
 * 8 bytes at a time with a multiply-xorshift mix, so a 40-byte tensor name
 * costs a handful of multiplies instead of one per byte. Not for anything
 * an attacker's collisions matter to beyond time: the tables it serves
 * hold at most a file's names. */
#ifndef VRAMFIT_HASH_H
#define VRAMFIT_HASH_H

#include <stdint.h>
#include <string.h>

static inline uint64_t vf_hash_mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

/* Hash of the n bytes at s, seeded. */
static inline uint64_t vf_hash_bytes(const void *s, size_t n, uint64_t seed)
{
	const unsigned char *p = s;
	uint64_t h = seed ^ (0x9e3779b97f4a7c15ull * (n + 1));
	while (n >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
		p += 8;
		n -= 8;
	}
	uint64_t w = 0;
	memcpy(&w, p, n);
	return vf_hash_mix(h ^ w);
}

/* Hash of a C string. */
static inline uint64_t vf_hash_str(const char *s)
{
	return vf_hash_bytes(s, strlen(s), 0);
}

#endif
