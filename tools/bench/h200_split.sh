#!/usr/bin/env bash
# One H200 call (2026-12-02, third session): the tc path with its output pass
# in a second kernel over the whole GPU. Build (cuda + python); the selftest
# forced tc; the split test and the real-size tc cases forced tc; memcheck
# on the tc cases; hc_pre and hc_head timed forced tc, token and auto; the
# torch.compile backend on draft_chain (the W8A8 chain under the budget's
# FP8 term) and the ops of its earlier failures. Logs into $OUT/h200_split.tgz.
set -uo pipefail
. "$(dirname "$0")/step.sh"
job_begin h200_split 540
git log -1 --format='commit %h %s' 2>/dev/null
cstep_build 110
cstep selftest_tc 15 env MTP_CUDA_HC_PATH=tc ./build/mtp_nv_selftest cuda
cstep bound_split 15 env MTP_CUDA_HC_PATH=tc $m run --backend cuda --cases tools/bench/mhc_tc_bound.case
cstep mhc_tc 90 env MTP_CUDA_HC_PATH=tc $m run --backend cuda --cases tools/bench/mhc_tc.case
cstep quick_tc 20 env MTP_CUDA_HC_PATH=tc $m run --backend cuda -q
cstep memcheck 40 env MTP_CUDA_HC_PATH=tc compute-sanitizer --tool memcheck $m run --backend cuda \
	--cases tools/bench/mhc_tc_bound.case -q
for p in tc token auto; do
	cstep bench_$p 45 env MTP_CUDA_HC_PATH=$p $m bench --backend cuda --op hc_pre,hc_head \
		--T 256,512,1024,4096,16384 --H 7168 --M 4 --graph --no-unfused --min-time 0.03
done
export MTP_PYTHON=$py MTP_TORCH_DEVICE=cuda
compiled=python:mtpcheck.adapters.torch:compile
cstep torch_compile 150 sh -c "for i in \$(seq 0 15); do
	$m run --backend $compiled --op draft_chain,mtp_step,hc_head,add_rmsnorm,hc_fused_post_pre --shard \$i/16 \
		>$out/torch-compile-\$i.txt 2>&1 & done; wait; tail -qn1 $out/torch-compile-*.txt"
grep -h "FAILED\|CRASHED\|TIMEOUT\|INVALID" "$out"/torch-compile-*.txt | grep "^\[" | cut -c1-260 | head -12
echo "== summary (total $SECONDS s)"
for f in selftest_tc bound_split mhc_tc quick_tc memcheck; do
	printf '%-13s %s\n' $f "$(grep -hE 'selftest:|results?:|ERROR SUMMARY|CUT' "$out/$f.txt" | tail -2 | tr '\n' ' ')"
	grep -h "FAIL" "$out/$f.txt" | grep -v "^ *ok" | cut -c1-200 | head -3
done
for p in tc token auto; do echo "-- $p"; grep -E "^ *hc_(pre|head) " "$out/bench_$p.txt" | cut -c1-150; done
