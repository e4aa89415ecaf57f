#!/usr/bin/env bash
# On the GPU machine (binaries staged by ../shared/tools/gpu-pack in .gpu/): runs the CUDA
# kernels of UF, KE, BUF and BKE once under compute-sanitizer memcheck and racecheck on a
# 512x512 random image (45 % density), 4- and 8-connectivity where supported; then every
# algorithm under memcheck on a 2x1100000 image, whose launches are folded into the grid.
set -uo pipefail
ccl=${CCL_BIN:-.gpu/bin/ccl}
img=$(mktemp --suffix=.png)
tall=$(mktemp --suffix=.png)
trap 'rm -f "$img" "$tall" /tmp/sanitize.npy /tmp/sanitize-tall.npy' EXIT
"$ccl" generate -o "$img" --width 512 --height 512 --density 45 --seed 512
rc=0
for algo in UF KE BUF BKE; do
  for conn in 4 8; do
    case $algo:$conn in BUF:4|BKE:4) continue ;; esac
    for tool in memcheck racecheck; do
      out=$(compute-sanitizer --tool "$tool" --error-exitcode 99 "$ccl" label "$img" --device cuda:0 --algo "$algo" --connectivity "$conn" -o /tmp/sanitize.npy 2>&1)
      code=$?
      summary=$(echo "$out" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY" | tail -1)
      echo "$algo $conn-conn $tool: exit $code; ${summary:-no summary}"
      [ $code -eq 0 ] || { rc=1; echo "$out" | tail -20; }
    done
  done
done
"$ccl" generate -o "$tall" --width 2 --height 1100000 --density 60 --seed 1100000
for algo in LE OLE BE UF UF_IC KE KE_IC BUF BUF_IC BKE BKE_IC; do
  out=$(compute-sanitizer --tool memcheck --error-exitcode 99 "$ccl" label "$tall" --device cuda:0 --algo "$algo" -o /tmp/sanitize-tall.npy 2>&1)
  code=$?
  echo "$algo 2x1100000 memcheck: exit $code; $(echo "$out" | grep -E "ERROR SUMMARY" | tail -1)"
  [ $code -eq 0 ] || { rc=1; echo "$out" | tail -20; }
done
exit $rc
