/*
 * Text that came from outside the harness (a backend's error message or
 * device name, a worker's report) made safe for every report: bounded, valid
 * UTF-8, no control characters; and the one XML/HTML escaper the writers
 * share, which also repairs what it is given.
 */
#ifndef MTP_TEXTSAFE_H
#define MTP_TEXTSAFE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Length (1 to 4) of the well-formed UTF-8 sequence at s, which has n bytes,
 * with its code point in *cp; 0 if it is not one (overlong, surrogate, above
 * U+10FFFF, cut short). */
int mtp_utf8_seq(const unsigned char *s, size_t n, uint32_t *cp);

/* Copies src, reading at most srcmax bytes and stopping at a NUL, into dst
 * (n > 0 bytes, always NUL-terminated, cut on a character): invalid UTF-8
 * becomes U+FFFD, control characters (tab and newline included) \xNN. */
void mtp_text_sanitize(char *dst, size_t n, const char *src, size_t srcmax);

/* Writes s as XML/HTML character data or attribute text: markup escaped,
 * invalid UTF-8 and characters XML 1.0 forbids as U+FFFD. */
void mtp_xml_str(FILE *f, const char *s);

#endif
