/* Text-file helpers shared by the report writers and readers (textio.h). */
#include "mtp/textio.h"
#include "mtp/textsafe.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int mtp_open_regular(const char *path, char *why, size_t n)
{
	return mtp_open_input(path, UINT64_MAX, why, n);
}

int mtp_open_input(const char *path, uint64_t max_bytes, char *why, size_t n)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat sb;

	if (fd < 0) {
		snprintf(why, n, "%s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		snprintf(why, n, "not a regular file (%s)",
			 S_ISDIR(sb.st_mode)	? "a folder"
			 : S_ISFIFO(sb.st_mode) ? "a FIFO"
			 : S_ISCHR(sb.st_mode) || S_ISBLK(sb.st_mode)
				 ? "a device"
				 : "a socket or other");
		close(fd);
		return -1;
	}
	if ((uint64_t)sb.st_size > max_bytes) {
		snprintf(why, n, "%llu bytes, over the limit of %llu bytes",
			 (unsigned long long)sb.st_size,
			 (unsigned long long)max_bytes);
		close(fd);
		return -1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

/* mkdir -p of the folder part of path. */
static bool make_parents(const char *path, char *why, size_t n)
{
	char buf[PATH_MAX];

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf)) {
		snprintf(why, n, "path too long");
		return false;
	}
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
			snprintf(why, n, "cannot create the folder %s: %s", buf,
				 strerror(errno));
			return false;
		}
		*p = '/';
	}
	return true;
}

/* Follows symbolic links from path (at most 40) to the name they end at. */
static bool resolve_links(const char *path, char *out, size_t n)
{
	char cur[PATH_MAX], tgt[PATH_MAX];

	snprintf(cur, sizeof(cur), "%s", path);
	for (int i = 0; i < 40; i++) {
		ssize_t k = readlink(cur, tgt, sizeof(tgt) - 1);
		const char *slash = strrchr(cur, '/');

		if (k < 0)
			return snprintf(out, n, "%s", cur) < (int)n;
		tgt[k] = 0;
		if (tgt[0] == '/' || !slash)
			snprintf(cur, sizeof(cur), "%s", tgt);
		else
			snprintf(cur + (slash - cur) + 1,
				 sizeof(cur) - (size_t)(slash - cur) - 1, "%s",
				 tgt);
	}
	return false;
}

enum mtp_status mtp_output_prepare(const char *path, char *out, size_t outn,
				   char *err, size_t errn)
{
	char why[PATH_MAX + 64], dir[PATH_MAX];
	struct stat sb;
	char *slash;

	if (!*path || !resolve_links(path, out, outn)) {
		snprintf(err, errn, "%s: cannot write: %s", path,
			 *path ? "too many symbolic links" : "empty path");
		return MTP_ERR_IO;
	}
	if (stat(out, &sb) == 0 && !S_ISREG(sb.st_mode)) {
		snprintf(err, errn,
			 "%s: cannot write: %s exists and is not a regular "
			 "file",
			 path, out);
		return MTP_ERR_IO;
	}
	if (!make_parents(out, why, sizeof(why))) {
		snprintf(err, errn, "%s: cannot write: %s", path, why);
		return MTP_ERR_IO;
	}
	snprintf(dir, sizeof(dir), "%s", out);
	slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir] = 0;
	if (stat(slash ? dir : ".", &sb) != 0 || !S_ISDIR(sb.st_mode)) {
		snprintf(err, errn, "%s: cannot write: %s is not a folder",
			 path, dir);
		return MTP_ERR_IO;
	}
	if (access(slash ? dir : ".", W_OK) != 0) {
		snprintf(err, errn, "%s: cannot write in %s: %s", path,
			 slash ? dir : ".", strerror(errno));
		return MTP_ERR_IO;
	}
	return MTP_OK;
}

enum mtp_status mtp_atomic_open(struct mtp_atomic_file *a, const char *path,
				char *err, size_t errn)
{
	enum mtp_status st;

	a->f = NULL;
	a->path = path;
	st = mtp_output_prepare(path, a->dest, sizeof(a->dest), err, errn);
	if (st)
		return st;
	snprintf(a->tmp, sizeof(a->tmp), "%s.tmp%ld", a->dest, (long)getpid());
	a->f = fopen(a->tmp, "w");
	if (!a->f) {
		snprintf(err, errn, "%s: cannot write: %s", path,
			 strerror(errno));
		return MTP_ERR_IO;
	}
	return MTP_OK;
}

enum mtp_status mtp_atomic_close(struct mtp_atomic_file *a, char *err,
				 size_t errn)
{
	bool bad = ferror(a->f) | fclose(a->f);

	a->f = NULL;
	if (bad || rename(a->tmp, a->dest) != 0) {
		snprintf(err, errn, "%s: cannot write: %s", a->path,
			 strerror(errno));
		remove(a->tmp);
		return MTP_ERR_IO;
	}
	return MTP_OK;
}

enum mtp_status mtp_write_atomic(const char *path, mtp_text_body_fn body,
				 const void *arg, char *err, size_t errn)
{
	struct mtp_atomic_file a;
	enum mtp_status st = mtp_atomic_open(&a, path, err, errn);

	if (st)
		return st;
	body(a.f, arg);
	return mtp_atomic_close(&a, err, errn);
}

char *mtp_read_text_len(const char *path, size_t *len, char *why, size_t n)
{
	int fd = mtp_open_regular(path, why, n);
	FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
	char *s = NULL;
	long size = -1;

	*len = 0;
	if (!f) {
		if (fd >= 0) {
			snprintf(why, n, "%s", strerror(errno));
			close(fd);
		}
		return NULL;
	}
	if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 &&
	    size < (1L << 30) && fseek(f, 0, SEEK_SET) == 0 &&
	    (s = calloc(1, (size_t)size + 1)) &&
	    fread(s, 1, (size_t)size, f) != (size_t)size) {
		free(s);
		s = NULL;
	}
	if (!s)
		snprintf(why, n, "%s",
			 size >= (1L << 30) ? "larger than 1 GiB"
			 : size >= 0	    ? "read error or out of memory"
					    : "cannot seek");
	else
		*len = (size_t)size;
	fclose(f);
	return s;
}

char *mtp_read_text(const char *path)
{
	char why[128];
	size_t len;

	return mtp_read_text_len(path, &len, why, sizeof(why));
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
