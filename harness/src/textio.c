/* Text-file helpers shared by the report writers and readers (textio.h). */
#include "mtp/textio.h"
#include "mtp/textsafe.h"

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

void mtp_json_str(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str);

	fputc('"', f);
	for (size_t i = 0; i < n;) {
		uint32_t cp = 0;
		int k = mtp_utf8_seq(s + i, n - i, &cp);

		if (k == 1 && (cp == '"' || cp == '\\'))
			fprintf(f, "\\%c", (int)cp);
		else if (k == 1 && (cp < 0x20 || cp == 0x7F))
			fprintf(f, "\\u%04x", (unsigned)cp);
		else if (k)
			fwrite(s + i, 1, (size_t)k, f);
		else
			fputs("\\ufffd",
			      f); /* not UTF-8: the JSON stays valid */
		i += k ? (size_t)k : 1;
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
