"""MIG profiles: how much of its physical GPU each Multi-Instance GPU profile is, in compute slices.

A shared GPU's GPU-seconds and cost are split over its slices (docs/ledger.md#fractional-gpus). A slice
is weighed in *share units*: SHARE_UNITS_PER_GPU of them make one physical GPU. 7000 is divisible by 7
(A100/H100/H200/B200 have 7 compute slices), by 4 (A30 has 4) and by 1000 (a `gpu-fraction` of up to
three decimals), so every slice gpuledger reads is a whole number of units, and the units of a GPU's
slices add up to the GPU exactly.

A profile's compute slices are the leading `<n>g` of its name; the total is the GPU's slice count. The
catalog lists the profiles NVIDIA's MIG user guide defines (the `+me` media-engine variants take the same
compute); a profile that is not here is refused with its name, never guessed.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_EVEN, Decimal

SHARE_UNITS_PER_GPU = 7000

# profile -> (compute slices, compute slices of the whole GPU)
MIG_PROFILES: dict[str, tuple[int, int]] = {
    # A100 40GB
    "1g.5gb": (1, 7), "1g.5gb+me": (1, 7), "1g.10gb": (1, 7), "2g.10gb": (2, 7), "3g.20gb": (3, 7),
    "4g.20gb": (4, 7), "7g.40gb": (7, 7),
    # A100 80GB, H100 80GB
    "1g.10gb+me": (1, 7), "1g.20gb": (1, 7), "2g.20gb": (2, 7), "3g.40gb": (3, 7), "4g.40gb": (4, 7),
    "7g.80gb": (7, 7),
    # H100 94GB (NVL), H100 96GB (GH200)
    "1g.12gb": (1, 7), "1g.12gb+me": (1, 7), "1g.24gb": (1, 7), "2g.24gb": (2, 7), "3g.47gb": (3, 7),
    "4g.47gb": (4, 7), "7g.94gb": (7, 7), "3g.48gb": (3, 7), "4g.48gb": (4, 7), "7g.96gb": (7, 7),
    # H200 141GB
    "1g.18gb": (1, 7), "1g.18gb+me": (1, 7), "1g.35gb": (1, 7), "2g.35gb": (2, 7), "3g.71gb": (3, 7),
    "4g.71gb": (4, 7), "7g.141gb": (7, 7),
    # B200 180GB
    "1g.23gb": (1, 7), "1g.23gb+me": (1, 7), "1g.45gb": (1, 7), "2g.45gb": (2, 7), "3g.90gb": (3, 7),
    "4g.90gb": (4, 7), "7g.180gb": (7, 7),
    # A30 24GB: 4 compute slices
    "1g.6gb": (1, 4), "1g.6gb+me": (1, 4), "2g.12gb": (2, 4), "2g.12gb+me": (2, 4), "4g.24gb": (4, 4),
}

# The MIG profiles a GPU of each memory size (GB) can be cut into, one per compute size (the `+me`
# variants and the duplicate-compute larger-memory ones are left out: the smallest memory of each
# compute size is what a job that fits would ask for). NVIDIA's MIG user guide, supported profiles.
PROFILES_BY_GPU_MEMORY_GB: dict[int, tuple[str, ...]] = {
    40: ("1g.5gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"),
    80: ("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"),
    94: ("1g.12gb", "1g.24gb", "2g.24gb", "3g.47gb", "4g.47gb", "7g.94gb"),
    96: ("1g.12gb", "1g.24gb", "2g.24gb", "3g.48gb", "4g.48gb", "7g.96gb"),
    141: ("1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"),
    180: ("1g.23gb", "1g.45gb", "2g.45gb", "3g.90gb", "4g.90gb", "7g.180gb"),
    24: ("1g.6gb", "2g.12gb", "4g.24gb"),
}


def profile_memory_gb(profile: str) -> int:
    """The memory of a profile as its name gives it: `3g.40gb` → 40."""
    return int(re.fullmatch(r"\d+g\.(\d+)gb(?:\+me)?", profile.lower()).group(1))


# a MIG profile name: `3g.40gb`, `1g.10gb+me`; Slurm GRES types may prefix it (`a100_3g.40gb`,
# `nvidia_h100_80gb_hbm3_1g.10gb`)
MIG_NAME = r"\d+g\.\d+gb(?:\+me)?"
_PROFILE_AT_END = re.compile(rf"(?:^|[_-])({MIG_NAME})$", re.IGNORECASE)


def profile_of(name: str) -> str | None:
    """The MIG profile a resource or GRES type names (`3g.40gb` from `a100_3g.40gb`), or None when it
    names none (a whole-GPU type such as `h100`)."""
    m = _PROFILE_AT_END.search(name.strip())
    return m.group(1).lower() if m else None


def profile_units(profile: str) -> int | None:
    """Share units of one instance of the profile, or None for a profile the catalog does not know."""
    slices = MIG_PROFILES.get(profile.lower())
    if slices is None:
        return None
    return slices[0] * SHARE_UNITS_PER_GPU // slices[1]


def fraction_units(text: str) -> int | None:
    """Share units of a stated GPU fraction (`"0.5"` → 3500), kept to 1/7000 of a GPU (rounded half-even:
    any fraction of up to three decimals is exact); None unless it is a number in (0, 1]."""
    try:
        value = Decimal(text.strip())
    except (ArithmeticError, ValueError, AttributeError):
        return None
    if not value.is_finite() or not (0 < value <= 1):
        return None
    units = int((value * SHARE_UNITS_PER_GPU).quantize(Decimal(1), rounding=ROUND_HALF_EVEN))
    return units if units > 0 else None


def replica_units(replicas: int) -> int:
    """Share units of one of the `replicas` a GPU is time-sliced (or shared by MPS) into: 1/replicas of
    a GPU, kept to 1/7000 as a stated fraction is (2, 4, 5, 7 or 8 replicas are exact)."""
    units = fraction_units(str(Decimal(1) / Decimal(replicas)))
    if units is None:
        raise ValueError(f"{replicas} is not a number of replicas")
    return units
