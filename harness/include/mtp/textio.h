/*
 * Small text-file helpers every writer and reader of the harness shares:
 * atomic files (written under a temporary name, renamed when complete, so a
 * crash never leaves half a report), whole-file reads, JSON scalars.
 */
#ifndef MTP_TEXTIO_H
#define MTP_TEXTIO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mtp/status.h"

typedef void (*mtp_text_body_fn)(FILE *f, const void *arg);

/* Opens an input for reading only if it is a regular file: checked with
 * fstat after an open with O_NONBLOCK, so a FIFO, a device or a folder is
 * refused at once and never waited on. Returns the descriptor (blocking
 * again), or -1 with the reason in why. */
int mtp_open_regular(const char *path, char *why, size_t n);
/* The same, and refused as well when the file is larger than max_bytes
 * (a sparse or runaway input is never read into memory): the one open of
 * every input file with a size cap (fixtures, weight lists, safetensors). */
int mtp_open_input(const char *path, uint64_t max_bytes, char *why, size_t n);

/* Where a report named `path` goes: through symbolic links to their target
 * (a link is never replaced by a file), its folder created as by mkdir -p
 * and checked writable, an existing target that is not a regular file
 * refused. The resolved path is written to out; errors name the file. */
enum mtp_status mtp_output_prepare(const char *path, char *out, size_t outn,
				   char *err, size_t errn);

/* A report written in pieces (a bench's rows as they come) and renamed to
 * its name only when closed: open prepares the path (mtp_output_prepare)
 * and opens f on dest.tmpPID; close flushes, renames and, on any error,
 * removes the temporary file. Errors name path. */
struct mtp_atomic_file {
	FILE *f;
	const char *path;
	char dest[4096], tmp[4096 + 32];
};
enum mtp_status mtp_atomic_open(struct mtp_atomic_file *a, const char *path,
				char *err, size_t errn);
enum mtp_status mtp_atomic_close(struct mtp_atomic_file *a, char *err,
				 size_t errn);

/* Writes body(f, arg) to path atomically (mtp_atomic_open, body,
 * mtp_atomic_close); errors name the file. */
enum mtp_status mtp_write_atomic(const char *path, mtp_text_body_fn body,
				 const void *arg, char *err, size_t errn);

/* The whole file as a NUL-terminated string (malloc'ed), or NULL if it
 * is not a regular file, cannot be read or is larger than 1 GiB. */
char *mtp_read_text(const char *path);
/* The same with its length in *len (the file may hold NUL bytes) and, for
 * NULL, the reason in why ("not a regular file (a folder)", ...). */
char *mtp_read_text_len(const char *path, size_t *len, char *why, size_t n);

/* A JSON string (quoted, escaped) and a JSON number (NaN and Inf, which JSON
 * lacks, as the strings "nan", "inf", "-inf"). */
void mtp_json_str(FILE *f, const char *s);
void mtp_json_num(FILE *f, double v);

#endif
