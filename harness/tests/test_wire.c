/*
 * The worker's reports as untrusted input (wire.c): a valid report round
 * trips; a frame with a bad magic number, version, length, status, flags,
 * time, an unterminated string, or an output that is not the case's is
 * MALFORMED; a frame cut short is EOF. Frames are made by the worker's own
 * writer and then damaged at known offsets (x86-64 layout, checked below).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wire.h"

#define HDR 16		  /* magic, version, kind, length */
#define REP_ERROR 16	  /* offset of error[] in the report */
#define REP_SIZE 840	  /* the fixed part of a report */
#define OUT_SHAPE (8 + 0) /* offset of shape[] in an output header */

static struct mtp_tensor want;

/* A valid report of one float32 [2,3] output, as bytes. */
static size_t valid_report(unsigned char *buf, size_t cap)
{
	struct mtp_wire_outcome o;
	struct mtp_tensor out = want;
	float v[6] = {1, 2, 3, 4, 5, 6};
	int fds[2];
	ssize_t n;

	memset(&o, 0, sizeof(o));
	o.flags = MTP_WIRE_SUPPORTED;
	o.seconds = 0.5;
	out.data = v;
	cr_assert_eq(pipe(fds), 0);
	cr_assert(mtp_wire_send_report(fds[1], &o, &out, 1));
	close(fds[1]);
	n = read(fds[0], buf, cap);
	close(fds[0]);
	cr_assert(n > HDR + REP_SIZE);
	return (size_t)n;
}

static enum mtp_wire_end feed(const unsigned char *buf, size_t n, char *why)
{
	struct mtp_wire_outcome o;
	struct mtp_tensor got[2];
	enum mtp_wire_end e;
	int fds[2];

	memset(got, 0, sizeof(got));
	cr_assert_eq(pipe(fds), 0);
	cr_assert_eq(write(fds[1], buf, n), (ssize_t)n);
	close(fds[1]);
	e = mtp_wire_recv_report(fds[0], mtp_wire_now() + 5, &want, 1, &o, got,
				 why, 200);
	close(fds[0]);
	if (e == MTP_WIRE_OK) {
		cr_expect_eq(o.seconds, 0.5);
		cr_expect_eq(((float *)got[0].data)[5], 6.0f);
	}
	mtp_tensor_fini(&got[0]);
	return e;
}

static void setup(void)
{
	want.dtype = MTP_F32;
	want.ndim = 2;
	want.shape[0] = 2;
	want.shape[1] = 3;
}

TestSuite(wire, .init = setup);

Test(wire, a_valid_report_round_trips)
{
	unsigned char b[4096];
	char why[200] = "";
	size_t n = valid_report(b, sizeof(b));

	cr_expect_eq(feed(b, n, why), MTP_WIRE_OK, "%s", why);
	cr_expect_eq(feed(b, n - 1, why), MTP_WIRE_EOF, "cut short");
}

Test(wire, every_damage_is_malformed)
{
	static const struct {
		size_t at;
		unsigned char byte;
		const char *why;
	} damage[] = {
		{0, 0x00, "bad magic"},
		{4, 0x07, "unknown version"},
		{6, 0x01, "unexpected frame kind"},
		{8, 0xff, "frame longer"},
		{15, 0x01, "frame longer"},
		{HDR + 0, 0x63, "status out of range"},
		{HDR + 4, 0x80, "unknown flags"},
		{HDR + 15, 0xff, "time out of range"}, /* a NaN */
		{HDR + REP_SIZE + OUT_SHAPE, 0x09, "shape"},
		{HDR + REP_SIZE, 0x05, "dtype"},
	};
	unsigned char b[4096], d[4096];
	size_t n = valid_report(b, sizeof(b));

	for (size_t i = 0; i < sizeof(damage) / sizeof(damage[0]); i++) {
		char why[200] = "";

		memcpy(d, b, n);
		d[damage[i].at] = damage[i].byte;
		cr_expect_eq(feed(d, n, why), MTP_WIRE_MALFORMED, "%s",
			     damage[i].why);
		cr_expect(strstr(why, damage[i].why) != NULL, "%s: got '%s'",
			  damage[i].why, why);
	}
	memcpy(d, b, n);
	memset(d + HDR + REP_ERROR, 'A', MTP_BACKEND_ERR_MAX);
	char why[200] = "";

	cr_expect_eq(feed(d, n, why), MTP_WIRE_MALFORMED);
	cr_expect(strstr(why, "unterminated") != NULL, "%s", why);
	memset(d, 0, n); /* zeros written on the pipe by a backend */
	cr_expect_eq(feed(d, n, why), MTP_WIRE_MALFORMED);
}

#define HELLO_WHY 4 /* offset of why[] in the hello */
#define HELLO_DEVICE (HELLO_WHY + MTP_ERR_MAX)
#define HELLO_SIZE (HELLO_DEVICE + MTP_BACKEND_DEVICE_MAX)

/* A hello as the worker writes it, as bytes. */
static size_t hello_bytes(unsigned char *buf, size_t cap, enum mtp_status st,
			  const char *device)
{
	int fds[2];
	ssize_t n;

	cr_assert_eq(pipe(fds), 0);
	cr_assert(
		mtp_wire_send_hello(fds[1], st, st ? "no device" : "", device));
	close(fds[1]);
	n = read(fds[0], buf, cap);
	close(fds[0]);
	cr_assert_eq(n, HDR + HELLO_SIZE, "the hello's layout: %zd bytes", n);
	return (size_t)n;
}

static enum mtp_wire_end feed_hello(const unsigned char *buf, size_t n,
				    enum mtp_status *st, char *device,
				    size_t devn, char *why)
{
	enum mtp_wire_end e;
	int fds[2];

	cr_assert_eq(pipe(fds), 0);
	cr_assert_eq(write(fds[1], buf, n), (ssize_t)n);
	close(fds[1]);
	e = mtp_wire_recv_hello(fds[0], mtp_wire_now() + 5, st, why, 200,
				device, devn);
	close(fds[0]);
	return e;
}

Test(wire, a_hello_carries_the_device_line_cleaned)
{
	static const char hostile[] = "<b>\"&\x01\x1b[31m\xff\xc3(]]>";
	unsigned char b[4096];
	char dev[MTP_BACKEND_DEVICE_MAX], why[200] = "";
	enum mtp_status st = MTP_ERR_DEVICE;
	size_t n = hello_bytes(b, sizeof(b), MTP_OK, "GPU 0, driver 1.2");

	cr_expect_eq(feed_hello(b, n, &st, dev, sizeof(dev), why), MTP_WIRE_OK,
		     "%s", why);
	cr_expect_eq(st, MTP_OK);
	cr_expect_str_eq(dev, "GPU 0, driver 1.2");

	/* a worker that writes its own bytes: cleaned on receipt */
	memset(b + HDR + HELLO_DEVICE, 0, MTP_BACKEND_DEVICE_MAX);
	memcpy(b + HDR + HELLO_DEVICE, hostile, sizeof(hostile) - 1);
	cr_expect_eq(feed_hello(b, n, &st, dev, sizeof(dev), why), MTP_WIRE_OK,
		     "%s", why);
	cr_expect_str_eq(dev,
			 "<b>\"&\\x01\\x1b[31m\xEF\xBF\xBD\xEF\xBF\xBD(]]>",
			 "markup stays (the writers escape it), controls and "
			 "broken UTF-8 do not: %s",
			 dev);
	cr_expect_eq(feed_hello(b, n, &st, dev, 8, why), MTP_WIRE_OK);
	cr_expect_str_eq(dev, "<b>\"&", "cut on a character at the bound");

	/* no NUL in the device field: malformed, nothing kept */
	memset(b + HDR + HELLO_DEVICE, 'A', MTP_BACKEND_DEVICE_MAX);
	cr_expect_eq(feed_hello(b, n, &st, dev, sizeof(dev), why),
		     MTP_WIRE_MALFORMED);
	cr_expect(strstr(why, "unterminated") != NULL, "%s", why);
	cr_expect_str_eq(dev, "");

	/* a backend that did not open has no device line */
	n = hello_bytes(b, sizeof(b), MTP_ERR_UNAVAILABLE, "leftover");
	memcpy(b + HDR + HELLO_DEVICE, "stale", 6);
	cr_expect_eq(feed_hello(b, n, &st, dev, sizeof(dev), why), MTP_WIRE_OK);
	cr_expect_eq(st, MTP_ERR_UNAVAILABLE);
	cr_expect_str_eq(why, "no device");
	cr_expect_str_eq(dev, "");
	/* a hello of another length */
	n = hello_bytes(b, sizeof(b), MTP_OK, "x");
	b[8] = (unsigned char)(b[8] - 1);
	cr_expect_eq(feed_hello(b, n - 1, &st, dev, sizeof(dev), why),
		     MTP_WIRE_MALFORMED);
}
