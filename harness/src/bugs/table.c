/*
 * The table of bug classes, built from the one list (mtp/bug_list.h), so a
 * row is added by its file and one line there.
 */
#include "bugs.h"

static const struct mtp_bug_class none = {.name = "NONE",
					  .section = "",
					  .history = "",
					  .applies_to = "",
					  .shows_in = "",
					  .flags = MTP_BUG_NUMERIC};

static const struct mtp_bug_class *const rows[MTP_DIAG_COUNT] = {
	[MTP_DIAG_NONE] = &none,
#define MTP_BUG(id, row) [MTP_DIAG_##id] = &mtp_bug_##row,
#include "mtp/bug_list.h"
#undef MTP_BUG
};

const struct mtp_bug_class *mtp_bug_get(enum mtp_diag d)
{
	return (unsigned)d < MTP_DIAG_COUNT ? rows[d] : &none;
}
