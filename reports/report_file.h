/* Internal to the report writers: atomic report files (report_file.c). */
#ifndef MTP_REPORT_FILE_H
#define MTP_REPORT_FILE_H

#include <stdio.h>

#include "mtp/runner.h"

typedef void (*mtp_report_body_fn)(FILE *f, const struct mtp_run *run);

/* Writes body(f, run) to path atomically; errors name the file. */
enum mtp_status mtp_report_write(const struct mtp_run *run, const char *path,
				 mtp_report_body_fn body, char *err,
				 size_t errn);

#endif
