#!/usr/bin/env bash
# Fuzzing (docs/CI.md, "Fuzzing"): builds the libFuzzer targets of tests/fuzz
# with clang-14 in build-fuzz and runs each from its seed corpus for a bounded
# time. Exits 1 on a crash, leak, timeout or sanitizer report in our code; a
# crash inside the HDF5 library itself on a malformed file (a bug of HDF5
# 1.10 that the reader cannot prevent, listed in docs/CI.md) is kept and
# counted, not fatal. One summary line per target.
#   tools/ci/fuzz.sh [SECONDS_PER_TARGET]      (default 60; nightly job)
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-60}
out=$PWD/build-fuzz/fuzz # absolute: fuzz_cli changes its folder
jobs=${MTP_FUZZ_JOBS:-2}

CC=clang-14 cmake -S . -B build-fuzz -DMTP_FUZZ=ON -DMTP_BUILD_TESTS=OFF \
	-DMTP_WITH_CUDA=OFF -DMTP_WITH_CPU=OFF >/dev/null
if ! cmake --build build-fuzz -j"$jobs" --target fuzz_fixture fuzz_casefile fuzz_cli fuzz_safetensors fuzz_stindex fuzz_results fuzz_seeds \
	>/tmp/mtp-fuzz-build.log 2>&1; then
	tail -30 /tmp/mtp-fuzz-build.log; echo "fuzz build failed"; exit 1
fi
bin=$PWD/build-fuzz/tests/fuzz

# seeds: tiny valid fixtures written now; one case-file line per file;
# command lines with a case file for the CLI (tests/fuzz/cli_seeds)
rm -rf "$out/seeds" "$out/artifacts" "$out/tmp"
mkdir -p "$out/seeds/fixture" "$out/seeds/casefile" "$out/seeds/cli" "$out/seeds/safetensors" \
	"$out/seeds/stindex" "$out/seeds/results" "$out/tmp"
cp tests/fuzz/cli_seeds/* "$out/seeds/cli/"
cp tests/fuzz/results_seeds/* "$out/seeds/results/" # results, bench, a bench collection with records, merged report, a column named in invalid UTF-8 (a crash CI found)
printf '{"a.weight":{"dtype":"BF16","shape":[2,3],"data_offsets":[0,12]},"__metadata__":{"format":"pt"}}' \
	>"$out/seeds/safetensors/one"
printf '{"x":{"dtype":"F32","shape":[],"data_offsets":[4,8]},"y\\u00e9":{"dtype":"F8_E4M3","shape":[0],"data_offsets":[8,8]}}  ' \
	>"$out/seeds/safetensors/two"
printf '{"metadata":{"total_size":12},"weight_map":{"a.weight":"model-00001-of-00002.safetensors","mtp.0.e_proj.scale":"m.safetensors"}}' \
	>"$out/seeds/stindex/one"
"$bin/fuzz_seeds" "$out/seeds/fixture"
for f in cases/*.case; do
	grep -vE '^[[:space:]]*(#|$)' "$f" | while IFS= read -r line; do
		printf '%s\n' "$line" >"$out/seeds/casefile/$(printf '%s' "$line" | md5sum | cut -c1-12)"
	done
done

export MTP_FUZZ_TMP=$out/tmp
export MTP_FUZZ_FIXTURES=$out/seeds/fixture
# the production allocator returns NULL for an absurd size; so does this one
export ASAN_OPTIONS=allocator_may_return_null=1
status=0
for t in fixture casefile cli safetensors stindex results; do
	mkdir -p "$out/corpus/$t" "$out/artifacts/$t"
	log=$out/$t.log
	"$bin/fuzz_$t" "$out/corpus/$t" "$out/seeds/$t" -fork=1 -ignore_crashes=1 \
		-ignore_timeouts=1 -ignore_ooms=1 -max_total_time="$secs" -timeout=10 \
		-rss_limit_mb=2048 -malloc_limit_mb=512 -artifact_prefix="$out/artifacts/$t/" \
		$( [ -f tests/fuzz/$t.dict ] && echo -dict=$PWD/tests/fuzz/$t.dict ) \
		</dev/null >"$log" 2>&1 || true
	last=$(grep -aE '^#[0-9]+: cov:' "$log" | tail -1)
	runs=$(sed -E 's/^#([0-9]+):.*/\1/' <<<"$last")
	cov=$(sed -E 's/.* cov: ([0-9]+) .*/\1/' <<<"$last")
	triage=$out/$t.triage
	: >"$triage"
	if compgen -G "$out/artifacts/$t/*" >/dev/null; then
		/usr/bin/python3 tools/ci/fuzz_triage.py "$bin/fuzz_$t" "$out/artifacts/$t"/* \
			>"$triage" || true
	fi
	ours=$(grep -c '^ours' "$triage" || true)
	hdf5=$(grep -c '^hdf5' "$triage" || true)
	other=$(grep -cE '^(unattributed|gone)' "$triage" || true)
	echo "fuzz $t: ${secs}s, ${runs:-0} runs ($(( ${runs:-0} / secs )) exec/s), cov ${cov:-0}," \
	     "corpus $(ls "$out/corpus/$t" | wc -l), bugs in mtpcheck: $ours, HDF5-internal: $hdf5, other: $other"
	if ((ours)); then
		grep '^ours' "$triage"; status=1
	fi
done
[ $status = 0 ] || echo "fuzz: inputs in $out/artifacts/ (re-run: $bin/fuzz_TARGET FILE)"
exit $status
