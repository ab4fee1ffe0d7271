"""The paper's two retrospective case studies (ISCA'17 §5.4) as data plus one function."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import invalid
from .presets import omitted, preset
from .regions import PAPER_RANGE, PARAMETERS, RegionAnalysis, optimization_regions


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
class CaseStudyResult:
    study: CaseStudy
    analyses: tuple[RegionAnalysis, ...]
    omitted: dict

    def cutoffs(self) -> list[dict]:
        """Per design: each parameter's cut-off in bytes, or None (absent / no boundary)."""
        rows = []
        for a in self.analyses:
            row = {"design": a.model.label}
            for p in PARAMETERS:
                r = a.regions[p]
                row[p] = {"present": r.present, "cutoff": r.cutoff, "from": r.start,
                          "to": r.end}
            row["bands"] = [b.to_dict() for b in a.bands]
            rows.append(row)
        return rows

    def to_dict(self) -> dict:
        return {"study": self.study.name, "title": self.study.title,
                "kernel": self.study.kernel, "designs": self.cutoffs(),
                "omitted": self.omitted,
                "factor": self.analyses[0].factor, "threshold": self.analyses[0].threshold}


def run_case_study(name: str, factor: float = 10.0, threshold: float = 0.2,
                   lo: float = PAPER_RANGE[0], hi: float = PAPER_RANGE[1]) -> CaseStudyResult:
    """Regions of every design of a case study, plus the designs the paper gives no row for."""
    if name not in CASE_STUDIES:
        raise invalid("case study", name, f"valid case studies are {', '.join(CASE_STUDIES)}")
    study = CASE_STUDIES[name]
    analyses = tuple(optimization_regions(preset(d, study.kernel), factor, threshold, lo, hi)
                     for d in study.designs)
    skipped = {d: omitted()[d] for d in study.missing}
    return CaseStudyResult(study=study, analyses=analyses, omitted=skipped)
