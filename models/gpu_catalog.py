"""Reference catalogs: peak dense tensor FLOP/s per GPU model and dtype, and the GPUs of cloud
instance types. Dense figures (vendor datasheets headline sparse ones, twice as large).

Sources (published figures, cited by each line):
- A100 312 TFLOP/s bf16: NVIDIA A100 datasheet; torchtitan, nanoGPT and Lightning use 312e12.
- H100 SXM 989 / 1979 (bf16 / fp8), H100 PCIe 756 / 1513, H100 NVL 835 / ~1671: torchtitan
  `get_peak_flops`, Lightning `throughput.py`, llm.c `mfu.h`.
- H200 989 / 1979: same silicon clocks as H100 SXM (torchtitan).
- B200 2250 / 4500: torchtitan (2.25e15), NVIDIA HGX B200 spec for fp8.
- GB200 2500 / 5000 per GPU: torchtitan (2.5e15), vendor spec for fp8.
- L40S 362 / 733: torchtitan (362e12), vendor datasheet for fp8.
- MI300X 1307.4 / 2614.9: AMD Instinct MI300X spec (torchtitan rounds bf16 to 1300).
"""

from __future__ import annotations

import re

TFLOPS = 1e12

# canonical model -> dtype -> peak dense FLOP/s per GPU
PEAK_FLOPS: dict[str, dict[str, float]] = {
    "A100": {"bf16": 312 * TFLOPS, "fp16": 312 * TFLOPS},
    "H100 SXM": {"bf16": 989 * TFLOPS, "fp16": 989 * TFLOPS, "fp8": 1979 * TFLOPS},
    "H100 PCIe": {"bf16": 756 * TFLOPS, "fp16": 756 * TFLOPS, "fp8": 1513 * TFLOPS},
    "H100 NVL": {"bf16": 835 * TFLOPS, "fp16": 835 * TFLOPS, "fp8": 1671 * TFLOPS},
    "H200": {"bf16": 989 * TFLOPS, "fp16": 989 * TFLOPS, "fp8": 1979 * TFLOPS},
    "B200": {"bf16": 2250 * TFLOPS, "fp16": 2250 * TFLOPS, "fp8": 4500 * TFLOPS},
    "GB200": {"bf16": 2500 * TFLOPS, "fp16": 2500 * TFLOPS, "fp8": 5000 * TFLOPS},
    "L40S": {"bf16": 362 * TFLOPS, "fp16": 362 * TFLOPS, "fp8": 733 * TFLOPS},
    "MI300X": {"bf16": 1307.4 * TFLOPS, "fp16": 1307.4 * TFLOPS, "fp8": 2614.9 * TFLOPS},
}

# Board power (TDP, W) per canonical model: what a GPU draws at most, used for its energy only while a
# job holds it and no DCGM power reading exists (docs/ledger.md#energy-kwh-and-co2e). Vendor datasheets:
# A100 SXM 400 W; H100 SXM 700 W, PCIe 350 W, NVL 400 W; H200 SXM 700 W; B200 1000 W; GB200 1200 W
# per GPU; L40S 350 W; MI300X 750 W.
TDP_WATTS: dict[str, float] = {
    "A100": 400.0, "H100 SXM": 700.0, "H100 PCIe": 350.0, "H100 NVL": 400.0, "H200": 700.0,
    "B200": 1000.0, "GB200": 1200.0, "L40S": 350.0, "MI300X": 750.0,
}

# Memory per GPU (GB as the vendor names it; DCGM's FB_USED is read in MiB against GB × 1024) per
# canonical model, for the under-use lens (docs/ledger.md#under-use-a-lens-on-productive-time). Where a
# model comes in two sizes the name the node reports decides (`A100-SXM4-40GB`: 40); else the larger,
# which is what training clusters run: A100 80 GB, H100 SXM/PCIe 80 GB, H100 NVL 94 GB, H200 141 GB,
# B200 180 GB, GB200 186 GB, L40S 48 GB, MI300X 192 GB (vendor datasheets).
MEMORY_GB: dict[str, int] = {
    "A100": 80, "H100 SXM": 80, "H100 PCIe": 80, "H100 NVL": 94, "H200": 141, "B200": 180, "GB200": 186,
    "L40S": 48, "MI300X": 192,
}

# Order matters: the first pattern that matches wins, so GB200 is tried before B200, and the H100
# variants before plain H100 (a bare "H100 80GB HBM3" is the SXM part; PCIe cards say PCIe).
_PATTERNS: list[tuple[str, str]] = [
    (r"GB200", "GB200"),
    (r"B200", "B200"),
    (r"H200", "H200"),
    (r"H100.*NVL", "H100 NVL"),
    (r"H100.*PCIE", "H100 PCIe"),
    (r"H100", "H100 SXM"),
    (r"A100", "A100"),
    (r"L40S", "L40S"),
    (r"MI300X", "MI300X"),
]

# Cloud instance type -> (GPU model, GPUs per instance), for nodes known only from the bill.
INSTANCE_GPUS: dict[str, tuple[str, int]] = {
    "p5.48xlarge": ("H100 SXM", 8),
    "p5e.48xlarge": ("H200", 8),
    "p5en.48xlarge": ("H200", 8),
    "p4d.24xlarge": ("A100", 8),
    "p4de.24xlarge": ("A100", 8),
    "p6-b200.48xlarge": ("B200", 8),
    "a3-highgpu-8g": ("H100 SXM", 8),
    "a2-highgpu-8g": ("A100", 8),
    "Standard_ND96isr_H100_v5": ("H100 SXM", 8),
    "Standard_ND96asr_v4": ("A100", 8),
}


def gpu_model_patterns() -> list[tuple[str, str]]:
    """(regular expression on the upper-cased name, canonical model), first match wins."""
    return list(_PATTERNS)


def canonical_gpu_model(name: str | None) -> str | None:
    """'NVIDIA H100 80GB HBM3' → 'H100 SXM', 'NVIDIA GB200' → 'GB200'; None when nobody knows it."""
    if not name:
        return None
    upper = name.upper()
    for pattern, model in _PATTERNS:
        if re.search(pattern, upper):
            return model
    return None


def peak_flops(gpu_model: str | None, dtype: str | None) -> float | None:
    """Peak dense FLOP/s of one GPU for the dtype (bf16 when unsaid); None when unknown."""
    model = canonical_gpu_model(gpu_model)
    if model is None:
        return None
    return PEAK_FLOPS[model].get((dtype or "bf16").lower())
