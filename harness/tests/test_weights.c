/*
 * SHA-256 against the FIPS 180-4 / NIST example vectors, and the safetensors
 * header parser on valid headers and on each rule it must enforce.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mtp/safetensors.h"
#include "mtp/sha256.h"

static void expect_hash(const void *data, size_t n, const char *want)
{
	char hex[65];

	mtp_sha256_hex(data, n, hex);
	cr_expect_str_eq(hex, want);
}

Test(sha256, nist_vectors)
{
	expect_hash("", 0,
		    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b"
		    "7852b855");
	expect_hash("abc", 3,
		    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61"
		    "f20015ad");
	const char *m448 =
		"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	expect_hash(m448, strlen(m448),
		    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd4"
		    "19db06c1");
}

Test(sha256, million_a_in_odd_pieces)
{
	struct mtp_sha256 s;
	unsigned char d[32];
	char hex[65], a[997];

	memset(a, 'a', sizeof(a));
	mtp_sha256_init(&s);
	for (size_t left = 1000000; left;) {
		size_t k = left < sizeof(a) ? left : sizeof(a);

		mtp_sha256_update(&s, a, k);
		left -= k;
	}
	mtp_sha256_final(&s, d);
	mtp_sha256_to_hex(d, hex);
	cr_expect_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497"
			      "200e046d39ccc7112cd0");
}

static int parse(const char *json, uint64_t data, struct mtp_safetensors *st,
		 char *err)
{
	memset(st, 0, sizeof(*st));
	return (int)mtp_safetensors_parse(json, strlen(json), data, st, err,
					  256);
}

Test(safetensors, lists_names_dtypes_shapes_offsets)
{
	struct mtp_safetensors st;
	char err[256];
	const char *h = "{\"__metadata__\":{\"format\":\"pt\"},"
			"\"w\\u00e9\":{\"dtype\":\"BF16\",\"shape\":[2,3],"
			"\"data_offsets\":[0,12]},"
			"\"s\":{\"shape\":[],\"dtype\":\"F32\","
			"\"data_offsets\":[12,16]}}   ";

	cr_assert_eq(parse(h, 16, &st, err), 0, "%s", err);
	cr_assert_eq(st.n, 2);
	const struct mtp_st_tensor *t = mtp_safetensors_find(&st, "w\xc3\xa9");

	cr_assert(t);
	cr_expect_str_eq(t->dtype, "BF16");
	cr_expect_eq(t->ndim, 2);
	cr_expect_eq(t->shape[1], 3);
	cr_expect_eq(t->end, 12);
	cr_expect_eq(mtp_safetensors_find(&st, "s")->ndim, 0);
	mtp_safetensors_close(&st);
}

Test(safetensors, refuses_each_broken_rule)
{
	static const char *const bad[] = {
		"[]",
		"{\"a\":{\"dtype\":\"Q7\",\"shape\":[1],\"data_offsets\":[0,1]}"
		"}",
		"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]"
		"}}",
		"{\"a\":{\"dtype\":\"F32\",\"shape\":[8],\"data_offsets\":[0,"
		"32]}}",
		"{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]}"
		","
		"\"b\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[2,6]}"
		"}",
		"{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}"
		","
		"\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]}"
		"}",
		"{\"a\":{\"dtype\":\"U8\",\"shape\":[-1],\"data_offsets\":[0,1]"
		"}}",
		"{\"a\":{\"dtype\":\"U8\",\"shape\":[1.5],\"data_offsets\":[0,"
		"1]}}",
		"{\"a\":{\"dtype\":\"U8\",\"shape\":[4294967296,4294967296,16],"
		"\"data_offsets\":[0,0]}}",
		"{\"a\":{\"dtype\":\"U8\",\"shape\":[1]}}",
		"{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,0]}"
		"}",
		"{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}"
		"} x",
		"{\"a\\u0000\":{\"dtype\":\"U8\",\"shape\":[1],"
		"\"data_offsets\":[0,1]}}",
		"{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]"
		"}",
		"{\"__metadata__\":[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]}",
		/* an empty tensor name (found by fuzz_safetensors) */
		"{\"\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":"
		"[0,1]}}",
	};
	struct mtp_safetensors st;
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		cr_expect_neq(parse(bad[i], 8, &st, err), 0, "accepted %s",
			      bad[i]);
		cr_expect(err[0] && !strchr(err, '\n'), "no error for %s",
			  bad[i]);
		mtp_safetensors_close(&st);
	}
}

Test(safetensors, open_checks_the_header_length)
{
	char path[] = "/tmp/mtp-st-XXXXXX", err[256];
	int fd = mkstemp(path);
	unsigned char n8[8] = {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0};
	struct mtp_safetensors st;

	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, n8, 8), 8);
	cr_assert_eq(write(fd, "{}", 2), 2);
	close(fd);
	cr_expect_neq(mtp_safetensors_open(path, &st, err, sizeof(err)), 0);
	cr_expect(strstr(err, "header length"), "%s", err);
	unlink(path);
}
