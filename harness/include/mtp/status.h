/*
 * Status codes of actions, and the verdicts and exit codes that users, CI
 * systems and `git bisect run` depend on (ARCHITECTURE.md "Verdicts and exit codes").
 */
#ifndef MTP_STATUS_H
#define MTP_STATUS_H

#ifdef __cplusplus /* a backend written in C++ links these as C */
extern "C" {
#endif

enum mtp_status {
	MTP_OK = 0,
	MTP_ERR_INVALID,     /* bad input: file, case, shape, value */
	MTP_ERR_NOMEM,	     /* an allocation failed */
	MTP_ERR_IO,	     /* a file could not be read or written */
	MTP_ERR_DEVICE,	     /* a vendor call failed */
	MTP_ERR_UNSUPPORTED, /* the backend does not implement this */
	MTP_ERR_UNAVAILABLE, /* no driver, no device */
	MTP_ERR_LIMIT,	     /* a size is over the limit the run allows */
	MTP_ERR_CORRUPT,     /* a backend wrote outside its buffers */
};

const char *mtp_status_name(enum mtp_status st);

enum mtp_verdict {
	MTP_PASSED,
	MTP_FAILED,
	MTP_MISTRUSTED,
	MTP_UNIMPLEMENTED,
	MTP_SKIPPED,
	MTP_CRASHED,
	MTP_TIMEOUT,
	MTP_INVALID,
	MTP_FASTER,
	MTP_SLOWER,
	MTP_SAME,
	MTP_AMBIGUOUS,
	MTP_VERDICT_COUNT
};

const char *mtp_verdict_name(enum mtp_verdict v);

/* Exit codes of mtpcheck. Never a count. */
enum mtp_exit {
	MTP_EXIT_OK = 0,
	MTP_EXIT_FAIL = 1,
	MTP_EXIT_USAGE = 2,
	MTP_EXIT_UNTESTED = 125,
};

#ifdef __cplusplus
}
#endif

#endif
