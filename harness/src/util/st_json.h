/*
 * Internal to the safetensors reader (safetensors.c, safetensors_index.c):
 * the bounded JSON cursor both parse with (safetensors_json.c). Every read
 * is checked against the end of the buffer; nesting is bounded by
 * STJ_MAX_DEPTH; errors are one line naming the file and the object.
 */
#ifndef MTP_ST_JSON_H
#define MTP_ST_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mtp/status.h"

#define STJ_MAX_DEPTH 16
#define STJ_MAX_TENSORS (1 << 20) /* tensors in a header, names in an index */

struct cur {
	const char *p, *end;
	const char *what; /* the file, for messages */
	char *err;
	size_t errn;
};

/* Writes "what: obj: why" (controls replaced) and returns MTP_ERR_INVALID. */
enum mtp_status stj_bad(struct cur *c, const char *obj, const char *why);
/* Skips white space. */
void stj_ws(struct cur *c);
/* Consumes ch after white space; false if it is not next. */
bool stj_eat(struct cur *c, char ch);
/* A JSON string into buf (NUL-terminated, at most n-1 bytes, no NUL). */
bool stj_str(struct cur *c, char *buf, size_t n);
/* A non-negative integer below 2^63. */
bool stj_uint(struct cur *c, uint64_t *v);
/* An array of at most max non-negative integers. */
bool stj_uints(struct cur *c, uint64_t *v, int max, int *n);
/* Skips any JSON value, depth-bounded. */
bool stj_skip(struct cur *c, int depth);

#endif
