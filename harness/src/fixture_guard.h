/*
 * Internal to the fixture reader: checks on links and dataset storage made
 * before HDF5 follows or reads anything (fixture_guard.c), and the rules on
 * a case that need its signature or its data (fixture_rules.c). Each writes
 * the reason into why and returns false (or a status) when refused.
 */
#ifndef MTP_FIXTURE_GUARD_H
#define MTP_FIXTURE_GUARD_H

#include <hdf5.h>
#include <stdbool.h>

#include "mtp/fixture.h"

/* A link met while walking a group: hard links pass; a soft link passes
 * only if soft_ok and it names a dataset under /cases (not in observed/)
 * through hard links; external and user-defined links never pass. */
bool mtp_fxg_link_ok(hid_t grp, const char *name, const H5L_info_t *info,
		     bool soft_ok, char *why, size_t n);
/* The link `name` in loc is a hard link (groups the reader opens). */
bool mtp_fxg_hard_link(hid_t loc, const char *name, char *why, size_t n);
/* Contiguous or chunked, no external storage, only deflate, shuffle and
 * fletcher32 (a refused filter is named). */
bool mtp_fxg_storage_ok(hid_t dset, char *why, size_t n);
/* Reads a scalar attribute as an integer: false if absent; *is_int false if
 * it is there but not of an integer type. */
bool mtp_fxg_int_attr(hid_t obj, const char *name, int64_t *v, bool *is_int);

/* The case rules that need the signature (after mtp_case_check): a golden
 * holds every output of the op (every step of a chain), observed outputs are
 * stored in the dtype the op declares, tolerance overrides are sane, and the
 * case fits the memory budget (mtp_mem_budget()). */
enum mtp_status mtp_fixture_rules_scan(const struct mtp_case *c,
				       const struct mtp_signature *sig,
				       const struct mtp_dims *dims,
				       enum mtp_dtype act, char *why, size_t n);
/* The rules that need the data: an atol override at or above the largest
 * magnitude of its expected tensor makes the check vacuous. */
enum mtp_status mtp_fixture_rules_load(const struct mtp_case *c, char *why,
				       size_t n);

#endif
