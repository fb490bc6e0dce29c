/*
 * Small text-file helpers every writer and reader of the harness shares:
 * atomic files (written under a temporary name, renamed when complete, so a
 * crash never leaves half a report), whole-file reads, JSON scalars.
 */
#ifndef MTP_TEXTIO_H
#define MTP_TEXTIO_H

#include <stddef.h>
#include <stdio.h>

#include "mtp/status.h"

typedef void (*mtp_text_body_fn)(FILE *f, const void *arg);

/* Writes body(f, arg) to path atomically; errors name the file. */
enum mtp_status mtp_write_atomic(const char *path, mtp_text_body_fn body,
				 const void *arg, char *err, size_t errn);

/* The whole file as a NUL-terminated string (malloc'ed), or NULL if it
 * cannot be read or is larger than 1 GiB. */
char *mtp_read_text(const char *path);

/* A JSON string (quoted, escaped) and a JSON number (NaN and Inf, which JSON
 * lacks, as the strings "nan", "inf", "-inf"). */
void mtp_json_str(FILE *f, const char *s);
void mtp_json_num(FILE *f, double v);

#endif
