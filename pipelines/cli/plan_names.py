"""The names a run plan types, checked before it is estimated (docs/plans.md#names-checked), and the team
`gpuledger plan` says the run is for, with where that came from.

- `gpu_model` and `dtype` against the GPU catalog (models/gpu_catalog.py): a GPU the catalog does not
  know, or a dtype it has no peak for, is an error unless the plan gives `peak_flops` — an estimate at an
  unknown speed is no estimate, and a typo (`H10`) is far likelier than a new GPU;
- `project` against the published ledger (marts.dim_projects) and the org config's projects: one that
  matches neither is a warning, and the plan is estimated as a new project — planning one must stay
  possible, and the estimate does not depend on the project's name (only its checkpoint default does,
  which falls back to every run's).

A plan names no team (the config's `teams:` owns projects) and no cluster, so neither is checked here.
"""

from __future__ import annotations

from models.gpu_catalog import PEAK_FLOPS, canonical_gpu_model
from pipelines.ingest.plans import MAX_PLAN_BYTES, PlanFile
from pipelines.lib.config import OrgConfig
from pipelines.lib.ledger_names import LedgerNames, config_projects
from pipelines.lib.names import unknown_name
from pipelines.lib.config.strict_yaml import load_yaml

CATALOG = "the GPU catalog (models/gpu_catalog.py)"


def check_plan_names(plan: PlanFile, text: str, file: str, cfg: OrgConfig,
                     ledger: LedgerNames | None) -> tuple[list[str], list[str]]:
    """(errors, warnings): a sentence each, naming the file, the key's line and what there is instead."""
    lines = load_yaml(text, max_bytes=MAX_PLAN_BYTES).key_lines  # read_plan has read it: it loads

    def at(key: str) -> str:
        line = lines.get((key,))
        return f"{file}:{line}: `{key}`" if line else f"{file}: `{key}`"

    errors, warnings = [], []
    dtype = plan.dtype or "bf16"
    model = canonical_gpu_model(plan.gpu_model)
    if plan.peak_flops is None and model is None:
        unknown = unknown_name("GPU model", plan.gpu_model, list(PEAK_FLOPS), CATALOG)
        errors.append(f"{at('gpu_model')}: {unknown} (a GPU outside it needs peak_flops: per GPU, FLOP/s, dense {dtype})")
    elif plan.peak_flops is None and dtype not in PEAK_FLOPS[model]:
        unknown = unknown_name("dtype", dtype, list(PEAK_FLOPS[model]), f"the GPU catalog's {model}")
        errors.append(f"{at('dtype')}: {unknown} (or give peak_flops: per GPU, FLOP/s, dense {dtype})")
    known = set(ledger.projects) if ledger else set()
    declared = config_projects(cfg)
    places = (["the ledger"] if ledger else []) + (["the org config"] if declared else [])
    if places and plan.project not in known | declared:
        unknown = unknown_name("project", plan.project, sorted(known | declared), " or ".join(places))
        warnings.append(f"{at('project')}: {unknown} (estimated as a new project)")
    return errors, warnings


def plan_team(project: str, cfg: OrgConfig, ledger: LedgerNames | None) -> tuple[str | None, str]:
    """The team of the plan's project and where it came from: the org config's `teams:`, else the team
    the ledger charged the project to lately, else none — never the project's own name, which the plan
    did not call a team (the mart, like the ledger, charges such a project to a team of its name)."""
    for team, spec in cfg.teams.items():
        if project in spec.projects:
            return team, f"org config teams.{team}.projects"
    teams = ledger.projects.get(project, ()) if ledger else ()
    if teams:
        return teams[0], f"marts.dim_projects (the team the ledger charged project {project} to lately)"
    return None, "none: no config names the project's team" + (", nor has the ledger charged it" if ledger else "")
