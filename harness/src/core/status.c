/* Names of status codes and verdicts, as printed and written to reports. */
#include "mtp/status.h"

const char *mtp_status_name(enum mtp_status st)
{
	switch (st) {
	case MTP_OK: return "ok";
	case MTP_ERR_INVALID: return "invalid input";
	case MTP_ERR_NOMEM: return "out of memory";
	case MTP_ERR_IO: return "I/O error";
	case MTP_ERR_DEVICE: return "device error";
	case MTP_ERR_UNSUPPORTED: return "unsupported";
	case MTP_ERR_UNAVAILABLE: return "unavailable";
	case MTP_ERR_LIMIT: return "over the size limit";
	case MTP_ERR_CORRUPT: return "memory corruption";
	}
	return "?";
}

static const char *const verdict_names[MTP_VERDICT_COUNT] = {
	"PASSED",  "FAILED",  "MISTRUSTED", "UNIMPLEMENTED",
	"SKIPPED", "CRASHED", "TIMEOUT",    "INVALID",
	"FASTER",  "SLOWER",  "SAME",	    "AMBIGUOUS",
};

const char *mtp_verdict_name(enum mtp_verdict v)
{
	return (unsigned)v < MTP_VERDICT_COUNT ? verdict_names[v] : "?";
}
