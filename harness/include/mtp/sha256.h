/*
 * SHA-256 (FIPS 180-4), small and dependency-free: weights by reference are
 * checked against the hash a dump declares (FORMAT.md v2), and live
 * parameters against their live_sha256.
 */
#ifndef MTP_SHA256_H
#define MTP_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct mtp_sha256 {
	uint32_t h[8];
	uint64_t len; /* bytes hashed so far */
	unsigned char buf[64];
	size_t nbuf;
};

void mtp_sha256_init(struct mtp_sha256 *s);
void mtp_sha256_update(struct mtp_sha256 *s, const void *data, size_t n);
/* Writes the 32-byte digest; s must be initialised again before reuse. */
void mtp_sha256_final(struct mtp_sha256 *s, unsigned char out[32]);
/* The digest of data as 64 lowercase hex digits and a NUL. */
void mtp_sha256_hex(const void *data, size_t n, char hex[65]);
/* digest as 64 lowercase hex digits and a NUL. */
void mtp_sha256_to_hex(const unsigned char digest[32], char hex[65]);

#endif
