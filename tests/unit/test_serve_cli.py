"""`gpuledger serve` refuses what would expose every team, before it binds anything."""

from __future__ import annotations

import hashlib
import subprocess
import sys

from tests.conftest import PROJECT_ROOT


def _serve(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipelines.cli", "serve", *args], cwd=PROJECT_ROOT, input=stdin,
                          capture_output=True, text=True, timeout=60)


def test_binding_beyond_loopback_without_tokens_is_refused_by_name(tmp_path):
    config = tmp_path / "gpuledger.yaml"
    config.write_text("teams:\n  ml: {projects: [p1]}\n")
    for host in ("0.0.0.0", "10.1.2.3", "::"):
        done = _serve("--host", host, "--config", str(config), "--warehouse", str(tmp_path / "none.duckdb"))
        assert done.returncode == 2
        assert f"no serve.tokens in the config, so it binds only to a loopback address, not {host}" in done.stderr


def test_a_token_is_hashed_from_standard_input_and_never_echoed():
    done = _serve("--hash-token", stdin="s3cret-token\n")
    assert done.returncode == 0 and done.stdout.strip() == hashlib.sha256(b"s3cret-token").hexdigest()
    assert "s3cret" not in done.stdout + done.stderr
    assert _serve("--hash-token", stdin="").returncode == 2
