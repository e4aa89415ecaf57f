#!/usr/bin/env bash
# The benchmark suite behind the README's and docs/performance.md's results: one command.
#
#   bash scripts/bench-suite.sh OUT PAGES_DIR [quick|e2e|3d|quick-3d|stats|tuf|tuf-3d|ranking|quick-ranking]
#
# OUT        folder for everything (results.csv, peers.csv, summary.md and plots per experiment,
#            and headline.md, the headline tables of the README and docs/performance.md)
# PAGES_DIR  a folder of real document pages (e.g. DIBCO originals), thresholded at 128, ink
#            as foreground
# quick      small sizes and few runs, to check the pipeline on a machine without a GPU
# e2e        only the end-to-end experiments and the command line's wall time
# 3d         only the 3D experiments (volumes); quick-3d: the same at quick sizes
# stats      only what component statistics add to device-resident labeling (OUT/stats/)
# tuf        only TUF against the best published algorithms (BKE_IC, KE, UF) (OUT/tuf/)
# tuf-3d     only TUF on the 256^3 grid at 6-connectivity, with CuPy (OUT/volumes/tuf-c6/)
# ranking    every algorithm at every connectivity, one call, the GPUs (OUT/ranking/cN/): what
#            Algorithm::ranking and the default follow (tests/default_algorithm.rs reads it)
#
# Devices: every device `ccl devices` lists (CUDA, OpenCL GPUs and CPUs, the CPU reference);
# the slow CPU ones only run the smaller experiments. Peers (scripts/peers.py: NPP, CuPy,
# OpenCV) run where numpy and those libraries are installed.
set -euo pipefail
ccl=${CCL_BIN:-target/release/ccl}
out=${1:?usage: bench-suite.sh OUT PAGES_DIR [quick|e2e|3d|quick-3d|stats|tuf|tuf-3d|ranking|quick-ranking]}
pages=${2:?usage: bench-suite.sh OUT PAGES_DIR [quick|e2e|3d|quick-3d|stats|tuf|tuf-3d|ranking|quick-ranking]}
what=${3:-}
quick=""; case "$what" in quick|quick-3d|quick-ranking) quick=1;; esac
here=$(cd "$(dirname "$0")" && pwd)

all=$("$ccl" devices | awk '!/^#/{print $1}' | paste -sd, -)
gpus=$("$ccl" devices | awk '!/^#/ && / GPU /{print $1}' | paste -sd, -)
[ -n "$gpus" ] || gpus=$("$ccl" devices | awk '/^opencl/{print $1}' | paste -sd, -)
if [ -n "$quick" ]; then
  small=256x256; big=512x512; sizes=64,128,256,512; runs=3; warmup=1; per_point=2; grans=1,4
  cube=64x64x64; cubes=16,32,48,64; hilbert=1:4; hilbert_side=32; per_volume=1; runs3=3; warmup3=1
else
  small=2048x2048; big=8192x8192; sizes=256,512,1024,2048,4096,8192,16384; runs=10; warmup=3; per_point=3; grans=1,4,16
  # Volumes: one 256^3 volume per density x granularity point (the paper draws ten; one
  # already has 16.7 M voxels), 5 timed runs; cubes up to 1024^3 (1.07 G voxels: input, labels
  # and LE's reference array take 9 GB of device memory).
  cube=256x256x256; cubes=64,128,256,512,768,1024; hilbert=1:6; hilbert_side=128; per_volume=1; runs3=5; warmup3=2
fi
peers() { # folder [more peers.py options]
  if python3 -c "import numpy" 2>/dev/null; then python3 "$here/peers.py" "$@" --runs "$runs" --warmup "$warmup" || true; fi
}
echo "devices: $all (GPUs: $gpus)"

end_to_end() {
  # What a user feels: a host image in, consecutive labels in host memory out, every copy
  # included (host clock), on the GPUs, with the peers' host-to-host times beside them.
  "$ccl" bench end-to-end --dataset "$pages" --threshold 128 --invert --devices "$gpus" --runs "$runs" --warmup "$warmup" --save-images --out "$out/end-to-end-pages"
  peers "$out/end-to-end-pages" --end-to-end
  for s in "$small" "$big"; do
    "$ccl" bench end-to-end --size "$s" --density 50 --images 1 --devices "$gpus" --runs "$runs" --warmup "$warmup" --save-images --out "$out/end-to-end-$s"
    peers "$out/end-to-end-$s" --end-to-end
  done
  for d in end-to-end-pages "end-to-end-$small" "end-to-end-$big"; do
    if [ -f "$out/$d/peers.csv" ]; then
      "$ccl" bench plot --results "$out/$d/results.csv,$out/$d/peers.csv" --out "$out/$d/with-peers"
    fi
  done
  # The command line's wall time on a real page, cold (empty kernel cache) and warm.
  page=$(find "$pages" -maxdepth 1 -type f \( -iname '*.png' -o -iname '*.bmp' -o -iname '*.tif' -o -iname '*.tiff' -o -iname '*.jpg' \) | sort | head -1)
  python3 "$here/cli_timing.py" "$out/cli" "$page" --devices "$gpus" --runs "$runs" --bin "$ccl"
}
volumes() {
  # YACCLAB's 3D experiments (TPDS 2020 Sec. 6.1.2-6.1.3) at 6-, 18- and 26-connectivity (an
  # algorithm without the connectivity is skipped): density x granularity on random cubes and
  # growing cubes on the GPUs, the Hilbert volumes (orders 1-6 in 128^3) on every device; the
  # volume peers (CuPy, cc3d, SciPy) beside them.
  # The single-threaded CPU peers (cc3d, SciPy) take seconds per volume: one timed run each.
  # CCL_CONNECTIVITIES (default "6 18 26") splits the experiments over several runs.
  for c in ${CCL_CONNECTIVITIES:-6 18 26}; do
    "$ccl" bench density --size "$cube" --densities 0:100:10 --granularities "$grans" --images "$per_volume" --connectivity "$c" --devices "$gpus" --runs "$runs3" --warmup "$warmup3" --save-images --out "$out/density-3d-c$c"
    peers "$out/density-3d-c$c" --connectivity "$c" --mode density --cpu-runs 1
    "$ccl" bench average --hilbert "$hilbert" --hilbert-side "$hilbert_side" --connectivity "$c" --devices "$all" --runs "$runs3" --warmup "$warmup3" --save-images --out "$out/hilbert-c$c"
    peers "$out/hilbert-c$c" --connectivity "$c" --mode average --cpu-runs 1
    "$ccl" bench size --dims 3 --sizes "$cubes" --density 50 --connectivity "$c" --devices "$gpus" --runs "$runs3" --warmup "$warmup3" --out "$out/size-3d-c$c"
    for d in "density-3d-c$c" "hilbert-c$c"; do
      if [ -f "$out/$d/peers.csv" ]; then
        "$ccl" bench plot --results "$out/$d/results.csv,$out/$d/peers.csv" --out "$out/$d/with-peers"
      fi
    done
  done
}
statistics() {
  # What component statistics add to device-resident labeling (issue 13): TUF, UF, KE_IC and BKE_IC
  # alone, into consecutive labels (rows NAME+consecutive) and followed by relabeling +
  # statistics on the device (rows NAME+stats), at both sizes and on the real pages, on the GPUs.
  local algos=tuf,uf,ke_ic,bke_ic
  for s in "$small" "$big"; do
    "$ccl" bench density --size "$s" --densities 10,50,90 --granularities 1 --images 1 --algos "$algos" --devices "$gpus" --runs "$runs" --warmup "$warmup" --stats --out "$out/stats/stats${s%%x*}"
  done
  "$ccl" bench average --dataset "$pages" --threshold 128 --invert --algos "$algos" --devices "$gpus" --runs "$runs" --warmup "$warmup" --stats --out "$out/stats/statspages"
}
if [ "$what" = stats ]; then statistics; exit 0; fi
tuf() {
  # TUF (issue 12) against the fastest published algorithms for each connectivity: BKE_IC and
  # KE at 8, KE and UF at 4; density x granularity at the small size, three densities at the big
  # one, the real pages on the GPUs and (TUF and BKE_IC) on the OpenCL CPUs.
  local t=$out/tuf cpus
  cpus=$("$ccl" devices | awk '/^opencl/ && / CPU /{print $1}' | paste -sd, -)
  "$ccl" bench density --size "$small" --densities 0:100:10 --granularities "$grans" --images "$per_point" --algos tuf,bke_ic,ke --devices "$gpus" --runs "$runs" --warmup "$warmup" --out "$t/density8"
  "$ccl" bench density --size "$small" --densities 0:100:10 --granularities "$grans" --images "$per_point" --connectivity 4 --algos tuf,ke,uf --devices "$gpus" --runs "$runs" --warmup "$warmup" --out "$t/density4"
  "$ccl" bench density --size "$big" --densities 10,50,90 --images 1 --algos tuf,bke_ic --devices "$gpus" --runs "$runs" --warmup "$warmup" --out "$t/big8"
  "$ccl" bench density --size "$big" --densities 10,50,90 --images 1 --connectivity 4 --algos tuf,ke --devices "$gpus" --runs "$runs" --warmup "$warmup" --out "$t/big4"
  "$ccl" bench average --dataset "$pages" --threshold 128 --invert --algos tuf,bke_ic,ke --devices "$gpus" --runs "$runs" --warmup "$warmup" --out "$t/pages"
  if [ -n "$cpus" ]; then
    "$ccl" bench average --dataset "$pages" --threshold 128 --invert --algos tuf,bke_ic --devices "$cpus" --runs 3 --warmup 1 --out "$t/pages-pocl"
  fi
}
tuf_3d() {
  # TUF on the 256^3 density x granularity grid at 6-connectivity (issue 11), on the GPUs, and
  # CuPy on the same volumes (OUT/volumes/tuf-c6; the volumes themselves are not kept).
  local v=$out/volumes/tuf-c6
  "$ccl" bench density --size "$cube" --densities 0:100:10 --granularities "$grans" --images "$per_volume" --connectivity 6 --algos tuf --devices "$gpus" --runs "$runs3" --warmup "$warmup3" --save-images --out "$v"
  if python3 -c "import numpy" 2>/dev/null; then
    python3 "$here/peers.py" "$v" --connectivity 6 --mode density --peers cupy --runs "$runs3" --warmup "$warmup3" || true
  fi
  if [ -f "$v/peers.csv" ]; then
    "$ccl" bench plot --results "$v/results.csv,$v/peers.csv" --out "$v/with-peers"
  fi
  rm -rf "$v/images"
}
ranking() {
  # Every algorithm that supports the connectivity, on the small image (4, 8) or cube (6, 18, 26)
  # at 10 / 30 / 50 / 70 / 90 %, granularity 1 and 4: the order Algorithm::ranking keeps.
  local c size
  for c in 4 8 6 18 26; do
    case $c in 4|8) size=$small;; *) size=$cube;; esac
    "$ccl" bench density --size "$size" --densities 10:90:20 --granularities 1,4 --images 1 --connectivity "$c" --devices "$gpus" --runs "$runs3" --warmup "$warmup3" --out "$out/ranking/c$c"
  done
}
case "$what" in ranking|quick-ranking) ranking; exit 0;; esac
if [ "$what" = tuf ]; then tuf; exit 0; fi
if [ "$what" = tuf-3d ]; then tuf_3d; exit 0; fi
case "$what" in 3d|quick-3d) volumes; python3 "$here/headline.py" "$out" > "$out/headline-3d.md"; cat "$out/headline-3d.md"; exit 0;; esac

if [ "$what" = e2e ]; then
  end_to_end
  python3 "$here/headline.py" "$out" > "$out/headline.md"
  cat "$out/headline.md"
  exit 0
fi

# Real pages on every device: average and steps (the same measurements, two summaries).
"$ccl" bench average --dataset "$pages" --threshold 128 --invert --devices "$all" --runs "$runs" --warmup "$warmup" --save-images --out "$out/pages"
peers "$out/pages"
"$ccl" bench plot --results "$out/pages/results.csv" --mode steps --out "$out/pages-steps"

# Density x granularity (papers' Fig. 4 / 15) at the small size: GPUs over every granularity,
# every device at granularity 1.
"$ccl" bench density --size "$small" --densities 0:100:10 --granularities "$grans" --images "$per_point" --devices "$gpus" --runs "$runs" --warmup "$warmup" --save-images --out "$out/density"
peers "$out/density"
"$ccl" bench density --size "$small" --densities 0:100:10 --granularities 1 --images 1 --devices "$all" --runs 3 --warmup 1 --out "$out/density-all-devices"

# The big size at 10, 50, 90 % on the GPUs.
"$ccl" bench density --size "$big" --densities 10,50,90 --images 1 --devices "$gpus" --runs "$runs" --warmup "$warmup" --save-images --out "$out/big"
peers "$out/big"

# Growing sizes at 50 % on the GPUs.
"$ccl" bench size --sizes "$sizes" --density 50 --devices "$gpus" --runs "$runs" --warmup "$warmup" --out "$out/size"

end_to_end

statistics

volumes

# Side-by-side plots with the peers, and the headline table.
for d in pages density big; do
  if [ -f "$out/$d/peers.csv" ]; then
    "$ccl" bench plot --results "$out/$d/results.csv,$out/$d/peers.csv" --out "$out/$d/with-peers"
  fi
done
python3 "$here/headline.py" "$out" > "$out/headline.md"
cat "$out/headline.md"
