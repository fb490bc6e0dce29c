#!/usr/bin/env bash
# The device driver: `tools/bench/device.sh PROFILE` runs, in one device call,
# the build and then the steps of tools/bench/profiles/PROFILE.steps, each
# under a time cap that shrinks to what is left of the profile's budget, and
# packs every step's log into $OUT/PROFILE.tgz (step.sh). A profile is data:
#   budget SECONDS            the whole job's (default 560: one call is 600)
#   torch                     the torch adapters on the GPU from here on
#                             ($eager, $compiled, $side_bench: step.sh)
#   NAME CAP COMMAND...       a step: COMMAND run by bash with $m (the built
#                             mtpcheck), $out (the logs) and $py exported
# Lines starting with # are comments. With STEPS="a b" only those steps run.
# One profile per purpose (each file's comment says what it runs and which
# of the earlier one-off scripts, now gone, it took over): reliability,
# conformance, sanitizer, mhc, torch, side, table, validate, decode, coverage,
# dspark, vllm.
set -uo pipefail
here=$(dirname "$0")
. "$here/step.sh"
prof=$here/profiles/${1:-}.steps
if [ -z "${1:-}" ] || [ ! -f "$prof" ]; then
	echo "device.sh: no profile '${1:-}'; profiles: $(cd "$here/profiles" && ls -- *.steps | sed 's/\.steps//' | xargs)"
	exit 2
fi
name=$(basename "$prof" .steps)
job_begin "$name" "$(awk '$1 == "budget" {print $2}' "$prof" | tail -1)"
budget=${budget:-560}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
cstep_build 200
export m out py
steps=()
while read -r step cap cmd <&3; do
	case $step in
	'' | '#'* | budget) continue ;;
	torch) torch_on_cuda; export eager compiled side_bench; continue ;;
	esac
	steps+=("$step")
	cstep "$step" "$cap" bash -c "$cmd"
done 3<"$prof"
verdicts "${steps[@]}"
echo "total $SECONDS s"
