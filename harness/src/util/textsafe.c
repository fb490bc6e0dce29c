/*
 * The boundary for text the harness did not write: whatever a backend puts
 * in an error message, and whatever a worker sends, is copied with a bound,
 * repaired into valid UTF-8 and stripped of control characters before it can
 * reach a console line or a report; the XML writers repair again on output.
 */
#include "mtp/textsafe.h"

#include <string.h>

int mtp_utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
	static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
	int len = s[0] < 0x80		? 1
		  : (s[0] >> 5) == 0x6	? 2
		  : (s[0] >> 4) == 0xE	? 3
		  : (s[0] >> 3) == 0x1E ? 4
					: 0;
	uint32_t c;

	if (!len || (size_t)len > n)
		return 0;
	c = len == 1 ? s[0] : s[0] & (0x3Fu >> (len - 1));
	for (int i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3Fu);
	}
	if (c < min[len] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
		return 0;
	*cp = c;
	return len;
}

static size_t put(char *dst, size_t n, size_t at, const char *s, size_t k)
{
	if (at + k >= n)
		return (size_t)-1; /* does not fit: stop on a boundary */
	memcpy(dst + at, s, k);
	return at + k;
}

void mtp_text_sanitize(char *dst, size_t n, const char *src, size_t srcmax)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t i = 0, at = 0;

	if (!n)
		return;
	while (at != (size_t)-1 && i < srcmax && s[i]) {
		const unsigned char *end = memchr(s + i, 0, srcmax - i);
		size_t left = (end ? (size_t)(end - s) : srcmax) - i;
		char esc[8];
		uint32_t cp;
		int k = mtp_utf8_seq(s + i, left, &cp);
		size_t next;

		if (k == 1 && (cp < 0x20 || cp == 0x7F)) {
			snprintf(esc, sizeof(esc), "\\x%02x", (unsigned)cp);
			next = put(dst, n, at, esc, 4);
		} else if (k) {
			next = put(dst, n, at, (const char *)s + i, (size_t)k);
		} else {
			next = put(dst, n, at, "\xEF\xBF\xBD", 3);
			k = 1;
		}
		if (next == (size_t)-1)
			break;
		at = next;
		i += (size_t)k;
	}
	dst[at] = 0;
}

void mtp_xml_str(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str);

	for (size_t i = 0; i < n;) {
		uint32_t cp = 0;
		int k = mtp_utf8_seq(s + i, n - i, &cp);

		if (k == 1 && strchr("<>&\"'", (int)cp)) {
			fputs(cp == '<'	  ? "&lt;"
			      : cp == '>' ? "&gt;"
			      : cp == '&' ? "&amp;"
			      : cp == '"' ? "&quot;"
					  : "&#39;",
			      f);
		} else if (k && (cp >= 0x20 || cp == '\n' || cp == '\t') &&
			   cp != 0x7F && cp != 0xFFFE && cp != 0xFFFF) {
			fwrite(s + i, 1, (size_t)k, f);
		} else if (k == 1) {
			fprintf(f, "\\x%02x",
				(unsigned)cp); /* XML has no way */
		} else {
			fputs("\xEF\xBF\xBD", f);
		}
		i += k ? (size_t)k : 1;
	}
}
