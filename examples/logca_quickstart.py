"""Which crypto accelerator pays off for a 1 KiB message? Run: python examples/logca_quickstart.py"""

from accelperf.logca import all_presets

for model in all_presets():
    if model.name.endswith("/aes"):
        g1 = model.g1()
        verdict = "pays off" if model.speedup(1024) > 1 else "slower than the host"
        print(f"{model.name:22s} speedup at 1 KiB: {float(model.speedup(1024)):8.3g}  "
              f"({verdict}); break-even at {g1.root:.4g} B")
