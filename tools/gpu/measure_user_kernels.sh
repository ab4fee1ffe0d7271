#!/usr/bin/env bash
# Kernels of one's own (examples/gpu_kernels.py) and pageable copies, measured the way a
# user would: cd REPO && bash tools/gpu/measure_user_kernels.sh
# Writes $OUT/gpu-{cumsum,softmax,histogram,gemv,gelu}.csv (pinned, 5 repeats, 4 KiB .. 256
# MiB) and $OUT/gpu-{scale,fft}-pageable.csv (the built-in kernels from ordinary host memory),
# with each run's log beside its CSV. These are data the LogCA GPU model was not developed
# on: new kernels, and copies it has not seen. TO=1MiB (with DEVICE=cpu) tries the sequence
# quickly without a GPU.
#
# Time: 10-18 s per kernel on the H200 and H100 boxes (CUDA start-up included: the shipped scale
# took 15 s over the same sizes); each step is capped as in measure_h200.sh, and the caps
# and kill grace add up to 325 s at the very worst.
source "$(dirname "$0")/common.sh"
export PYTHONPATH="$PWD/examples:$PYTHONPATH"
TO=${TO:-256MiB}

for kernel in cumsum softmax histogram gemv gelu; do
    step 40 "gpu-$kernel" --kernel "python:gpu_kernels:$kernel" --from 4KiB --to "$TO"
done
step 45 gpu-scale-pageable --kernel scale --from 4KiB --to "$TO" --pageable
step 45 gpu-fft-pageable   --kernel fft   --from 4KiB --to "$TO" --pageable
echo "[$((SECONDS - start))s] done: $(ls "$OUT" | tr "\n" " ")"
