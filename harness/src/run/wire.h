/*
 * Internal to the runner: the frames a worker process and the harness
 * exchange (worker.c). The harness sends a case (trusted: it wrote it); the
 * worker answers with a hello after opening its backend and a report per
 * case, which the harness treats as untrusted input: every frame is
 * length-prefixed, tagged with a magic number and a version, and every field
 * is checked against what the case can produce before anything is kept.
 */
#ifndef MTP_WIRE_H
#define MTP_WIRE_H

#include <stdbool.h>
#include <stdint.h>

#include "mtp/backend.h"
#include "mtp/fixture.h"

#define MTP_WIRE_MAGIC 0x4d545057u /* "MTPW" */
#define MTP_WIRE_VERSION 2	   /* 2: the hello carries the device line */
#define MTP_RULE_MSG_MAX 300

enum mtp_wire_kind {
	MTP_WIRE_HELLO = 1,
	MTP_WIRE_REQUEST,
	MTP_WIRE_REPORT,
};

/* How a read ended when it did not get its bytes. */
enum mtp_wire_end {
	MTP_WIRE_OK,
	MTP_WIRE_EOF,	    /* the peer closed (or died) */
	MTP_WIRE_LATE,	    /* the deadline passed */
	MTP_WIRE_MALFORMED, /* a frame broke a rule; why says which */
};

/* What a worker reports about one case (flags of struct wire_report). */
#define MTP_WIRE_SUPPORTED 1u
#define MTP_WIRE_RULE_CHECKED 2u
#define MTP_WIRE_RULE_OK 4u

struct mtp_wire_outcome {
	enum mtp_status st;
	unsigned flags;
	double seconds;
	char error[MTP_BACKEND_ERR_MAX]; /* sanitised */
	char rule_msg[MTP_RULE_MSG_MAX]; /* sanitised */
};

/* Monotonic seconds; deadlines are in these units (< 0: none). */
double mtp_wire_now(void);
/* Reads and writes of the harness also end when this process (a pidfd, or
 * -1: none) ends, even if a child of it holds the pipe open. */
void mtp_wire_watch(int pidfd);
bool mtp_wire_write(int fd, const void *buf, size_t n, double deadline);
enum mtp_wire_end mtp_wire_read(int fd, void *buf, size_t n, double deadline);

/* The worker's side. The hello says how the open went (st, why) and, once
 * open, the backend's device line (mtp_backend_device_info), cleaned. */
bool mtp_wire_send_hello(int fd, enum mtp_status st, const char *why,
			 const char *device);
/* Reads a request into c (inputs rebuilt, expected and observed empty). */
bool mtp_wire_recv_case(int fd, struct mtp_case *c);
bool mtp_wire_send_report(int fd, const struct mtp_wire_outcome *o,
			  const struct mtp_tensor *out, int n_out);

/* The harness's side. */
bool mtp_wire_send_case(int fd, const struct mtp_case *c, double deadline);
/* Reads a hello: the open status in *st with why, and the device line
 * (untrusted: bounded, repaired UTF-8, no control characters) in device,
 * "" when the backend did not open. */
enum mtp_wire_end mtp_wire_recv_hello(int fd, double deadline,
				      enum mtp_status *st, char *why,
				      size_t whyn, char *device, size_t devn);
/* Reads a report for a call whose outputs are `want` (shapes and dtypes):
 * on MTP_WIRE_OK, o is filled and, if the backend ran the case, got[i] holds
 * output i (allocated here). */
enum mtp_wire_end mtp_wire_recv_report(int fd, double deadline,
				       const struct mtp_tensor *want,
				       int n_want, struct mtp_wire_outcome *o,
				       struct mtp_tensor *got, char *why,
				       size_t whyn);

#endif
