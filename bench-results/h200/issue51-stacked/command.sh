set -u
bash .gpu/prep.sh
A=$PWD/.gpu/bin/ccl; P=/tmp/pages; mkdir -p $P /tmp/one
seq 1 200 | xargs -P 16 -I{} $A generate -o $P/page{}.png --seed {} --density 50 >/dev/null
cp $P/page1.png /tmp/one/
wall() { local name=$1; shift; rm -rf /tmp/out; local s=$EPOCHREALTIME; "$@" >/tmp/o.txt 2>/tmp/err || { echo "$name failed"; tail -3 /tmp/err; }; local e=$EPOCHREALTIME; awk -v a="$s" -v b="$e" -v n="$name" 'BEGIN { printf "%s: %.3f s\n", n, b - a }'; grep "wall time" /tmp/o.txt /tmp/err; }
$A --no-sync label /tmp/one -o /tmp/out --format npy --device cuda:0 >/dev/null 2>&1
for r in 1 2 3 4; do
  wall "one file as folder" $A --no-sync label /tmp/one -o /tmp/out --format npy --device cuda:0 --verbose
  wall "200 files" $A --no-sync label $P -o /tmp/out --format npy --device cuda:0 --verbose
  wall "200 files opencl" $A --no-sync label $P -o /tmp/out --format npy --device opencl:1 --verbose
done
$A --no-sync bench folder $P --devices cuda:0 --jobs 16 --out /tmp/f1 --rounds 5 2>&1 | grep "^|"
