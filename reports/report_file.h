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

/* The run's backends and their device lines: run->devices (those its
 * workers sent, or the merged files recorded), else the backends it was
 * given, whose devices[i] is then NULL (the writer describes it,
 * mtp_meta_device); an empty line is NULL too. *names and *devices are
 * malloc'ed (free both); the count, or -1 when out of memory. */
int mtp_report_backends(const struct mtp_run *run, const char ***names,
			const char ***devices);

#endif
