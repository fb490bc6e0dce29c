/*
 * The bounded JSON cursor of the safetensors reader (st_json.h): strings
 * with \uXXXX escapes (BMP, no surrogates) to UTF-8, non-negative
 * integers, integer arrays and a depth-bounded skip of any other value.
 */
#include "st_json.h"

#include <stdio.h>
#include <string.h>

enum mtp_status stj_bad(struct cur *c, const char *obj, const char *why)
{
	snprintf(c->err, c->errn, "%s: %s: %s", c->what, obj, why);
	for (char *q = c->err; *q; q++)
		if ((unsigned char)*q < 0x20 || *q == 0x7f)
			*q = '?';
	return MTP_ERR_INVALID;
}

void stj_ws(struct cur *c)
{
	while (c->p < c->end && strchr(" \t\r\n", *c->p) && *c->p)
		c->p++;
}

bool stj_eat(struct cur *c, char ch)
{
	stj_ws(c);
	if (c->p < c->end && *c->p == ch) {
		c->p++;
		return true;
	}
	return false;
}

static int hexval(char h)
{
	if (h >= '0' && h <= '9')
		return h - '0';
	if (h >= 'a' && h <= 'f')
		return h - 'a' + 10;
	if (h >= 'A' && h <= 'F')
		return h - 'A' + 10;
	return -1;
}

/* \uXXXX (BMP, no surrogates) as UTF-8 into o; returns bytes or -1. */
static int utf8_of(struct cur *c, char *o)
{
	unsigned u = 0;

	if (c->end - c->p < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		int h = hexval(c->p[i]);

		if (h < 0)
			return -1;
		u = u * 16 + (unsigned)h;
	}
	c->p += 4;
	if (u >= 0xd800 && u < 0xe000)
		return -1;
	if (u < 0x80)
		return o[0] = (char)u, 1;
	if (u < 0x800)
		return o[0] = (char)(0xc0 | u >> 6),
		       o[1] = (char)(0x80 | (u & 63)), 2;
	o[0] = (char)(0xe0 | u >> 12);
	o[1] = (char)(0x80 | ((u >> 6) & 63));
	o[2] = (char)(0x80 | (u & 63));
	return 3;
}

/* A JSON string into buf (NUL-terminated, at most n-1 bytes, no NUL). */
bool stj_str(struct cur *c, char *buf, size_t n)
{
	size_t k = 0;

	if (!stj_eat(c, '"'))
		return false;
	while (c->p < c->end && *c->p != '"') {
		char tmp[4];
		int m = 1;

		if ((unsigned char)*c->p < 0x20)
			return false;
		tmp[0] = *c->p++;
		if (tmp[0] == '\\') {
			if (c->p >= c->end)
				return false;
			char e = *c->p++;
			const char *from = "\"\\/bfnrt",
				   *to = "\"\\/\b\f\n\r\t";
			const char *f = e ? strchr(from, e) : NULL;

			if (e == 'u')
				m = utf8_of(c, tmp);
			else if (f)
				tmp[0] = to[f - from];
			else
				return false;
			if (m < 0 || (m == 1 && tmp[0] == 0))
				return false;
		}
		if (k + (size_t)m >= n)
			return false;
		memcpy(buf + k, tmp, (size_t)m);
		k += (size_t)m;
	}
	if (c->p >= c->end)
		return false;
	c->p++;
	buf[k] = 0;
	return true;
}

/* A non-negative integer below 2^63. */
bool stj_uint(struct cur *c, uint64_t *v)
{
	stj_ws(c);
	*v = 0;
	if (c->p >= c->end || *c->p < '0' || *c->p > '9')
		return false;
	while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
		if (*v > (UINT64_C(1) << 62) / 5)
			return false;
		*v = *v * 10 + (uint64_t)(*c->p++ - '0');
	}
	return c->p >= c->end || !strchr(".eE", *c->p) || !*c->p;
}

/* An array of at most max non-negative integers. */
bool stj_uints(struct cur *c, uint64_t *v, int max, int *n)
{
	*n = 0;
	if (!stj_eat(c, '['))
		return false;
	if (stj_eat(c, ']'))
		return true;
	do {
		if (*n >= max || !stj_uint(c, &v[*n]))
			return false;
		(*n)++;
	} while (stj_eat(c, ','));
	return stj_eat(c, ']');
}

/* Skips any JSON value (the __metadata__ object), depth-bounded. */
bool stj_skip(struct cur *c, int depth)
{
	char s[1024];
	uint64_t u;

	if (depth > STJ_MAX_DEPTH)
		return false;
	stj_ws(c);
	if (c->p >= c->end)
		return false;
	if (*c->p == '"')
		return stj_str(c, s, sizeof(s));
	if (*c->p == '{' || *c->p == '[') {
		bool obj = *c->p++ == '{';

		if (stj_eat(c, obj ? '}' : ']'))
			return true;
		do {
			if (obj &&
			    (!stj_str(c, s, sizeof(s)) || !stj_eat(c, ':')))
				return false;
			if (!stj_skip(c, depth + 1))
				return false;
		} while (stj_eat(c, ','));
		return stj_eat(c, obj ? '}' : ']');
	}
	if (*c->p >= '0' && *c->p <= '9')
		return stj_uint(c, &u);
	for (int i = 0; i < 3; i++) {
		const char *lit = (const char *[]){"true", "false", "null"}[i];
		size_t l = strlen(lit);

		if ((size_t)(c->end - c->p) >= l && !memcmp(c->p, lit, l)) {
			c->p += l;
			return true;
		}
	}
	return false;
}
