#!/usr/bin/env bash
# The GPU measurement of issue 36, as one command sequence for a machine with an NVIDIA GPU,
# PyTorch (CUDA build) and nvidia-ml-py:  cd REPO && bash tools/gpu/measure_h200.sh
# Writes $OUT/gpu-{scale,sort,fft,gemm}.csv (host/accel/echo, pinned, 5 repeats, the shipped
# H200 data's size ranges), $OUT/gpu-scale-resident.csv (kernel only, data on the GPU),
# $OUT/gpu-scale-energy.csv (joules per operation, if the driver has the counter), and
# $OUT/fit-KERNEL.txt (`logca fit` of each). Progress goes to stdout, one line per step.
#
# Time: estimated from the shipped H200 data (16-core host) and the repeat rule (each repeat
# >= 2 ms, device modes timed twice: wall and CUDA events): about 2.5 minutes in all, most
# of it the host's sort at 64 MiB (~2.2 s a call) and CUDA start-up (~5-10 s per run). Each
# step is capped (`timeout -s INT`: the harness then writes the sizes it finished and exits
# 130; killed 5 s later if it has not), so a slow kernel cannot eat the others' time: the
# caps, the kill grace and the fits' caps add up to 360 s at the very worst.
source "$(dirname "$0")/common.sh"

step 40 gpu-scale          --kernel scale --from 4KiB --to 256MiB --pinned     # ~15 s
step 75 gpu-sort           --kernel sort  --from 4KiB --to 64MiB  --pinned     # ~40 s
step 45 gpu-fft            --kernel fft   --from 4KiB --to 64MiB  --pinned     # ~20 s
step 45 gpu-gemm           --kernel gemm  --from 8KiB --to 128MiB --pinned     # ~20 s
step 25 gpu-scale-resident --kernel scale --from 4KiB --to 256MiB --resident   # ~12 s
step 40 gpu-scale-energy   --kernel scale --from 1MiB --to 64MiB --repeats 2 --energy  # ~25 s

for kernel in scale sort fft gemm; do
    [ -s "$OUT/gpu-$kernel.csv" ] || continue
    timeout 15 "$PY" -m accelperf logca fit "$OUT/gpu-$kernel.csv" > "$OUT/fit-$kernel.txt" 2>&1
    echo "[$((SECONDS - start))s] fit $kernel: exit $? ($(grep -m1 'speedup error' "$OUT/fit-$kernel.txt"))"
done
echo "[$((SECONDS - start))s] done: $(ls "$OUT" | tr "\n" " ")"
