"""gpuledger's fleet simulator: the independent witness the pipeline is tested against.

It writes a landing zone (FOCUS bills, sacct exports, DCGM telemetry, trainer events, inventory), the
organisation config, and ground truth computed from its own state. It never imports the pipeline.
"""
from .simulate import simulate
from .workload import Knobs

__all__ = ["simulate", "Knobs"]
