#!/usr/bin/env bash
# Before and after in one call: two ccl binaries timed on the same devices, interleaved (before,
# after, before, after, ...) so that a drift of the machine falls on both, over the labeling
# matrix of a speed check (default: TUF, BKE_IC and KE at 2048^2 and 8192^2, 10 / 50 / 90 %,
# queued device timing, minimum of 10 runs per image, 3 images per point), then the table of
# both (scripts/ab_table.py) in OUT/ab.md.
#
#   bash scripts/bench-ab.sh BEFORE AFTER OUT [ROUNDS]
#
# Environment: CCL_AB_DEVICES (default: every GPU `AFTER devices` lists, CUDA and OpenCL),
# CCL_AB_ALGOS (default tuf,bke_ic,ke), CCL_AB_SIZES (default 2048x2048,8192x8192),
# CCL_AB_CONNECTIVITY (default 8), CCL_AB_ARGS (more `ccl bench density` arguments, e.g. `--stats`
# for consecutive labels and statistics too).
set -euo pipefail
before=${1:?usage: bench-ab.sh BEFORE AFTER OUT [ROUNDS]}
after=${2:?usage: bench-ab.sh BEFORE AFTER OUT [ROUNDS]}
out=${3:?usage: bench-ab.sh BEFORE AFTER OUT [ROUNDS]}
rounds=${4:-2}
here=$(cd "$(dirname "$0")" && pwd)
devices=${CCL_AB_DEVICES:-$("$after" devices | awk '!/^#/ && / GPU /{print $1}' | paste -sd, -)}
algos=${CCL_AB_ALGOS:-tuf,bke_ic,ke}
sizes=${CCL_AB_SIZES:-2048x2048,8192x8192}
connectivity=${CCL_AB_CONNECTIVITY:-8}
read -r -a extra <<<"${CCL_AB_ARGS:-}"
mkdir -p "$out"
echo "devices: $devices; algorithms: $algos; sizes: $sizes; $rounds rounds" | tee "$out/README.txt"
for round in $(seq 1 "$rounds"); do
  for size in ${sizes//,/ }; do
    for side in before after; do
      bin=$before; [ "$side" = after ] && bin=$after
      "$bin" bench density --algos "$algos" --devices "$devices" --connectivity "$connectivity" --size "$size" \
        --densities 10,50,90 --runs 10 --warmup 3 --images 3 ${extra[@]+"${extra[@]}"} --out "$out/$side-$size-round$round" >/dev/null
    done
  done
done
python3 "$here/ab_table.py" "$out" | tee "$out/ab.md"
