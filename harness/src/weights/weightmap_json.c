/*
 * The keys of a safetensors `model.safetensors.index.json` ("weight_map":
 * tensor name -> shard file), read with cJSON. (Built when libcjson is
 * found; weightmap_json_none.c stands in otherwise.)
 */
#include "mtp/weightmap.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Index files of large checkpoints are a few MB; 256 MB is not an index. */
#define INDEX_MAX_BYTES (256L << 20)

static char *slurp(const char *path, char *err, size_t errn)
{
	FILE *f = fopen(path, "rb");
	char *s = NULL;
	long n = -1;

	if (!f) {
		snprintf(err, errn, "%s: cannot read: %s", path,
			 strerror(errno));
		return NULL;
	}
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    n < INDEX_MAX_BYTES && fseek(f, 0, SEEK_SET) == 0 &&
	    (s = calloc(1, (size_t)n + 1)) &&
	    fread(s, 1, (size_t)n, f) != (size_t)n) {
		free(s);
		s = NULL;
	}
	fclose(f);
	if (!s)
		snprintf(err, errn, "%s: cannot read%s", path,
			 n >= INDEX_MAX_BYTES ? ": larger than 256 MB" : "");
	return s;
}

enum mtp_status mtp_wm_read_index_json(const char *path,
				       struct mtp_wm_names *out, char *err,
				       size_t errn)
{
	char *text = slurp(path, err, errn);
	cJSON *root = text ? cJSON_Parse(text) : NULL;
	const cJSON *map =
		root ? cJSON_GetObjectItem(root, "weight_map") : NULL;
	enum mtp_status st = MTP_OK;

	if (!text)
		return MTP_ERR_IO; /* err says why */
	free(text);
	if (!root || !cJSON_IsObject(map)) {
		snprintf(err, errn, "%s: %s", path,
			 !root ? "not valid JSON"
			       : "no \"weight_map\" object (not a safetensors "
				 "index?)");
		cJSON_Delete(root);
		return MTP_ERR_INVALID;
	}
	for (const cJSON *e = map->child; e && st == MTP_OK; e = e->next)
		st = mtp_wm_names_add(out, e->string);
	if (st)
		snprintf(err, errn, "%s: out of memory", path);
	cJSON_Delete(root);
	return st;
}
