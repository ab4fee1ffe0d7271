# Sourced by the measure_*.sh scripts beside it: $OUT, $PY, $DEVICE, the machine's lines
# and step CAP NAME ARGS... (one capped `accelperf measure gpu` run, one line before and after).
set -u
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
PY=${PYTHON:-python3}
DEVICE=${DEVICE:-cuda}     # DEVICE=cpu tries the sequence without a GPU
start=$SECONDS

step() {   # step CAP_SECONDS NAME ARGS...: one harness run, its status and time on one line
    local cap=$1 name=$2; shift 2
    local t0=$SECONDS
    echo "[$((SECONDS - start))s] $name: accelperf measure gpu $*"
    timeout -s INT -k 5 "$cap" "$PY" -m accelperf measure gpu --device "$DEVICE" "$@" \
        --out "$OUT/$name.csv" \
        2> "$OUT/$name.log"
    local rc=$?
    echo "[$((SECONDS - start))s] $name: exit $rc in $((SECONDS - t0)) s; $(tail -n 1 "$OUT/$name.log")"
}

nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.max,pcie.link.width.max \
    --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
"$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available(), "threads", torch.get_num_threads())'
