#!/usr/bin/env bash
# Kernels of one's own (examples/gpu_kernels.py) and pageable copies, measured the way a
# user would: cd REPO && bash tools/gpu/measure_user_kernels.sh
# Writes $OUT/gpu-{cumsum,softmax,histogram,gemv,gelu}.csv (pinned, 5 repeats, 4 KiB .. 256
# MiB) and $OUT/gpu-{scale,fft}-pageable.csv (the built-in kernels from ordinary host memory),
# with each run's log beside its CSV. These are data the LogCA GPU model was not developed
# on: new kernels, and copies it has not seen. TO=1MiB (with DEVICE=cpu) tries the sequence
# quickly without a GPU.
#
# KERNELS and PAGEABLE choose other kernels: each word is NAME or NAME@TO (a smaller
# largest size, for a host that is slow at 256 MiB); a PAGEABLE name that is not built in
# is read from examples/gpu_kernels.py. The second set, measured after the fit was final:
#   KERNELS="total layernorm transpose topk argsort@64MiB" PAGEABLE="gelu sort@64MiB" \
#   bash tools/gpu/measure_user_kernels.sh
# The third set, written before any of it was measured (examples/gpu_kernels.py says why):
#   KERNELS="conv1d gather median unique@64MiB polyval" PAGEABLE="polyval" CAP=100 \
#   bash tools/gpu/measure_user_kernels.sh
# (unique's host takes seconds a call at 128 and 256 MiB: to 256 MiB it ran past a 90 s cap)
# then, its CSVs in examples/measurements/gpu-<card>-third/, the fit judged on them:
#   PYTHONPATH=src python benchmarks/logca_gpu.py examples/measurements/gpu-*-third/
# The fourth set, written after the third was measured and judged (the same session measured
# it before changing the fit, and opened its files only once that fit was final):
#   KERNELS="flip dot maxpool quantize searchsorted" PAGEABLE="flip" \
#   bash tools/gpu/measure_user_kernels.sh
# The fifth set, written when no GPU was lent: to be measured before the fit next changes,
# its files sealed (tar, sha256) until a candidate fit is frozen (upsample's host took 9.9 s
# at 256 MiB on a 2-core machine, hence the longer cap):
#   KERNELS="bmm stencil compact upsample logsumexp" PAGEABLE="upsample" CAP=120 \
#   bash tools/gpu/measure_user_kernels.sh
#
# Time: 10-18 s per kernel on the H200 and H100 boxes (CUDA start-up included: the shipped scale
# took 15 s over the same sizes); each step is capped at CAP seconds (60; the kill gives 5 more).
source "$(dirname "$0")/common.sh"
export PYTHONPATH="$PWD/examples:$PYTHONPATH"
TO=${TO:-256MiB}

KERNELS=${KERNELS-cumsum softmax histogram gemv gelu}
PAGEABLE=${PAGEABLE-scale fft}   # PAGEABLE="" measures no pageable run
CAP=${CAP:-60}      # seconds a step may take; the argsort and sorts to 64 MiB took 56 s on the H200
source_of() {   # source_of NAME: the --kernel argument (built-in, else examples/gpu_kernels.py)
    case $1 in scale|sort|fft|gemm) echo "$1" ;; *) echo "python:gpu_kernels:$1" ;; esac
}
largest() {     # largest NAME[@TO]: the --to of that word (TO unless it names one)
    case $1 in *@*) echo "${1#*@}" ;; *) echo "$TO" ;; esac
}

for word in $KERNELS; do
    kernel=${word%@*}
    step "$CAP" "gpu-$kernel" --kernel "$(source_of "$kernel")" --from 4KiB --to "$(largest "$word")"
done
for word in $PAGEABLE; do
    kernel=${word%@*}
    step "$CAP" "gpu-$kernel-pageable" --kernel "$(source_of "$kernel")" --from 4KiB \
        --to "$(largest "$word")" --pageable
done
echo "[$((SECONDS - start))s] done: $(ls "$OUT" | tr "\n" " ")"
