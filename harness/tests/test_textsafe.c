/*
 * The text boundary (textsafe.c) and the writers' escaping: hostile strings
 * (invalid UTF-8, controls, markup, no terminating NUL) come out bounded,
 * valid UTF-8, and escaped; golden strings written by hand.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "mtp/textio.h"
#include "mtp/textsafe.h"

static bool valid_utf8(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s);
	uint32_t cp;

	for (size_t i = 0; i < n;) {
		int k = mtp_utf8_seq(u + i, n - i, &cp);

		if (!k)
			return false;
		i += (size_t)k;
	}
	return true;
}

/* What fn writes for s, as a malloc'ed string. */
static char *written(void (*fn)(FILE *, const char *), const char *s)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	fn(f, s);
	fclose(f);
	return buf;
}

Test(textsafe, utf8_rejects_overlong_surrogates_and_cut_sequences)
{
	uint32_t cp;

	cr_expect_eq(mtp_utf8_seq((const unsigned char *)"\xc3\xa9", 2, &cp),
		     2);
	cr_expect_eq(cp, 0xE9);
	cr_expect_eq(mtp_utf8_seq((const unsigned char *)"\xc0\xaf", 2, &cp),
		     0);
	cr_expect_eq(
		mtp_utf8_seq((const unsigned char *)"\xed\xa0\x80", 3, &cp), 0);
	cr_expect_eq(
		mtp_utf8_seq((const unsigned char *)"\xf4\x90\x80\x80", 4, &cp),
		0);
	cr_expect_eq(mtp_utf8_seq((const unsigned char *)"\xe2\x82", 2, &cp),
		     0);
	cr_expect_eq(mtp_utf8_seq((const unsigned char *)"\xff", 1, &cp), 0);
}

Test(textsafe, sanitize_bounds_repairs_and_escapes)
{
	char src[16], dst[64];

	memset(src, 'x', sizeof(src)); /* no NUL: only srcmax bytes are read */
	mtp_text_sanitize(dst, sizeof(dst), src, sizeof(src));
	cr_expect_eq(strlen(dst), sizeof(src));
	mtp_text_sanitize(dst, sizeof(dst), "a\xff\x01<\xc3", 64);
	cr_expect_str_eq(dst, "a\xef\xbf\xbd\\x01<\xef\xbf\xbd");
	mtp_text_sanitize(dst, 5, "ab\xc3\xa9\xc3\xa9", 64);
	cr_expect_str_eq(dst, "ab\xc3\xa9", "cut on a character boundary");
	mtp_text_sanitize(dst, 4, "abcdef", 64);
	cr_expect_str_eq(dst, "abc");
}

Test(textsafe, json_strings_stay_valid_utf8_json)
{
	char *j = written(mtp_json_str, "q\"\\\x01\n\xff\xc3(\xe2\x82\xac");

	cr_expect_str_eq(
		j, "\"q\\\"\\\\\\u0001\\u000a\\ufffd\\ufffd(\xe2\x82\xac\"");
	cr_expect(valid_utf8(j));
	free(j);
}

Test(textsafe, xml_escapes_markup_and_replaces_what_xml_forbids)
{
	char *x = written(mtp_xml_str,
			  "<b>&\"'\x01\x1b\xff]]></failure>\xef\xbf\xbe\t\n");

	cr_expect_str_eq(x, "&lt;b&gt;&amp;&quot;&#39;\\x01\\x1b\xef\xbf\xbd]]"
			    "&gt;&lt;/failure&gt;\xef\xbf\xbd\t\n");
	cr_expect(valid_utf8(x));
	free(x);
}
