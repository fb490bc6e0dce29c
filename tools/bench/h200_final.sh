#!/usr/bin/env bash
# One H200 call (under 10 minutes) that re-validates the tree after the GPU
# composition layer and the decode kernels, and runs the torch adapters:
#  build (cuda + the python backend on the image's torch); the default suite
#  on cuda (auto and with the decode path forced) and the real-size decode
#  cases; the torch eager suite and the torch.compile suite in 16 shards;
#  compute-sanitizer on the decode kernels; the decode benchmark (128
#  launches per graph, rotated, warm beside it); the side-by-side rows
#  cuda / torch eager / torch.compile. Every step has a time cap, and the
#  caps shrink to what is left of BUDGET seconds, so the job always ends in
#  time and packs its logs into $OUT/h200_final.tgz.
set -uo pipefail
. "$(dirname "$0")/step.sh"
job_begin h200_final 560
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
cstep_build 150
cp tools/bench/mhc_decode.case "$out/mhc.case"
cstep quick 30 $m run --backend cuda --json "$out/quick.json"
cstep quick_decode 30 env MTP_CUDA_HC_PATH=decode $m run --backend cuda --json "$out/quick-decode.json"
cstep mhc_decode 30 env MTP_CUDA_HC_PATH=decode $m run --backend cuda --cases "$out/mhc.case" --json "$out/mhc-decode.json"
cstep mhc_auto 30 $m run --backend cuda --cases "$out/mhc.case" --json "$out/mhc-auto.json"
python3 tools/bias/bias_count.py "$out/quick.json" "$out/mhc-auto.json" >"$out/bias.txt" 2>&1
cstep sanitizer 40 env MTP_CUDA_HC_PATH=decode compute-sanitizer --tool memcheck --error-exitcode 9 \
	$m run --backend cuda --cases "$out/mhc.case" --filter '*T8*'
bench="$m bench --H 7168 --M 4 --graph --no-unfused --min-time 0.05"
cstep bench_decode 40 env MTP_CUDA_EMPTY_BENCH=128 $bench --backend cuda --op hc_pre,hc_fused_post_pre,hc_head,hc_post \
	--T 1,8,64 --launches 128 --json "$out/bench-decode.json"
if [ -f build/mtp_backend_python.so ]; then
	export MTP_PYTHON=$py MTP_TORCH_DEVICE=cuda
	eager=python:mtpcheck.adapters.torch:eager
	compiled=python:mtpcheck.adapters.torch:compile
	cstep torch_eager 50 $m run --backend $eager --json "$out/torch-eager.json"
	# 16 shards at once: torch.compile's work is per process
	cstep torch_compile 210 sh -c "for i in \$(seq 0 15); do
		$m run --backend $compiled --shard \$i/16 --json $out/torch-compile-\$i.json \
			>$out/torch-compile-\$i.txt 2>&1 & done; wait; tail -qn1 $out/torch-compile-*.txt"
	cstep bench_side 200 $bench --backend cuda,$eager,$compiled \
		--op hc_pre,hc_head,hc_fused_post_pre,eh_proj,lm_head,embed,mtp_step --T 1,8,64,512,4096 \
		--json "$out/bench-side.json"
else
	echo "no python backend built"
fi
cstep nightly_comp 120 $m run --backend cuda --cases cases/nightly.case --op mtp_step,draft_chain,mtp_block \
	--json "$out/nightly-comp.json"
cat "$out"/bench_*.txt 2>/dev/null | grep -E "^(hc_|rmsnorm|add_rms|eh_proj|lm_head|embed|mtp_|  same|cuda: empty)" \
	>"$out/bench_rows.txt"
echo "total $SECONDS s"
