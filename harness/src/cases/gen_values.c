/*
 * The values of generated problems (generate.h): a portable PRNG and one
 * value rule per tensor name, after tools/gen/values.py, so that every term
 * of an op's math matters: activations ~N(0,1) with a per-channel spread
 * (embeddings x0.05, residuals x2), norm weights uniform in [-0.1, 1.8],
 * linear weights and mHC fn ~N(0, 1/sqrt(fan_in)), mHC scale ~0.5 + 0.05
 * N(0,1), base ~N(0,1), post_mix uniform in [0.1, 1.9], comb_mix
 * Sinkhorn-normalised, positions in [1, 8192) with about one in six set to 0,
 * ids in [0, V). Every value is rounded to its tensor's dtype by mtp_store.
 *
 * Portability: xoshiro256** streams seeded by splitmix64, one stream per
 * tensor (from the seed and the tensor's name, so a tensor's values do not
 * depend on the others); normals are Irwin-Hall sums of four 32-bit uniforms
 * scaled to unit variance (an exact integer sum, one rounding). Only +, -,
 * *, / and sqrt are used: no libm function whose last bit may differ between
 * machines, so the same seed gives the same bits everywhere.
 */
#include "mtp/generate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SINKHORN_ITERS 20

/* ---- the PRNG --------------------------------------------------------- */

struct rng {
	uint64_t s[4];
};

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* xoshiro256** 1.0 (Blackman and Vigna). */
static uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return res;
}

/* The stream of one tensor: FNV-1a of its name mixed with the seed. */
static void rng_init(struct rng *r, uint64_t seed, const char *name)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (const char *p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
	seed ^= h;
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

/* Uniform in [0, 1), 53 bits. */
static double rng_uniform(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1p-53;
}

/* ~N(0,1): Irwin-Hall of four 32-bit uniforms, variance scaled to 1. */
static double rng_normal(struct rng *r)
{
	uint64_t a = rng_next(r), b = rng_next(r);
	uint64_t sum =
		(a >> 32) + (a & 0xffffffffu) + (b >> 32) + (b & 0xffffffffu);

	return ((double)sum - 2.0 * 4294967295.0) *
	       (1.7320508075688772 / 4294967296.0);
}

/* Uniform integer in [0, n). */
static int64_t rng_below(struct rng *r, int64_t n)
{
	uint64_t x = rng_next(r);

	if ((uint64_t)n <= 0xffffffffu)
		return (int64_t)(((x >> 32) * (uint64_t)n) >> 32);
	return (int64_t)(x % (uint64_t)n);
}

/* ---- value rules ------------------------------------------------------ */

enum vrule {
	VR_HIDDEN,    /* N(0,1) x per-channel spread x scale */
	VR_NORM_W,    /* uniform [-0.1, 1.8] */
	VR_LINEAR,    /* N(0,1) / sqrt(last dim) (linear weights, mHC fn) */
	VR_HC_SCALE,  /* 0.5 + 0.05 N(0,1) */
	VR_HC_BASE,   /* N(0,1) */
	VR_POST_MIX,  /* uniform [0.1, 1.9], like 2 sigmoid(.) */
	VR_COMB_MIX,  /* Sinkhorn-normalised positive M x M per token */
	VR_POSITIONS, /* [1, 8192), about one in six set to 0 */
	VR_IDS,	      /* [0, V) */
};

struct name_rule {
	const char *name;
	enum vrule rule;
	double scale;
};

static const struct name_rule name_rules[] = {
	{"positions", VR_POSITIONS, 0}, {"input_ids", VR_IDS, 0},
	{"next_tokens", VR_IDS, 0},	{"post_mix", VR_POST_MIX, 0},
	{"comb_mix", VR_COMB_MIX, 0},	{"res_mix", VR_COMB_MIX, 0},
	{"embeds", VR_HIDDEN, 0.05},	{"embed_table", VR_HIDDEN, 0.05},
	{"residual", VR_HIDDEN, 2.0},	{"parts", VR_HIDDEN, 1.0},
	{"prev_ids", VR_IDS, 0},	{"pre_mix", VR_POST_MIX, 0},
	{"pre_mix_in", VR_POST_MIX, 0},
};

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* The rule of a tensor, by its name (without a "layer.N/" prefix) and class. */
static enum vrule rule_of(const struct mtp_tspec *s, int ndim, double *scale)
{
	const char *slash = strrchr(s->name, '/');
	const char *base = slash ? slash + 1 : s->name;

	*scale = 1.0;
	for (size_t i = 0; i < sizeof(name_rules) / sizeof(name_rules[0]);
	     i++) {
		if (strcmp(base, name_rules[i].name) == 0) {
			*scale = name_rules[i].scale;
			return name_rules[i].rule;
		}
	}
	if (s->cls == MTP_TC_PARAM) {
		if (ends_with(base, "scale"))
			return VR_HC_SCALE;
		if (ends_with(base, "base"))
			return VR_HC_BASE;
		return VR_LINEAR; /* fn, hc_*_fn */
	}
	if (ndim == 1)
		return VR_NORM_W;
	if (ndim == 2 && (strstr(base, "weight") || strstr(base, "W_")))
		return VR_LINEAR;
	return VR_HIDDEN;
}

static enum mtp_status fill_hidden(struct rng *r, struct mtp_tensor *t,
				   double scale)
{
	int64_t n = mtp_tensor_numel(t);
	int64_t c = t->ndim ? t->shape[t->ndim - 1] : 1;
	double *spread;

	if (n == 0)
		return MTP_OK;
	spread = malloc((size_t)c * sizeof(*spread));
	if (!spread)
		return MTP_ERR_NOMEM;
	for (int64_t j = 0; j < c; j++) {
		double u = rng_uniform(r);

		spread[j] = (0.1 + 2.4 * u * u) * scale; /* in [0.1, 2.5] */
	}
	for (int64_t i = 0; i < n; i++)
		mtp_store(t->dtype, t->data, (size_t)i,
			  rng_normal(r) * spread[i % c]);
	free(spread);
	return MTP_OK;
}

/* Per token, an M x M matrix of positive entries brought close to doubly
 * stochastic by Sinkhorn normalisation, like hc_pre's comb_mix. */
static enum mtp_status fill_comb(struct rng *r, struct mtp_tensor *t)
{
	int64_t m = t->shape[t->ndim - 1], n = mtp_tensor_numel(t);
	double *a = malloc((size_t)(m * m) * sizeof(*a));

	if (!a)
		return MTP_ERR_NOMEM;
	for (int64_t b = 0; b < n; b += m * m) {
		for (int64_t i = 0; i < m * m; i++)
			a[i] = 0.05 + rng_uniform(r);
		for (int it = 0; it < SINKHORN_ITERS; it++) {
			for (int64_t i = 0; i < m; i++) {
				double s = 0, c = 0;

				for (int64_t j = 0; j < m; j++)
					s += a[i * m + j];
				for (int64_t j = 0; j < m; j++)
					a[i * m + j] /= s;
				for (int64_t j = 0; j < m; j++)
					c += a[j * m + i];
				for (int64_t j = 0; j < m; j++)
					a[j * m + i] /= c;
			}
		}
		for (int64_t i = 0; i < m * m; i++)
			mtp_store(t->dtype, t->data, (size_t)(b + i), a[i]);
	}
	free(a);
	return MTP_OK;
}

static void fill_positions(struct rng *r, struct mtp_tensor *t)
{
	int64_t n = mtp_tensor_numel(t);
	int64_t zeros = n / 6 + (n >= 3 ? 1 : 0);
	int64_t *p = t->data;

	for (int64_t i = 0; i < n; i++)
		p[i] = 1 + rng_below(r, 8191);
	for (int64_t z = 0; z < zeros; z++) {
		int64_t i = rng_below(r, n);

		while (p[i] == 0) /* probe to the next nonzero one */
			i = (i + 1) % n;
		p[i] = 0;
	}
}

enum mtp_status mtp_gen_fill(const struct mtp_tspec *s,
			     const struct mtp_dims *d, uint64_t seed,
			     struct mtp_tensor *t)
{
	int64_t n = mtp_tensor_numel(t),
		last = t->ndim ? t->shape[t->ndim - 1] : 1;
	double scale, lo, width;
	enum vrule rule = rule_of(s, t->ndim, &scale);
	struct rng r;

	rng_init(&r, seed, s->name);
	switch (rule) {
	case VR_HIDDEN: return fill_hidden(&r, t, scale);
	case VR_COMB_MIX: return n ? fill_comb(&r, t) : MTP_OK;
	case VR_POSITIONS: fill_positions(&r, t); return MTP_OK;
	case VR_IDS:
		for (int64_t i = 0; i < n; i++)
			((int64_t *)t->data)[i] = rng_below(&r, d->v);
		return MTP_OK;
	case VR_LINEAR:
		scale = 1.0 / sqrt((double)(last > 0 ? last : 1));
		break;
	case VR_HC_SCALE: scale = 0.05; break;
	default: break;
	}
	lo = rule == VR_NORM_W ? -0.1 : 0.1;
	width = rule == VR_NORM_W ? 1.9 : 1.8;
	for (int64_t i = 0; i < n; i++) {
		double v;

		if (rule == VR_NORM_W || rule == VR_POST_MIX)
			v = lo + width * rng_uniform(&r);
		else
			v = (rule == VR_HC_SCALE ? 0.5 : 0.0) +
			    scale * rng_normal(&r);
		mtp_store(t->dtype, t->data, (size_t)i, v);
	}
	return MTP_OK;
}
