#!/usr/bin/env bash
# The last H200 call of the 2026-12-02 session (under 8 minutes): the tree
# with the fp16 tolerance at two ulps, eh_proj's float32 accumulation
# allowance and the tc path's measured thresholds. Build (cuda + python);
# the cuda selftest and quick suite under auto (and the selftest forced tc);
# the split test of the tc path; the real-size tc cases (mhc_tc.case)
# forced tc; eh_proj at T = 512, H = 7168 on cuda (failed before the
# allowance); the torch.compile backend on the ops of its four earlier
# failures, in 16 shards. Logs into $OUT/h200_closing.tgz.
set -uo pipefail
. "$(dirname "$0")/step.sh"
job_begin h200_closing 460
git log -1 --format='commit %h %s' 2>/dev/null
cstep_build 110
cstep selftest_auto 15 ./build/mtp_nv_selftest cuda
cstep selftest_tc 15 env MTP_CUDA_HC_PATH=tc ./build/mtp_nv_selftest cuda
cstep quick_auto 15 $m run --backend cuda --json "$out/quick-auto.json"
cstep bound_split 15 env MTP_CUDA_HC_PATH=tc $m run --backend cuda --cases tools/bench/mhc_tc_bound.case \
	--json "$out/bound-split.json"
cstep bound_nosplit 15 env MTP_CUDA_HC_PATH=tc MTP_CUDA_TC_NOSPLIT=1 $m run --backend cuda \
	--cases tools/bench/mhc_tc_bound.case --json "$out/bound-nosplit.json"
cstep mhc_tc 110 env MTP_CUDA_HC_PATH=tc $m run --backend cuda --cases tools/bench/mhc_tc.case \
	--json "$out/mhc-tc.json"
printf 'op=eh_proj family=deepseek_v3 T=512 H=7168 tags=h200\n' >"$out/eh.case"
cstep eh_proj 80 $m run --backend cuda --cases "$out/eh.case" --json "$out/eh.json"
export MTP_PYTHON=$py MTP_TORCH_DEVICE=cuda
compiled=python:mtpcheck.adapters.torch:compile
cstep torch_compile 130 sh -c "for i in \$(seq 0 15); do
	$m run --backend $compiled --op draft_chain,hc_head,add_rmsnorm,hc_fused_post_pre --shard \$i/16 \
		--json $out/torch-compile-\$i.json >$out/torch-compile-\$i.txt 2>&1 & done; wait; tail -qn1 $out/torch-compile-*.txt"
grep -h "FAILED\|CRASHED\|TIMEOUT\|INVALID" "$out"/torch-compile-*.txt | grep "^\[" | cut -c1-260 | head -12
echo "== summary (total $SECONDS s)"
for f in selftest_auto selftest_tc quick_auto bound_split bound_nosplit mhc_tc eh_proj; do
	printf '%-15s %s\n' $f "$(grep -hE 'selftest:|results:|CUT' "$out/$f.txt" | tail -1)"
	grep -h "FAIL" "$out/$f.txt" | grep -v "^ *ok" | cut -c1-220 | head -4
done
