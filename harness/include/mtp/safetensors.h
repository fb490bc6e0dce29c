/*
 * Reading safetensors checkpoints with strict bounds: an 8-byte little-endian
 * header length, a JSON header naming each tensor's dtype, shape and
 * [begin, end) byte offsets in the data section that follows, then the data.
 *
 * Opening reads and validates the header only (the listing API: names,
 * dtypes, shapes, offsets; the weight audit uses it on whole checkpoints);
 * data is read per tensor, on request. Everything a file says is checked
 * before it is used: the header length against the file size and
 * MTP_ST_HEADER_MAX, the JSON by a bounded parser (depth, lengths, no
 * duplicate names), known dtypes, shapes of at most MTP_ST_MAX_DIMS
 * non-negative dimensions, end - begin == product(shape) * dtype size
 * without overflow, every range inside the data section, and no two ranges
 * overlapping. Errors are one line naming the file, the tensor and the rule.
 */
#ifndef MTP_SAFETENSORS_H
#define MTP_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "mtp/status.h"

#define MTP_ST_MAX_DIMS 8
#define MTP_ST_NAME_MAX 256
#define MTP_ST_HEADER_MAX (100u << 20) /* as the reference implementation */

struct mtp_st_tensor {
	char name[MTP_ST_NAME_MAX];
	char dtype[16];	  /* "BF16", "F32", "F8_E4M3", ... as stored */
	size_t elem_size; /* bytes per element of dtype */
	int ndim;
	int64_t shape[MTP_ST_MAX_DIMS];
	uint64_t begin, end; /* byte range in the data section */
};

struct mtp_safetensors {
	char path[512];
	uint64_t data_start; /* 8 + header length */
	uint64_t data_size;  /* bytes after the header */
	int n;
	struct mtp_st_tensor *tensors; /* in header order */
};

/* Opens path and validates its header; no tensor data is read. */
enum mtp_status mtp_safetensors_open(const char *path,
				     struct mtp_safetensors *st, char *err,
				     size_t errn);
/* Validates a header given in memory (the JSON text, hlen bytes, followed by
 * data_size bytes of data); what open uses, and the fuzz target's entry. */
enum mtp_status mtp_safetensors_parse(const char *json, size_t hlen,
				      uint64_t data_size,
				      struct mtp_safetensors *st, char *err,
				      size_t errn);
const struct mtp_st_tensor *
mtp_safetensors_find(const struct mtp_safetensors *st, const char *name);
/* Reads tensor t's bytes (t->end - t->begin of them) into dst. */
enum mtp_status mtp_safetensors_read(const struct mtp_safetensors *st,
				     const struct mtp_st_tensor *t, void *dst,
				     char *err, size_t errn);
void mtp_safetensors_close(struct mtp_safetensors *st);

/* A sharded checkpoint's model.safetensors.index.json: {"metadata": any,
 * "weight_map": {tensor name: file name}}, read by the same bounded parser.
 * Checked: one weight_map object, every name non-empty and named once,
 * every file a plain "*.safetensors" name in the index's folder (no '/',
 * no leading '.'); other top-level members are skipped. */
struct mtp_st_index_entry {
	char name[MTP_ST_NAME_MAX];
	char file[MTP_ST_NAME_MAX];
};

struct mtp_st_index {
	int n;
	struct mtp_st_index_entry *v; /* in file order */
};

/* Validates an index given in memory; what, the file, names messages. */
enum mtp_status mtp_safetensors_index_parse(const char *json, size_t len,
					    const char *what,
					    struct mtp_st_index *ix, char *err,
					    size_t errn);
/* Reads path (at most MTP_ST_HEADER_MAX bytes) and parses it. */
enum mtp_status mtp_safetensors_index_open(const char *path,
					   struct mtp_st_index *ix, char *err,
					   size_t errn);
void mtp_safetensors_index_close(struct mtp_st_index *ix);

/* Bytes per element of a safetensors dtype name; 0 if unknown. */
size_t mtp_safetensors_dtype_size(const char *dtype);

#endif
