#!/usr/bin/env bash
# The DSpark audit against vLLM 0.33's real DSpark loader: the mappings
# recorded in fixtures/weights/dspark/ (python -m mtpcheck.weights --family
# deepseek_v41_dspark; weights_dspark.record) are judged clean, the audit
# simulated from the same parameter and module lists is clean and gives
# the same key -> parameter pairs, a converter that dropped stage 1's
# shared experts is named STALE_WEIGHT_REMAP from the real mapping and the
# simulated one alike, V4's MTP keys under the DSpark loader are named
# DSPARK_LOADER_ON_MTP (real and simulated), and the DSpark keys under the
# MTP loader DSPARK_LOADED_AS_MTP. docs/WEIGHTS.md "DSpark checkpoints".
# Usage: weights_dspark.sh MTPCHECK SOURCE_DIR
set -u
M=$1 D=$2/fixtures/weights/dspark
fail() { echo "$out" | tail -n 8; echo "FAIL: $*"; exit 1; }
pairs() { grep -v '^#' "$@" | cut -f1,2 | sort -u; }
n=0
for lay in bf16 fp8 fp4; do
	C=$D/$lay
	[ -d "$C" ] || continue
	n=$((n + 1))
	ed=()
	[ "$lay" = fp8 ] && ed=(--expert-dtype fp8)
	base=(audit-weights --family deepseek_v4 --layer 43 --mtp-layers 3 "${ed[@]}"
		--params "$C/params.txt" --modules "$C/modules.txt")
	out=$("$M" "${base[@]}" --keys "$C/keys.txt" --mapping "$C/map.txt") rc=$?
	[ "$rc" = 0 ] || fail "$lay: the real DSpark mapping exited $rc, not 0"
	grep -q 'engine mapping (DSpark loader), checkpoint kind dspark:' <<<"$out" ||
		fail "$lay: the summary does not say DSpark loader / kind dspark"
	out=$("$M" "${base[@]}" --keys "$C/keys.txt") rc=$?
	[ "$rc" = 0 ] || fail "$lay: the simulated DSpark loader exited $rc, not 0"
	out=$(diff <("$M" "${base[@]}" --keys "$C/keys.txt" --print-mapping | pairs) \
		<(pairs "$C/map.txt")) || fail "$lay: simulated pairs differ from the real loader's"
	for how in real sim; do
		m=()
		[ $how = real ] && m=(--mapping "$C-noshared/map.txt")
		out=$("$M" "${base[@]}" --keys "$C-noshared/keys.txt" "${m[@]}") rc=$?
		[ "$rc" = 1 ] || fail "$lay-noshared ($how) exited $rc, not 1"
		[ "$(grep -c '^STALE_WEIGHT_REMAP .*model.layers.1.ffn.shared_experts.' <<<"$out")" -ge 2 ] ||
			fail "$lay-noshared ($how): the dropped shared experts are not named"
		grep -qv '^STALE_WEIGHT_REMAP\|^QUANT_SCALE_DROPPED\|^audit-weights\|^note' <<<"$out" &&
			fail "$lay-noshared ($how): a finding of another kind"
		m=()
		[ $how = real ] && m=(--mapping "$C-mtpkeys/map.txt")
		out=$("$M" "${base[@]}" --keys "$C-mtpkeys/keys.txt" "${m[@]}") rc=$?
		[ "$rc" = 1 ] || fail "$lay-mtpkeys ($how) exited $rc, not 1"
		grep -q '^DSPARK_LOADER_ON_MTP .*mtp.0.e_proj.weight' <<<"$out" ||
			fail "$lay-mtpkeys ($how): the MTP keys are not named DSPARK_LOADER_ON_MTP"
		grep -q 'DSPARK_LOADER_ON_MTP x[0-9]*$' <<<"$out" ||
			fail "$lay-mtpkeys ($how): another diagnosis beside DSPARK_LOADER_ON_MTP"
	done
	# the reverse: the DSpark keys under V4's MTP loader, simulated and
	# (CASE-asmtp) as V4's real MTP class of three layers mapped them
	A=$C-asmtp
	for m in "" real; do
		x=()
		[ -n "$m" ] && x=(--params "$A/params.txt" --modules "$A/modules.txt" --mapping "$A/map.txt")
		out=$("$M" audit-weights --family deepseek_v4 --layer 43 --mtp-layers 3 "${ed[@]}" \
			--keys "$C/keys.txt" "${x[@]}") rc=$?
		[ "$rc" = 1 ] || fail "$lay under the MTP loader ${m:-simulated} exited $rc, not 1"
		grep -q 'DSPARK_LOADED_AS_MTP x[0-9]*$' <<<"$out" ||
			fail "$lay under the MTP loader ${m:-simulated}: not named DSPARK_LOADED_AS_MTP alone"
		grep -q '^DSPARK_LOADED_AS_MTP .*mtp.0.main_proj.weight' <<<"$out" ||
			fail "$lay under the MTP loader ${m:-simulated}: main_proj not named"
	done
done
[ "$n" -ge 2 ] || { echo "FAIL: fixtures/weights/dspark holds $n layouts (bf16 and FP8 wanted)"; exit 1; }
echo "weights_dspark: $n layouts, real == simulated, confusions named both ways"
