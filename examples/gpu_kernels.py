"""Kernels of one's own for ``accelperf measure gpu --kernel python:gpu_kernels:NAME``.

Each function is given the input, one float32 vector of g/4 values drawn uniformly from
[0, 1), on the device for the offloaded run and on the host for the host's run, and returns
a tensor (or a tuple of tensors) on the same device without synchronizing or copying: the
harness times the copies and synchronizes. They are the kernels of the user-kernel
measurement in ``examples/measurements/gpu-h200-user/``, chosen to differ from the four
built-in ones in what limits them:

* ``cumsum``: an inclusive prefix sum (a scan: the GPU needs two passes, the host one);
* ``softmax``: exp(x - max) / sum, three passes over the data (a reduction, an elementwise
  map, a second reduction);
* ``histogram``: 256 equal bins over [0, 1) (the GPU's atomics; 1 KiB comes back);
* ``gemv``: an m x m matrix, m = isqrt(g/4), times a vector of m values (matrix-vector
  product: memory-bound on both sides; m values come back);
* ``gelu``: the GELU activation with its erf, elementwise (more arithmetic per byte than
  ``scale``).

A second set, written after the LogCA GPU fit was final and measured to test it on kernels
it had never seen (``examples/measurements/gpu-*-second/``):

* ``total``: the sum of all values (a reduction to one number: 4 bytes come back);
* ``layernorm``: layer normalisation of rows of 1024 values (two reductions and a map per
  row);
* ``transpose``: the m x m matrix, m = isqrt(g/4), transposed into new memory (strided
  reads or writes on either side);
* ``topk``: the 64 largest values and where they are (a selection, not a sort);
* ``argsort``: the permutation that sorts the values (int64 indices: twice the input's
  bytes come back).

Run from the repository's ``examples/`` directory (or with it on PYTHONPATH), e.g.
``accelperf measure gpu --kernel python:gpu_kernels:cumsum --out gpu-cumsum.csv``.
"""

import math

import torch


def cumsum(x):
    return torch.cumsum(x, 0)


def softmax(x):
    return torch.softmax(x, 0)


def histogram(x):
    return torch.histc(x, bins=256, min=0.0, max=1.0)


def gemv(x):
    m = math.isqrt(x.numel())
    return torch.mv(x[:m * m].view(m, m), x[:m])


def gelu(x):
    return torch.nn.functional.gelu(x)


def total(x):
    return x.sum()


def layernorm(x):
    width = min(1024, x.numel())
    rows = x[:x.numel() - x.numel() % width].view(-1, width)
    return torch.nn.functional.layer_norm(rows, (width,))


def transpose(x):
    m = math.isqrt(x.numel())
    return x[:m * m].view(m, m).t().contiguous()


def topk(x):
    return torch.topk(x, min(64, x.numel()))


def argsort(x):
    return torch.argsort(x)
