/*
 * Subsystem util: text I/O (regular files only, whole lines, bounded) and
 * the cleaning of untrusted text for the console and the reports, SHA-256,
 * where the binary finds its backend modules and bundled data, in a build
 * tree and once installed (paths.c), and the one safetensors header reader
 * (fixture weights by reference, the weight audit). Apart from core so that the
 * library a backend links (mtp_base, installed as libmtpcheck_backend.a)
 * holds nothing of the harness's own.
 *
 * May depend on: nothing
 * Its interface: mtp/textio.h, mtp/textsafe.h, mtp/sha256.h,
 *   mtp/safetensors.h, and paths.h.
 */
#ifndef MTP_SUBSYSTEM_UTIL_H
#define MTP_SUBSYSTEM_UTIL_H

#include "mtp/safetensors.h"
#include "mtp/sha256.h"
#include "mtp/textio.h"
#include "mtp/textsafe.h"
#include "paths.h"

#endif
