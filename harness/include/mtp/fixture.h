/*
 * FORMAT.md version 1: golden fixtures and dumps in HDF5. Opening a file
 * validates every rule that needs no tensor data (root attributes, case ids,
 * ops, families, attributes, dataset dtypes and shapes against the op table,
 * size limits) before any tensor is allocated; loading a case then reads its
 * data and checks values (ids in range). Every error is one line naming the
 * file, the HDF5 object and the rule.
 */
#ifndef MTP_FIXTURE_H
#define MTP_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "mtp/op.h"
#include "mtp/tensor.h"

#define MTP_FORMAT_NAME "mtpcheck-fixture"
#define MTP_FORMAT_VERSION 1	 /* what mtp_fixture_write writes */
#define MTP_FORMAT_VERSION_MAX 2 /* the newest this reader knows */
#define MTP_PATH_MAX 512
#define MTP_ERR_MAX 640

struct mtp_limits {
	uint64_t max_dataset_bytes; /* one dataset */
};

/* A weight by reference (FORMAT.md v2): the dataset `name` is an empty
 * placeholder; its data is tensor `tensor` of the safetensors file `file`
 * (relative to --weights DIR), whose bytes must hash to `sha256`. */
struct mtp_weight_ref {
	char name[MTP_NAME_MAX]; /* "head_weight", "layer.1/e_proj_weight" */
	char file[256];
	char tensor[256];
	char sha256[65];
};

/* A weight by row subset (FORMAT.md v2 rules 1, 2): the input's declared
 * shape has full_rows rows; the file stores stored_rows of them. */
struct mtp_subset_decl {
	char name[MTP_NAME_MAX]; /* "head_weight", "layer.1/e_proj_weight" */
	int64_t full_rows, stored_rows;
};

/* One case of a fixture: a problem of one op, checked against the table. */
struct mtp_case {
	char file[MTP_PATH_MAX];
	char id[128];
	const struct mtp_op *op;
	enum mtp_family family;
	bool has_seed;
	uint64_t seed;
	struct mtp_attr_list attrs;
	struct mtp_params params;
	struct mtp_tensor_list inputs, expected, observed;
	bool loaded;
	int n_refs; /* weights by reference among the inputs */
	struct mtp_weight_ref *refs;
	/* live_sha256 (rule 14) per input, by name: checked at load */
	int n_live;
	struct mtp_weight_ref *live; /* name and sha256 used */
	/* weights by subset (subset.c): the <p>_rows and logits_rows
	 * companions as "inputs/head_rows", "inputs/layer.0/eh_proj_rows",
	 * "observed/step.1/logits_rows"; never inputs or outputs of the op */
	struct mtp_tensor_list companions;
	int n_subsets; /* weights with full_rows, by input name */
	struct mtp_subset_decl *subsets;
	/* an undeclared logits_dtype resolved to bfloat16 from the stored
	 * logits (SPEC.md §12.1): set by the check, and sent with the case to
	 * a worker, which gets no observed or expected tensors to resolve it */
	bool logits_bf16_stored;
};

struct mtp_fixture {
	char path[MTP_PATH_MAX];
	char generator[128];
	int format_version; /* 1 or 2 */
	int n_cases;
	struct mtp_case *cases;
	const char *weights_dir; /* --weights DIR, or NULL: refs not opened */
};

/* verify's rank files (FORMAT.md "one file per rank"): the files among
 * paths[0..*npaths) whose root says tp_size and tp_rank are checked (every
 * rank once, the same case ids, partials of one shape) and merged into one
 * temporary file (path in merged, "" when there were none), which takes the
 * first rank file's place in paths; ranks gets their paths, one a line, in
 * rank order. 1 and one line in err on a bad set. */
int mtp_fixture_tp_merge(char **paths, int *npaths, char *merged, size_t mn,
			 char *ranks, size_t rn, char *err, size_t errn);

/* Opens and validates `path`; cases hold shapes and dtypes, no data. The
 * file is first read whole in a child process (mtp_fixture_probe), because
 * HDF5 1.10 can crash or hang on a malformed file. */
enum mtp_status mtp_fixture_open(const char *path, const struct mtp_limits *lim,
				 struct mtp_fixture *fx, char *err,
				 size_t errn);
/* The same without the child (the fuzzers and the probe itself use it). */
enum mtp_status mtp_fixture_open_direct(const char *path,
					const struct mtp_limits *lim,
					struct mtp_fixture *fx, char *err,
					size_t errn);
/* Reads the whole file, every case loaded, in a child process with a memory
 * and time limit: MTP_OK if that finished cleanly, else the child's own
 * error, or a one-line error saying the library crashed or hung on it. */
enum mtp_status mtp_fixture_probe(const char *path,
				  const struct mtp_limits *lim, char *err,
				  size_t errn);
/* Reads the data of case i; values are checked (ids within the table). */
enum mtp_status mtp_fixture_load(struct mtp_fixture *fx, int i, char *err,
				 size_t errn);
/* Frees the data of case i (its metadata stays). */
void mtp_fixture_unload(struct mtp_fixture *fx, int i);
void mtp_fixture_close(struct mtp_fixture *fx);

/* Weights by reference (weights_ref.c). Checks a reference's strings: a
 * relative ref_file without "..", a tensor name, 64 hex digits. */
enum mtp_status mtp_weight_ref_check(const struct mtp_weight_ref *w, char *why,
				     size_t n);
/* Reads reference w into t (dtype and shape set, data allocated here) from
 * dir/w->file with the hash checked; MTP_ERR_UNAVAILABLE when dir is NULL. */
enum mtp_status mtp_weight_ref_load(const char *dir,
				    const struct mtp_weight_ref *w,
				    struct mtp_tensor *t, char *why, size_t n);
/* Weights by subset (subset.c): whether the case has any, the checks of
 * their shapes (what is not judged yet is MTP_ERR_UNSUPPORTED) and, once
 * loaded, of their values (rules 2 to 5); then the projection subsets are
 * laid out at their rows of a zero [full_rows, in] weight (rule 5). */
bool mtp_subset_present(const struct mtp_case *c);
enum mtp_status mtp_subset_check(const struct mtp_case *c, char *err,
				 size_t errn);
enum mtp_status mtp_subset_check_values(const struct mtp_case *c, char *err,
					size_t errn);
void mtp_subset_expand(struct mtp_case *c);
/* The subset declared on input `name`, or NULL. */
const struct mtp_subset_decl *mtp_subset_decl_of(const struct mtp_case *c,
						 const char *name);
/* Records full_rows on input `name` of the case (the reader's scan). */
enum mtp_status mtp_subset_declare(struct mtp_case *c, const char *name,
				   int64_t full_rows, int64_t stored_rows,
				   char *err, size_t errn);
/* Rows to allocate for input `name` at load: full_rows for a projection
 * subset (laid out in place by mtp_subset_expand), the stored rows for a
 * vocabulary subset (head_weight, embed_table), `rows` otherwise. */
int64_t mtp_subset_load_rows(const struct mtp_case *c, const char *name,
			     int64_t rows);
/* Whether t's bytes hash to sha256 (64 hex digits). */
bool mtp_weight_hash_ok(const struct mtp_tensor *t, const char *sha256);

/* Writes cases (with data) as a FORMAT.md v1 file, atomically: to a
 * temporary name, renamed over `path` on success. */
enum mtp_status mtp_fixture_write(const char *path, const char *generator,
				  const struct mtp_case *cases, int n,
				  char *err, size_t errn);

/* Validates a case against the op table: attributes, signature, shapes of
 * inputs; expected tensors must have the shapes the op produces. Also used
 * for cases built in process. */
enum mtp_status mtp_case_check(struct mtp_case *c, struct mtp_signature *sig,
			       struct mtp_dims *dims, enum mtp_dtype *act,
			       char *err, size_t errn);

void mtp_case_fini(struct mtp_case *c);

/* FORMAT.md version 2 rules that need no tensor data, for a case whose
 * groups were scanned (fixture_v2.c): a v1 file declares no v2 attribute;
 * a captured case keeps its block tensors out of expected/ and observed/
 * (rule 10). One line into err. */
enum mtp_status mtp_fixture_v2_check(const struct mtp_fixture *fx,
				     const struct mtp_case *c, char *err,
				     size_t errn);
/* The captured input judged as output `name` (block_in, step.<s>/block_in)
 * of a captured case, else NULL. */
const struct mtp_named *mtp_captured_judged_input(const struct mtp_case *c,
						  const char *name);

/* A case turned into a host call (signature order): inputs are views of the
 * case's data; outputs carry shapes and dtypes, data NULL. */
struct mtp_case_call {
	struct mtp_signature *sig;
	struct mtp_call call;
};

enum mtp_status mtp_case_call_init(struct mtp_case *c, struct mtp_case_call *p,
				   char *err, size_t errn);
/* Frees the arrays and any output data allocated into call.out. */
void mtp_case_call_fini(struct mtp_case_call *p);

#endif
