"""The PyTorch device layer of `accelperf measure gpu` (measure/gpu.py's Backend).

``cuda``: tensors on the current CUDA device, copies with ``copy_(non_blocking=True)`` from
and into pinned host memory (synchronous copies from pageable memory), CUDA events for the
device's clock, NVML for the GPU's description and its total-energy counter. ``cpu``: the
same harness with the CPU standing in for the device (copies are memcpys, no device
clock), so that CI without a GPU runs the real code path.

fp32 GEMM runs at full fp32 precision (``torch.set_float32_matmul_precision("highest")``:
no TF32 on the GPU), as the shipped H200 data were measured.
"""

from __future__ import annotations

import platform
import shutil
import subprocess
import time

from ..errors import install_hint, invalid

DEVICES = ("cuda", "cpu")


def torch_backend(device: str) -> "TorchBackend":
    """The backend, or a ModelError (exit 2) saying in one line why there is none."""
    if device not in DEVICES:
        raise invalid("device", device, "cuda or cpu")
    try:
        import torch
    except ModuleNotFoundError as exc:
        if exc.name != "torch":
            raise invalid("device", device, f"PyTorch does not import: {exc}") from None
        raise invalid("device", device, f"measuring needs PyTorch, which is not installed: "
                                        f"{install_hint('gpu')}") from None
    except ImportError as exc:
        raise invalid("device", device, f"PyTorch does not import: {exc}") from None
    if device == "cuda" and not torch.cuda.is_available():
        raise invalid("device", device, f"no CUDA GPU is usable here (torch "
                                        f"{torch.__version__}); `device` cpu runs the "
                                        f"harness on the CPU instead")
    return TorchBackend(device)


class _Events:
    def __init__(self, torch):
        self._start = torch.cuda.Event(enable_timing=True)
        self._end = torch.cuda.Event(enable_timing=True)

    def start(self):
        self._start.record()

    def end(self):
        self._end.record()

    def seconds(self) -> float:
        return self._start.elapsed_time(self._end) / 1e3


class TorchBackend:
    clock = staticmethod(time.perf_counter)

    def __init__(self, device: str):
        import torch
        self.torch, self.device = torch, device
        torch.set_float32_matmul_precision("highest")
        self._kernels = {"scale": lambda x: torch.mul(x, 2.0),
                         "sort": lambda x: torch.sort(x).values,
                         "fft": lambda x: torch.fft.rfft(x),
                         "gemm": lambda a, b: torch.matmul(a, b)}
        self._nvml, self._no_nvml = _nvml_handle(torch) if device == "cuda" else (None, None)
        # Asynchronous copies on the GPU (each call ends with a synchronize anyway): from
        # pageable memory CUDA stages them and returns when the host side is done.
        self._non_blocking = device == "cuda"

    def kernel(self, name):
        return self._kernels[name]

    def host_tensor(self, shape, pinned):
        x = self.torch.rand(shape, dtype=self.torch.float32)
        return x.pin_memory() if pinned and self.device == "cuda" else x

    def host_like(self, tensor, pinned):
        return self.torch.empty(tensor.shape, dtype=tensor.dtype,
                                pin_memory=pinned and self.device == "cuda")

    def device_like(self, tensor):
        return self.torch.empty(tensor.shape, dtype=tensor.dtype, device=self.device)

    def copy(self, dst, src):
        dst.copy_(src, non_blocking=self._non_blocking)

    def sync(self):
        if self.device == "cuda":
            self.torch.cuda.synchronize()

    def events(self):
        return _Events(self.torch) if self.device == "cuda" else None

    def energy_counter(self):
        if self.device != "cuda":
            return "--device cpu has no GPU energy counter"
        if self._nvml is None:
            return self._no_nvml
        import pynvml
        handle = self._nvml
        try:
            pynvml.nvmlDeviceGetTotalEnergyConsumption(handle)
        except pynvml.NVMLError as exc:
            return f"the driver has no total-energy counter for this GPU ({exc})"
        return lambda: pynvml.nvmlDeviceGetTotalEnergyConsumption(handle) / 1e3

    def describe(self) -> dict[str, str]:
        torch = self.torch
        import numpy
        lines = {}
        if self.device == "cuda":
            p = torch.cuda.get_device_properties(torch.cuda.current_device())
            lines["gpu"] = (f"{p.name}, {p.multi_processor_count} SMs, "
                            f"{p.total_memory / 2**30:.0f} GiB, compute capability "
                            f"{p.major}.{p.minor}")
            lines["gpu driver and link"] = _link(self._nvml, self._no_nvml)
        else:
            lines["gpu"] = "none: --device cpu, the CPU stands in for the device"
        lines["torch threads"] = str(torch.get_num_threads())
        lines["libraries"] = (f"torch {torch.__version__} (CUDA {torch.version.cuda or 'none'})"
                              f", numpy {numpy.__version__}, Python "
                              f"{platform.python_version()}")
        lines["fp32 matmul precision"] = torch.get_float32_matmul_precision()
        return lines


def _nvml_handle(torch) -> tuple:
    """(NVML's handle of torch's current device, None), matched by PCI bus id, or (None,
    why there is none)."""
    try:
        import pynvml
    except ImportError:
        return None, "pynvml (nvidia-ml-py) is not installed"
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        return None, f"NVML is not usable ({exc})"
    p = torch.cuda.get_device_properties(torch.cuda.current_device())
    try:                  # CUDA and NVML may number the GPUs differently: match the bus
        return pynvml.nvmlDeviceGetHandleByPciBusId(
            f"{p.pci_domain_id:08x}:{p.pci_bus_id:02x}:{p.pci_device_id:02x}.0"), None
    except (AttributeError, TypeError, ValueError, pynvml.NVMLError):
        pass
    try:
        return pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device()), None
    except pynvml.NVMLError as exc:
        return None, f"NVML has no handle for this GPU ({exc})"


def _link(handle, no_nvml: str | None) -> str:
    """Driver and PCIe link (current and maximum generation and width) from NVML, else
    nvidia-smi, else why not."""
    if handle is not None:
        import pynvml
        try:
            driver = pynvml.nvmlSystemGetDriverVersion()
            return (f"driver {driver if isinstance(driver, str) else driver.decode()}, PCIe "
                    f"gen {pynvml.nvmlDeviceGetCurrPcieLinkGeneration(handle)} "
                    f"x{pynvml.nvmlDeviceGetCurrPcieLinkWidth(handle)} now (max gen "
                    f"{pynvml.nvmlDeviceGetMaxPcieLinkGeneration(handle)} "
                    f"x{pynvml.nvmlDeviceGetMaxPcieLinkWidth(handle)}; NVML)")
        except pynvml.NVMLError:
            pass
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return f"unknown ({no_nvml or 'NVML failed'}; no nvidia-smi)"
    query = ("driver_version,pcie.link.gen.current,pcie.link.width.current,"
             "pcie.link.gen.max,pcie.link.width.max")
    run = subprocess.run([smi, f"--query-gpu={query}", "--format=csv,noheader", "-i", "0"],
                         capture_output=True, text=True, timeout=30)
    fields = [f.strip() for f in run.stdout.split(",")]
    if run.returncode != 0 or len(fields) != 5:
        return f"unknown (nvidia-smi: {run.stderr.strip()[:100] or 'no answer'})"
    return (f"driver {fields[0]}, PCIe gen {fields[1]} x{fields[2]} now (max gen {fields[3]} "
            f"x{fields[4]}; nvidia-smi, GPU 0)")
