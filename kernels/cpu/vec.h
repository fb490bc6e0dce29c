/*
 * The AVX2 building blocks of the bfloat16 row kernels, and the one place
 * of this backend that knows which instruction sets exist. The kernels
 * that use them are compiled for AVX2+FMA only (MTP_CPU_AVX2) and called
 * only when mtp_cpu_vec(act) says this CPU has them, so the binary still
 * runs on CPUs without AVX2 (the portable loops of rows.c take over).
 *
 * Why intrinsics and not target_clones over plain loops: the vectorizer
 * neither packs two rounded vectors into one 16-lane bf16 store nor emits
 * non-temporal stores, and those two are most of the bandwidth.
 */
#ifndef MTP_CPU_VEC_H
#define MTP_CPU_VEC_H

#include "cpu_internal.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define MTP_CPU_VEC 1
#include <immintrin.h>

#define MTP_CPU_AVX2 __attribute__((target("avx2,fma")))

/* 8 bf16 -> 8 fp32 (exact: a shift). */
MTP_CPU_AVX2 static inline __m256 mtp_vec_ld(const uint16_t *p)
{
	const __m128i h = _mm_loadu_si128((const __m128i *)p);

	return _mm256_castsi256_ps(
		_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

/* The bf16 bits of 8 fp32 in the low half of each lane: round to nearest
 * even, a NaN kept quiet with its sign (mtp_cpu_f32_to_bf16, 8 at once). */
MTP_CPU_AVX2 static inline __m256i mtp_vec_rne(__m256 f)
{
	const __m256i u = _mm256_castps_si256(f);
	const __m256i hi = _mm256_srli_epi32(u, 16);
	const __m256i lsb = _mm256_and_si256(hi, _mm256_set1_epi32(1));
	const __m256i bias = _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff));
	const __m256i rne = _mm256_srli_epi32(_mm256_add_epi32(u, bias), 16);
	const __m256i nan = _mm256_or_si256(hi, _mm256_set1_epi32(0x40));
	const __m256i mag = _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff));
	const __m256i is_nan =
		_mm256_cmpgt_epi32(mag, _mm256_set1_epi32(0x7f800000));

	return _mm256_blendv_epi8(rne, nan, is_nan);
}

/* f rounded to bf16, back in fp32 (the eager RMSNorm's first rounding). */
MTP_CPU_AVX2 static inline __m256 mtp_vec_round(__m256 f)
{
	return _mm256_castsi256_ps(_mm256_slli_epi32(mtp_vec_rne(f), 16));
}

/* Stores 16 bf16: a then b, each rounded once. nt: a streaming store,
 * which skips the read-for-ownership of the line; p must then be 32-byte
 * aligned and the thread must _mm_sfence() before others read. */
MTP_CPU_AVX2 static inline void mtp_vec_st(uint16_t *p, __m256 a, __m256 b,
					   bool nt)
{
	const __m256i ab = _mm256_packus_epi32(mtp_vec_rne(a), mtp_vec_rne(b));
	const __m256i v = _mm256_permute4x64_epi64(ab, 0xd8);

	if (nt)
		_mm256_stream_si256((__m256i *)p, v);
	else
		_mm256_storeu_si256((__m256i *)p, v);
}

MTP_CPU_AVX2 static inline float mtp_vec_hsum(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v),
			      _mm256_extractf128_ps(v, 1));

	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

/* Whether a streaming store may start at p (then every 32 bytes on). */
static inline bool mtp_vec_nt_ok(const void *p, bool nt)
{
	return nt && ((uintptr_t)p & 31) == 0;
}

/*
 * The same at 16 lanes for CPUs with AVX-512 (F+BW), where the bf16 norms
 * are bound by vector instructions, not by DRAM, at 8 lanes: measured on
 * the Zen 5 VM, the AVX2 rmsnorm row ran at 45 GB/s on cached data.
 */
#define MTP_CPU_AVX512 __attribute__((target("avx512f,avx512bw,fma")))

MTP_CPU_AVX512 static inline __m512 mtp_v16_ld(const uint16_t *p)
{
	const __m256i h = _mm256_loadu_si256((const __m256i *)p);

	return _mm512_castsi512_ps(
		_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

MTP_CPU_AVX512 static inline __m512i mtp_v16_rne(__m512 f)
{
	const __m512i u = _mm512_castps_si512(f);
	const __m512i hi = _mm512_srli_epi32(u, 16);
	const __m512i lsb = _mm512_and_si512(hi, _mm512_set1_epi32(1));
	const __m512i bias = _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff));
	const __m512i rne = _mm512_srli_epi32(_mm512_add_epi32(u, bias), 16);
	const __mmask16 nan = _mm512_cmp_ps_mask(f, f, _CMP_UNORD_Q);

	return _mm512_mask_or_epi32(rne, nan, hi, _mm512_set1_epi32(0x40));
}

MTP_CPU_AVX512 static inline __m512 mtp_v16_round(__m512 f)
{
	return _mm512_castsi512_ps(_mm512_slli_epi32(mtp_v16_rne(f), 16));
}

/* 16 bf16, rounded once; nt as mtp_vec_st. */
MTP_CPU_AVX512 static inline void mtp_v16_st(uint16_t *p, __m512 a, bool nt)
{
	const __m256i v = _mm512_cvtepi32_epi16(mtp_v16_rne(a));

	if (nt)
		_mm256_stream_si256((__m256i *)p, v);
	else
		_mm256_storeu_si256((__m256i *)p, v);
}

#else
#define MTP_CPU_VEC 0
#endif

/* Whether the AVX2 kernels cover act on this CPU: bf16 (what the engines
 * store and the benchmark times) with AVX2 and FMA, unless the
 * environment sets MTP_CPU_NO_AVX2 (to test the portable loops). */
bool mtp_cpu_vec(enum mtp_dtype act);
/* And whether the 16-lane AVX-512 kernels may run (implies mtp_cpu_vec). */
bool mtp_cpu_vec512(enum mtp_dtype act);

/* Makes this thread's streaming stores visible before a barrier. */
void mtp_cpu_fence(void);

#endif
