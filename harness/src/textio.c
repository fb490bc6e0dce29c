/* Text-file helpers shared by the report writers and readers (textio.h). */
#include "mtp/textio.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum mtp_status mtp_write_atomic(const char *path, mtp_text_body_fn body,
				 const void *arg, char *err, size_t errn)
{
	size_t n = strlen(path) + 32;
	char *tmp = malloc(n);
	enum mtp_status st = MTP_OK;
	FILE *f;

	if (!tmp) {
		snprintf(err, errn, "%s: out of memory", path);
		return MTP_ERR_NOMEM;
	}
	snprintf(tmp, n, "%s.tmp%ld", path, (long)getpid());
	f = fopen(tmp, "w");
	if (!f) {
		snprintf(err, errn, "%s: cannot write: %s", path,
			 strerror(errno));
		st = MTP_ERR_IO;
	} else {
		body(f, arg);
		if (ferror(f) | fclose(f) || rename(tmp, path) != 0) {
			snprintf(err, errn, "%s: cannot write: %s", path,
				 strerror(errno));
			remove(tmp);
			st = MTP_ERR_IO;
		}
	}
	free(tmp);
	return st;
}

char *mtp_read_text(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *s = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    n < (1L << 30) && fseek(f, 0, SEEK_SET) == 0 &&
	    (s = calloc(1, (size_t)n + 1)) &&
	    fread(s, 1, (size_t)n, f) != (size_t)n) {
		free(s);
		s = NULL;
	}
	fclose(f);
	return s;
}

void mtp_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

void mtp_json_num(FILE *f, double v)
{
	if (isnan(v))
		fputs("\"nan\"", f);
	else if (isinf(v))
		fputs(v > 0 ? "\"inf\"" : "\"-inf\"", f);
	else
		fprintf(f, "%.17g", v);
}
