"""The paper's two retrospective case studies (ISCA'17 §5.4) as data plus one function."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import invalid
from ..units import format_size
from .presets import omitted, preset
from .model import DEFAULT_RANGE
from .regions import (PARAMETERS, Band, ParameterRegion, RegionAnalysis,
                      optimization_regions)


@dataclass(frozen=True)
class CaseStudy:
    name: str
    title: str
    kernel: str
    designs: tuple[str, ...]
    missing: tuple[str, ...]      # designs of the paper's figure with no Table 5 row


CASE_STUDIES = {
    "crypto": CaseStudy("crypto", "SPARC crypto accelerators running AES (cf. ISCA'17 Fig. 10)",
                        "aes", ("ultrasparc-t2", "sparc-t3", "sparc-t4-engine",
                                "sparc-t4-instr"), ("pcie-crypto",)),
    "gpu": CaseStudy("gpu", "GPU memory interfaces running GEMM (cf. ISCA'17 Fig. 11)",
                     "gemm", ("discrete-gpu", "apu"), ("hsa-gpu",)),
}


@dataclass(frozen=True)
class DesignCutoffs:
    """One design's row of a case study: each parameter's region (with its cut-off) and the
    bands of bottlenecks along the granularity axis."""

    design: str
    regions: dict[str, ParameterRegion]
    bands: tuple[Band, ...]

    def to_dict(self) -> dict:
        row: dict = {"design": self.design}
        for p in PARAMETERS:
            r = self.regions[p]
            row[p] = {"present": r.present, "cutoff": r.cutoff, "from": r.start, "to": r.end}
        row["bands"] = [b.to_dict() for b in self.bands]
        return row

    def cells(self, size=format_size) -> list[str]:
        """The table row: design, the four cut-offs, the bands (CLI and report share it)."""
        return [self.design, *(self.regions[p].cutoff_text(size) for p in PARAMETERS),
                " | ".join(b.parameters or "none" for b in self.bands)]


CUTOFF_COLUMNS = ("design", *(f"{p} cut-off" for p in PARAMETERS), "bands")


@dataclass(frozen=True)
class CaseStudyResult:
    study: CaseStudy
    analyses: tuple[RegionAnalysis, ...]
    omitted: dict

    def cutoffs(self) -> tuple[DesignCutoffs, ...]:
        """Per design: each parameter's region and cut-off, and the bands."""
        return tuple(DesignCutoffs(a.model.label, dict(a.regions), a.bands)
                     for a in self.analyses)

    def to_dict(self) -> dict:
        return {"study": self.study.name, "title": self.study.title,
                "kernel": self.study.kernel, "designs": [c.to_dict() for c in self.cutoffs()],
                "omitted": self.omitted,
                "factor": self.analyses[0].factor, "threshold": self.analyses[0].threshold}


def run_case_study(name: str, factor: float = 10.0, threshold: float = 0.2,
                   lo: float = DEFAULT_RANGE[0], hi: float = DEFAULT_RANGE[1]) -> CaseStudyResult:
    """Regions of every design of a case study, plus the designs the paper gives no row for."""
    if name not in CASE_STUDIES:
        raise invalid("case study", name, f"valid case studies are {', '.join(CASE_STUDIES)}")
    study = CASE_STUDIES[name]
    analyses = tuple(optimization_regions(preset(d, study.kernel), factor, threshold, lo, hi)
                     for d in study.designs)
    skipped = {d: omitted()[d] for d in study.missing}
    return CaseStudyResult(study=study, analyses=analyses, omitted=skipped)
