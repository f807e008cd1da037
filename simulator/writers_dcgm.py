"""DCGM exporter samples: telemetry/dcgm/day=<YYYY-MM-DD>/<hostname>.parquet, one file per node-day.

Long format, one row per (sample time, GPU, metric), rows ordered by timestamp, then gpu, then metric (in
METRICS order). Samples every 30 s at :00 and :30 for all 8 GPUs; a sample at t describes the GPU over
[t, t+30). Telemetry outages and short dropped scrapes (1–2 samples) write no rows at all for the node.
Values are drawn per phase kind from ranges that keep the idle rule unambiguous: zero kinds have GPU_UTIL
exactly 0 and SM_ACTIVE < 0.01; every working kind has GPU_UTIL >= 5 and SM_ACTIVE >= 0.06, and is either
below the 0.25 low-activity line in every sample (SAVE, LIGHT) or at 0.30 and above (TRAIN, EVAL).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .fleet import GPU_SPECS, Node
from .jobs import SAMPLE_S, TRAIN

METRICS = ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
           "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_FB_USED")
# the energy counter (mJ since the driver loaded), written for the nodes asked for it
ENERGY = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"
SCHEMA = pa.schema([
    ("timestamp", pa.timestamp("us", tz="UTC")), ("hostname", pa.string()), ("gpu", pa.int32()),
    ("UUID", pa.string()), ("modelName", pa.string()), ("metric", pa.string()), ("value", pa.float64()),
    ("hpc_job", pa.string()),
])
N_SAMPLES = 86400 // SAMPLE_S

# per phase kind (NONE, STARTUP, TRAIN, SAVE, IDLE, EVAL, LIGHT, TEARDOWN): (low, high) of a uniform draw
UTIL = np.array([(0, 0), (0, 0), (90, 100), (10, 45), (0, 0), (40, 100), (5, 70), (0, 0)], dtype=float)
# SAVE and LIGHT stay below the 0.25 low-activity line, TRAIN and EVAL above it
SM = np.array([(0, 0), (0, 0.008), (0.5, 0.8), (0.10, 0.22), (0, 0.009), (0.30, 0.6), (0.06, 0.22), (0, 0.005)])
TENSOR = np.array([(0, 0), (0, 0), (0, 0), (0, 0.02), (0, 0), (0.05, 0.35), (0, 0.2), (0, 0)])
POWER = np.array([(0, 0.02), (0.03, 0.1), (0.7, 0.95), (0.15, 0.3), (0.01, 0.05), (0.3, 0.8), (0.1, 0.5),
                  (0.02, 0.06)])
# share of the job's resident memory in use; NONE stays at 0
FB = np.array([(0, 0), (0.05, 0.6), (0.97, 1.0), (0.97, 1.0), (0.97, 1.0), (0.9, 1.0), (0.5, 1.0), (0, 0.3)])


def _draw(table: np.ndarray, kind: np.ndarray, u: np.ndarray) -> np.ndarray:
    lo, hi = table[kind, 0], table[kind, 1]
    return lo + (hi - lo) * u


def short_gaps(kind: np.ndarray, holder: np.ndarray, present: np.ndarray, rate: float,
               rng: np.random.Generator) -> np.ndarray:
    """Drop a few runs of 1–2 scrapes (so samples stay <= 90 s apart) where nothing changes around them: a
    reader that holds the last sample across a gap of <= 90 s reconstructs exactly what happened."""
    n = int(rng.poisson(rate))
    if n == 0:
        return present
    # same[i]: sample i+1 looks exactly like sample i
    same = np.all((kind[:, 1:] == kind[:, :-1]) & (holder[:, 1:] == holder[:, :-1]), axis=0)
    present = present.copy()
    for _ in range(n):
        length = int(rng.integers(1, 3))
        # samples i-1 .. i+length identical and present, missing i .. i+length-1
        w = length + 1
        ok = np.convolve(same.astype(np.int32), np.ones(w, dtype=np.int32), mode="valid") == w   # start i-1
        pres = np.convolve(present.astype(np.int32), np.ones(w + 1, dtype=np.int32), mode="valid") == w + 1
        m = min(len(ok), len(pres))
        cand = np.flatnonzero(ok[:m] & pres[:m])
        cand = cand[(cand >= 1) & (cand + w < N_SAMPLES)]
        if len(cand) == 0:
            break
        i = int(cand[int(rng.integers(0, len(cand)))]) + 1
        present[i:i + length] = False
    return present


def write_node_day(path: Path, node: Node, day0: int, kind_s: np.ndarray, holder_s: np.ndarray,
                   present: np.ndarray, job_ids: list[str], mfu_by_key: np.ndarray, fb_by_key: np.ndarray,
                   rng: np.random.Generator, power_out: list | None = None,
                   energy_from_mj: np.ndarray | None = None, sm_out: list | None = None) -> tuple[int, int]:
    """Write one node-day; kind_s/holder_s are (8, 2880) samples. Returns (rows, samples). `power_out`, when
    given, receives (sample indices, power written (samples × GPUs)), for the energy truth; `sm_out` likewise
the SM activity written, for the under-use truth.
    `energy_from_mj`, when given (per GPU, the counter at the day's start; every sample present), adds the
    energy counter: at each sample the energy drawn before it, in whole mJ, from the power written (each
    sample's power held for its 30 s); it is updated in place to the counter at the day's end."""
    spec = GPU_SPECS[node.gpu_model]
    t_idx = np.flatnonzero(present)
    k = kind_s[:, t_idx].T.astype(np.intp)          # (T, 8)
    h = holder_s[:, t_idx].T                         # (T, 8)
    hk = np.maximum(h, 0)
    T = len(t_idx)
    u = rng.random((5, T, 8))
    vals = np.empty((T, 8, 5), dtype=np.float64)
    vals[:, :, 0] = np.round(_draw(UTIL, k, u[0]))
    vals[:, :, 1] = np.round(_draw(SM, k, u[1]), 6)
    tensor = _draw(TENSOR, k, u[2])
    train = k == TRAIN
    tensor[train] = np.minimum(mfu_by_key[hk[train]] * (1.05 + 0.2 * u[2][train]), 0.95)
    vals[:, :, 2] = np.round(tensor, 6)
    vals[:, :, 3] = np.round(spec["idle_w"] + _draw(POWER, k, u[3]) * (spec["max_w"] - spec["idle_w"]), 3)
    fb = _draw(FB, k, u[4]) * np.where(h >= 0, fb_by_key[hk], 0.0)
    vals[:, :, 4] = np.round(fb)
    if power_out is not None:
        power_out.append((t_idx, vals[:, :, 3].copy()))
    if sm_out is not None:          # the SM activity written, for the under-use truth (efficiency.py)
        sm_out.append((t_idx, vals[:, :, 1].copy()))
    metrics = METRICS
    if energy_from_mj is not None:
        assert T == N_SAMPLES, "the energy counter is written for nodes with every sample only"
        drawn = np.cumsum(vals[:, :, 3] * SAMPLE_S * 1000, axis=0)            # mJ by the end of each sample
        before = np.vstack([np.zeros((1, 8)), drawn[:-1]])
        vals = np.concatenate([vals, (energy_from_mj + np.round(before))[:, :, None]], axis=2)
        energy_from_mj += np.round(drawn[-1])
        metrics = METRICS + (ENERGY,)
    m = len(metrics)

    n_rows = T * 8 * m
    ts_us = (day0 + t_idx.astype(np.int64) * SAMPLE_S) * 1_000_000
    gpu = np.tile(np.repeat(np.arange(8, dtype=np.int32), m), T)
    metric = np.tile(np.arange(m, dtype=np.int32), T * 8)
    keys = np.unique(h[h >= 0])
    local = np.searchsorted(keys, hk).astype(np.int32)
    job_idx = np.repeat(local.ravel(), m)
    job_mask = np.repeat((h < 0).ravel(), m)
    zeros = np.zeros(n_rows, dtype=np.int32)
    table = pa.Table.from_arrays([
        pa.array(np.repeat(ts_us, 8 * m), type=pa.timestamp("us", tz="UTC")),
        pc.take(pa.array([node.hostname]), zeros),
        pa.array(gpu, type=pa.int32()),
        pc.take(pa.array(list(node.uuids)), gpu),
        pc.take(pa.array([node.gpu_model]), zeros),
        pc.take(pa.array(list(metrics)), metric),
        pa.array(vals.ravel()),
        pc.take(pa.array([job_ids[int(x)] for x in keys], type=pa.string()), pa.array(job_idx, mask=job_mask)),
    ], schema=SCHEMA)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, compression="zstd", compression_level=3, use_dictionary=True,
                   write_statistics=True)
    return n_rows, T * 8
