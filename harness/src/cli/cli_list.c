/*
 * `mtpcheck list ops|families|backends|mutants|diagnoses|options`: the tables a user
 * asks about, each printed from its one source (the op table, the family
 * rows, the registry, the bug-class rows with a mutant, all of them, the option table). `list cases` is a run with
 * --list, in cli.c.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "mtp/backend.h"
#include "mtp/diagnose.h"
#include "mtp/family.h"
#include "mtp/mutant.h"
#include "mtp/op.h"
#include "options.h"

bool mtp_cli_list(const char *what);
bool mtp_cli_list_known(const char *what);

static void list_ops(void)
{
	for (int i = 0; i < MTP_OP_COUNT; i++) {
		const struct mtp_op *op = mtp_op_get((enum mtp_op_id)i);

		printf("%-26s %-16s %s\n", op->name, op->section, op->summary);
	}
}

static const char *const fusion_names[] = {
	[MTP_FUSION_EH_PROJ] = "eh_proj(cat(e,h))",
	[MTP_FUSION_HC_PROJ] = "e_proj+h_proj/stream",
	[MTP_FUSION_EH_PROJ_HIDDEN_FIRST] = "eh_proj(cat(h,e))",
};
static const char *const recycled_names[] = {
	[MTP_RECYCLED_POST_NORM] = "post-norm hidden",
	[MTP_RECYCLED_STREAMS] = "mHC streams",
	[MTP_RECYCLED_PRE_NORM] = "pre-norm hidden",
};

static const char *const ckpt_names[] = {
	[MTP_CKPT_LAYERS] = "model.layers",
	[MTP_CKPT_MTP] = "mtp.{i}",
	[MTP_CKPT_MTP_FC] = "mtp.fc/layers",
};
static const char *const norm_names[] = {
	[MTP_NORM_W_PLAIN] = "w",
	[MTP_NORM_W_ZERO_CENTRED] = "1+w",
};

/* One row per family (families/), its choices, then where it was read. */
static void list_families(void)
{
	printf("%-12s %-21s %-4s %-16s %-14s %-4s %-4s %s\n", "family",
	       "fusion", "mhc", "recycled", "checkpoint", "attn", "norm",
	       "head");
	for (int i = 0; i < MTP_FAMILY_COUNT; i++) {
		const struct mtp_family_def *f = mtp_family_def(i);

		printf("%-12s %-21s %-4s %-16s %-14s %-4s %-4s %s\n", f->name,
		       fusion_names[f->fusion], f->mhc ? "yes" : "no",
		       recycled_names[f->recycled], ckpt_names[f->ckpt],
		       f->attn == MTP_ATTN_GQA ? "gqa" : "mla",
		       norm_names[f->norm_weight],
		       f->lm_head_is_shared_head ? "target lm_head" : "own");
		if (f->embed_pre_norm || f->logits_mup) /* SPEC Step V3-9 */
			printf("%-12s also:   %s%s%s\n", "",
			       f->embed_pre_norm ? "embedding normed twice "
						   "(the target's embed_norm, "
						   "then enorm)"
						 : "",
			       f->embed_pre_norm && f->logits_mup ? "; " : "",
			       f->logits_mup ? "logits / logits_mup" : "");
		printf("%-12s models: %s\n%-12s source: %s\n", "", f->models,
		       "", f->source);
	}
}

/* The registry's names: the built-in ones, then the modules, each with
 * whether this build has it and, if not, why. */
static void list_backends(void)
{
	int n = mtp_backend_builtin_count();

	for (int i = 0; i < n; i++) {
		const struct mtp_backend_iface *b = mtp_backend_builtin(i);

		printf("%-12s built in   %s\n", b->name, b->description);
	}
	for (int i = n; mtp_backend_name(i); i++) {
		const char *why =
			mtp_backend_absent_reason(mtp_backend_name(i));

		printf("%-12s %s\n", mtp_backend_name(i),
		       why ? why : "module (loaded at run time)");
	}
	printf("%-12s wraps another backend and reproduces a known bug\n",
	       "mutant:<DIAGNOSIS>[:base]");
	printf("%-12s runs a Python adapter's ops (docs/PYTHON.md)\n",
	       "python:<ADAPTER>[:MODE]");
}

static void list_mutants(void)
{
	for (int d = 1; d < MTP_DIAG_COUNT; d++)
		if (mtp_mutant_exists(d))
			printf("mutant:%-24s %s %s\n", mtp_diag_info(d)->name,
			       mtp_diag_info(d)->section,
			       mtp_diag_info(d)->history);
}

/* Every bug class row (mtp/bugclass.h): what names it, where it is tried
 * and shows, its history. */
static void list_diagnoses(void)
{
	for (int d = 1; d < MTP_DIAG_COUNT; d++) {
		const struct mtp_bug_class *b = mtp_diag_info(d);

		printf("%-32s %-12s %s%s%s\n", b->name, b->section,
		       b->applies ? "hypothesis" : "no hypothesis",
		       mtp_mutant_exists(d) ? ", mutant" : "",
		       b->flags & MTP_BUG_INFO ? ", information only" : "");
		printf("%-32s applies to: %s\n", "", b->applies_to);
		printf("%-32s shows in: %s\n", "", b->shows_in);
		printf("%-32s %s\n", "", b->history);
	}
}

static const struct {
	const char *name;
	void (*print)(void);
} lists[] = {{"ops", list_ops},
	     {"families", list_families},
	     {"backends", list_backends},
	     {"mutants", list_mutants},
	     {"options", mtp_cli_list_options},
	     {"diagnoses", list_diagnoses}};

bool mtp_cli_list_known(const char *what)
{
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
		if (strcmp(what, lists[i].name) == 0)
			return true;
	return false;
}

bool mtp_cli_list(const char *what)
{
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		if (strcmp(what, lists[i].name) == 0) {
			lists[i].print();
			return true;
		}
	}
	return false;
}
