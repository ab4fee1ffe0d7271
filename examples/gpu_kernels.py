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

A third set, written on 2026-11-27 before any of it was measured, after every change to
the fit so far (commit it was added in: the fit to judge on it), then measured on an H100
(``examples/measurements/gpu-h100-third/``) and the fit judged on it unchanged:

* ``conv1d``: a 1-D convolution with 31 taps (31 multiply-adds per value: far more
  arithmetic per byte than ``gelu``; cuDNN against the host library's convolution);
* ``gather``: the values read in a scattered order, index i from (i·7919) mod n (a
  permutation for n not a multiple of 7919: memory-latency-bound on both sides);
* ``median``: the median of all values (a selection over all of them: one number comes
  back);
* ``unique``: the distinct values, sorted (a sort and a compaction whose output size the
  data decide: nearly every uniform float32 is distinct);
* ``polyval``: a degree-16 polynomial of each value by Horner's rule (32 operations per
  value, elementwise: compute-bound where ``scale`` is memory-bound).

A fourth set, written on 2026-11-28 after the third set was measured (the fit judged on it
as it stood, commit e755c17: docs/how-to/gpu-pays-off.md) and measured in the same session
before any change to the fit; its files (``examples/measurements/gpu-h200-fourth/``) were
opened only once that session's candidate fit was frozen:

* ``flip``: the values in reverse order, into new memory (a copy: nothing computed);
* ``dot``: the dot product of the vector with itself (a BLAS reduction: 4 bytes come back);
* ``maxpool``: the largest of each 8 neighbouring values (an eighth of the bytes come back);
* ``quantize``: each value scaled to a signed 8-bit integer (a quarter of the bytes come
  back);
* ``searchsorted``: each value's place among 4096 sorted breakpoints (a binary search per
  value: 12 dependent reads of a table that fits any cache).

A fifth set, written on 2026-12-01 when no GPU was lent, to be measured before the fit is
next changed and its files kept unopened until a candidate is frozen (as the fourth was):

* ``bmm``: the values as 32 x 32 matrices, each multiplied by itself (many small matrix
  products: 32 multiply-adds per value, batched BLAS against the host's);
* ``stencil``: the mean of each value's 3 x 3 neighbourhood in the m x m image, m =
  isqrt(g/4) (a 2-D stencil: neighbours a row apart in memory);
* ``compact``: the values above 0.5, in order (a compaction: the data decide the output's
  size, about half the bytes come back);
* ``upsample``: linear interpolation to twice as many values (twice the bytes come back);
* ``logsumexp``: log of the sum of exp of all values (a reduction with a transcendental per
  value: one number comes back).

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


def conv1d(x):
    taps = torch.linspace(-1.0, 1.0, 31, device=x.device)
    return torch.nn.functional.conv1d(x.view(1, 1, -1), taps.view(1, 1, -1), padding=15)


def gather(x):
    n = x.numel()
    index = torch.arange(n, device=x.device) * 7919 % n
    return x[index]


def median(x):
    return x.median()


def unique(x):
    return torch.unique(x, sorted=True)


def polyval(x):
    y = torch.full_like(x, 0.5)
    for k in range(16):
        y = y * x + (k + 1) / 17
    return y


def flip(x):
    return torch.flip(x, (0,))


def dot(x):
    return torch.dot(x, x)


def maxpool(x):
    return torch.nn.functional.max_pool1d(x.view(1, 1, -1), 8)


def quantize(x):
    return torch.clamp(torch.round(x * 127.0), -128, 127).to(torch.int8)


def searchsorted(x):
    breakpoints = torch.linspace(0.0, 1.0, 4096, device=x.device)
    return torch.searchsorted(breakpoints, x)


def bmm(x):
    n = x.numel() - x.numel() % 1024
    blocks = x[:n].view(-1, 32, 32)
    return torch.bmm(blocks, blocks)


def stencil(x):
    m = math.isqrt(x.numel())
    image = x[:m * m].view(1, 1, m, m)
    return torch.nn.functional.avg_pool2d(image, 3, stride=1, padding=1)


def compact(x):
    return x[x > 0.5]


def upsample(x):
    return torch.nn.functional.interpolate(x.view(1, 1, -1), scale_factor=2.0,
                                           mode="linear", align_corners=False)


def logsumexp(x):
    return torch.logsumexp(x, 0)
