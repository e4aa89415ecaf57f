#!/usr/bin/env bash
# On the GPU machine (binaries staged by ../shared/tools/gpu-pack in .gpu/): runs the CUDA
# kernels of UF, KE, BUF and BKE once under compute-sanitizer memcheck and racecheck on a
# 512x512 random image (45 % density), 4- and 8-connectivity where supported; then every
# algorithm under memcheck on a 2x1100000 image, whose launches are folded into the grid; then
# the component statistics kernels (on it and on two 2100x300 images, 45 % and 10 %); every
# binarization kernel (Nick with each formula, Wolf's
# statistics pass, Otsu's histogram)
# under memcheck and racecheck on a 513x411 page, and the fast kernel on a 516x411 one and a
# 2600x300 one (several tiles across). `gpu-sanitize.sh binarize` runs only that part,
# `gpu-sanitize.sh stats` only the statistics; `gpu-sanitize.sh tuf` only TUF (memcheck and
# racecheck, 4- and 8-connectivity, on the 512x512 image, a 1000x700 one of partial tiles and a
# 2100x1000 one of many work-groups);
# `gpu-sanitize.sh volumes` runs every algorithm on volumes instead (memcheck and racecheck, each
# of its 6/18/26 connectivities, a 37x29x19 random volume at 45 %, and TUF's raw labels on 68x35x33
# ones at 45 and 85 %; needs python3 with numpy).
# `gpu-sanitize.sh every-kernel` runs each CUDA kernel at least once under each of memcheck,
# racecheck, synccheck and initcheck: every algorithm on a 512x512 image (8-connectivity, and 4
# for the pixel algorithms), raw and consecutive labels, the statistics, every algorithm on a
# 37x29x19 volume (26-connectivity, TUF 6), every binarization kernel, and the queue hold of
# `ccl bench`; it needs python3 with numpy.
set -uo pipefail
what=${1:-all}
ccl=${CCL_BIN:-.gpu/bin/ccl}
img=$(mktemp --suffix=.png)
tall=$(mktemp --suffix=.png)
rc=0
page=$(mktemp --suffix=.png)
trap 'rm -f "$img" "$tall" "$page" /tmp/sanitize.npy /tmp/sanitize-tall.npy /tmp/sanitize-ink.png' EXIT
"$ccl" generate -o "$page" --width 513 --height 411 --density 30 --granularity 3 --seed 7
# Runs `ccl ARGS...` under compute-sanitizer TOOL and prints "LABEL TOOL: exit CODE; SUMMARY";
# a failure prints the output's tail and fails the script. An algorithm without the asked
# connectivity says so (exit 2) before any kernel runs: that is skipped, silently.
check() {
  local tool=$1 label=$2 out code summary
  shift 2
  out=$(compute-sanitizer --tool "$tool" --error-exitcode 99 "$ccl" "$@" 2>&1)
  code=$?
  if echo "$out" | grep -q "does not support"; then return; fi
  summary=$(echo "$out" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY" | tail -1)
  echo "$label $tool: exit $code; ${summary:-no summary}"
  [ $code -eq 0 ] || { rc=1; echo "$out" | tail -20; }
}
sanitize_volumes() {
  local vol=/tmp/sanitize-volume.npy
  python3 -c "import numpy as np; r = np.random.default_rng(19); np.save('$vol', (r.random((19, 29, 37)) < 0.45).astype(np.uint8))" || return 1
  for algo in LE OLE BE UF UF_IC KE KE_IC BUF BUF_IC BKE BKE_IC TUF; do
    for conn in 6 18 26; do
      for tool in memcheck racecheck; do
        check "$tool" "$algo volume $conn-conn" label "$vol" --device cuda:0 --algo "$algo" --connectivity "$conn" -o /tmp/sanitize-labels.npy
      done
    done
  done
  # TUF's raw labels, where pass 1 defers regions of few roots to pass 3: 68x35x33 volumes (whole
  # regions on 16-byte rows, and cut ones) at 45 % and 85 %.
  for density in 45 85; do
    python3 -c "import numpy as np; r = np.random.default_rng($density); np.save('$vol', (r.random((33, 35, 68)) < $density / 100).astype(np.uint8))" || return 1
    for tool in memcheck racecheck; do
      check "$tool" "TUF raw volume $density %" label "$vol" --device cuda:0 --algo TUF --connectivity 6 --raw -o /tmp/sanitize-labels.npy
    done
  done
}
if [ "$what" = volumes ]; then sanitize_volumes; exit $rc; fi
if [ "$what" = every-kernel ]; then
  vol=/tmp/sanitize-volume.npy
  python3 -c "import numpy as np; r = np.random.default_rng(19); np.save('$vol', (r.random((19, 29, 37)) < 0.45).astype(np.uint8))" || exit 1
  "$ccl" generate -o "$img" --width 512 --height 512 --density 45 --seed 512
  for tool in memcheck racecheck synccheck initcheck; do
    for algo in LE OLE BE UF UF_IC KE KE_IC BUF BUF_IC BKE BKE_IC TUF; do
      check "$tool" "$algo 8-conn" label "$img" --device cuda:0 --algo "$algo" --connectivity 8 -o /tmp/sanitize.npy
      conn=26; [ "$algo" = TUF ] && conn=6
      check "$tool" "$algo volume $conn-conn" label "$vol" --device cuda:0 --algo "$algo" --connectivity "$conn" -o /tmp/sanitize.npy
    done
    for algo in LE OLE UF KE TUF; do
      check "$tool" "$algo 4-conn" label "$img" --device cuda:0 --algo "$algo" --connectivity 4 -o /tmp/sanitize.npy
    done
    for algo in TUF BKE_IC; do
      check "$tool" "$algo raw" label "$img" --device cuda:0 --algo "$algo" --raw -o /tmp/sanitize.npy
      check "$tool" "$algo stats" label "$img" --device cuda:0 --algo "$algo" --stats /tmp/sanitize-stats.csv -o /tmp/sanitize.npy
    done
    check "$tool" "TUF volume raw" label "$vol" --device cuda:0 --algo TUF --connectivity 6 --raw -o /tmp/sanitize.npy
    for kernel in global global-shared shared fast; do
      check "$tool" "binarize nick $kernel" binarize "$page" --device cuda:0 -o /tmp/sanitize-ink.png --method nick --kernel "$kernel" --window 15
    done
    check "$tool" "binarize wolf" binarize "$page" --device cuda:0 -o /tmp/sanitize-ink.png --method wolf --window 31
    check "$tool" "binarize otsu" binarize "$page" --device cuda:0 -o /tmp/sanitize-ink.png --method otsu
    check "$tool" "queue hold" bench density --devices cuda:0 --algos tuf --size 64x64 --densities 50 --runs 1 --warmup 0 --images 1 --out /tmp/sanitize-bench
  done
  exit $rc
fi
# Component statistics (kernels/stats.kernel) after a labeling into consecutive labels, on a
# table sized before N is read back: UF (first-pixel labels, relabeled), BKE_IC (block labels,
# relabeled) and TUF (renumbered in its last pass) on a 512x512 image, and on images wider than a work-group's 1024 columns,
# dense (a large component across groups) and sparse (groups meeting more components than their
# table holds).
sanitize_stats() {
  local wide sparse
  wide=$(mktemp --suffix=.png)
  sparse=$(mktemp --suffix=.png)
  "$ccl" generate -o "$wide" --width 2100 --height 300 --density 45 --seed 3
  "$ccl" generate -o "$sparse" --width 2100 --height 300 --density 10 --seed 4
  for input in "$1" "$wide" "$sparse"; do
    for algo in UF BKE_IC TUF; do
      for tool in memcheck racecheck; do
        check "$tool" "stats ${input##*/} $algo" label "$input" --device cuda:0 --algo "$algo" --stats /tmp/sanitize-stats.csv -o /tmp/sanitize.npy
      done
    done
  done
  rm -f "$wide" "$sparse"
}
# TUF (kernels/tuf.kernel) on images of whole and partial 32 x 32 tiles, dense and sparse, and
# one of more 8-tile work-groups than an H100 has SMs (2100x1000: 288), whose tiles are joined
# in local memory (fewer groups take the one-tile-per-group kernel): `tuf_tiles_groups` with
# 8-connectivity, `tuf_tiles_wide` (two warps a tile) with 4; consecutive labels, and on the
# last image raw ones too.
sanitize_tuf() {
  local odd groups
  odd=$(mktemp --suffix=.png)
  groups=$(mktemp --suffix=.png)
  "$ccl" generate -o "$odd" --width 1000 --height 700 --density 60 --seed 700
  "$ccl" generate -o "$groups" --width 2100 --height 1000 --density 55 --seed 5
  for input in "$1" "$odd" "$groups"; do
    for conn in 4 8; do
      for tool in memcheck racecheck; do
        check "$tool" "TUF ${input##*/} $conn-conn" label "$input" --device cuda:0 --algo TUF --connectivity "$conn" -o /tmp/sanitize.npy
        [ "$input" = "$groups" ] && check "$tool" "TUF ${input##*/} $conn-conn raw" label "$input" --device cuda:0 --algo TUF --connectivity "$conn" --raw -o /tmp/sanitize.npy
      done
    done
  done
  rm -f "$odd" "$groups"
}
case "$what" in
  stats|tuf)
    "$ccl" generate -o "$img" --width 512 --height 512 --density 45 --seed 512
    "sanitize_$what" "$img"
    exit $rc
    ;;
esac
sanitize_binarize() {
  for tool in memcheck racecheck; do
    check "$tool" "binarize $*" binarize "$page" --device cuda:0 -o /tmp/sanitize-ink.png "$@"
  done
}
for kernel in global global-shared shared fast; do
  sanitize_binarize --method nick --kernel "$kernel" --window 15
  sanitize_binarize --method wolf --kernel "$kernel" --window 31
done
sanitize_binarize --method nick --formula opencv --kernel fast --window 45
sanitize_binarize --method sauvola --kernel fast --window 301
sanitize_binarize --method otsu
# A page whose width is a multiple of 4: the fast kernel reads its rows a word at a time.
"$ccl" generate -o "$page" --width 516 --height 411 --density 30 --granularity 3 --seed 8
sanitize_binarize --method nick --kernel fast --window 15
sanitize_binarize --method nick --kernel fast --window 101
sanitize_binarize --method wolf --kernel fast --window 31
sanitize_binarize --method wolf --kernel fast --window 101
# A page wider than the fast kernel's span: several tiles across, the first and last (with the
# clipped border) wider than the others, with the replicated border all alike.
"$ccl" generate -o "$page" --width 2600 --height 300 --density 30 --granularity 3 --seed 9
sanitize_binarize --method nick --kernel fast --window 201
sanitize_binarize --method nick --formula opencv --kernel fast --window 101
sanitize_binarize --method wolf --kernel fast --window 45
[ "$what" = binarize ] && exit $rc
"$ccl" generate -o "$img" --width 512 --height 512 --density 45 --seed 512
sanitize_tuf "$img"
for algo in UF KE BUF BKE; do
  for conn in 4 8; do
    case $algo:$conn in BUF:4|BKE:4) continue ;; esac
    for tool in memcheck racecheck; do
      check "$tool" "$algo $conn-conn" label "$img" --device cuda:0 --algo "$algo" --connectivity "$conn" -o /tmp/sanitize.npy
    done
  done
done
sanitize_stats "$img"
"$ccl" generate -o "$tall" --width 2 --height 1100000 --density 60 --seed 1100000
for algo in LE OLE BE UF UF_IC KE KE_IC BUF BUF_IC BKE BKE_IC TUF; do
  check memcheck "$algo 2x1100000" label "$tall" --device cuda:0 --algo "$algo" -o /tmp/sanitize-tall.npy
done
exit $rc
