"""A real one-node Slurm cluster for tests: munged, MariaDB, slurmdbd, slurmctld and slurmd from Debian's
packages (`make system-deps`), each started here as root with its own config in a temporary folder, on
127.0.0.1 ports picked free, and stopped again by `close()` (also when starting fails half-way).

No systemd and no files outside the folder: the daemons are told every path (key, socket, state,
spool, logs, pid files), and the Slurm clients reach this cluster through `env` (SLURM_CONF)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

DAEMONS = ("munged", "mungekey", "mariadbd", "mariadb-install-db", "slurmdbd", "slurmctld", "slurmd",
           "sacctmgr", "sbatch", "sacct", "scontrol", "scancel")
GPUS = 4
CPUS = 16


def missing_programs() -> list[str]:
    return [p for p in DAEMONS if shutil.which(p) is None and not Path("/usr/sbin", p).exists()]


def _which(name: str) -> str:
    return shutil.which(name) or str(Path("/usr/sbin", name))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SlurmCluster:
    def __init__(self, base: Path, name: str = "testc"):
        self.base, self.name = base, name
        self.node = socket.gethostname().split(".")[0]
        self.procs: list[tuple[str, subprocess.Popen]] = []
        self.env = dict(os.environ, SLURM_CONF=str(base / "slurm.conf"), TZ="UTC")
        for var in ("SLURM_TIME_FORMAT", "SQUEUE_FORMAT", "SACCT_FORMAT"):
            self.env.pop(var, None)

    # --- lifecycle --------------------------------------------------------------------------------

    def start(self) -> "SlurmCluster":
        try:
            self._munge()
            self._mariadb()
            self._slurmdbd()
            self._slurm_conf()
            self.sacctmgr("add", "cluster", self.name)
            self.sacctmgr("add", "account", "research", "Description=test", "Organization=test")
            self.sacctmgr("add", "user", "root", "Account=research")
            self._spawn("slurmctld", [_which("slurmctld"), "-D", "-i", "-f", str(self.base / "slurm.conf")])
            self._wait(lambda: self.run("scontrol", "ping", check=False).stdout.count("UP") > 0, "slurmctld")
            self._spawn("slurmd", [_which("slurmd"), "-D", "-f", str(self.base / "slurm.conf"), "-N", self.node])
            self._wait(self._node_idle, "slurmd (node idle)")
        except BaseException:
            self.close()
            raise
        return self

    def close(self) -> None:
        for name, proc in reversed(self.procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for name, proc in reversed(self.procs):
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.procs.clear()

    def __enter__(self) -> "SlurmCluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    def logs(self) -> str:
        """The tail of every daemon's log, for a failure message."""
        out = []
        for log in sorted(self.base.glob("*.log")):
            out.append(f"--- {log.name}\n" + "\n".join(log.read_text(errors="replace").splitlines()[-30:]))
        return "\n".join(out)

    # --- clients ----------------------------------------------------------------------------------

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        proc = subprocess.run([_which(args[0]), *args[1:]], env=self.env, capture_output=True, text=True,
                              timeout=60)
        if check and proc.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed ({proc.returncode}): {proc.stderr}{proc.stdout}")
        return proc

    def sacctmgr(self, *args: str) -> None:
        self.run("sacctmgr", "-i", *args)

    def sbatch(self, *args: str) -> str:
        """Submits a job; its JobID."""
        return self.run("sbatch", "--parsable", f"--chdir={self.base}", f"--output={self.base}/job-%j.out",
                        *args).stdout.strip().split(";")[0]

    # --- daemons ----------------------------------------------------------------------------------

    def _spawn(self, name: str, argv: list[str]) -> subprocess.Popen:
        log = (self.base / f"{name}.out.log").open("wb")
        proc = subprocess.Popen(argv, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        self.procs.append((name, proc))
        return proc

    def _wait(self, ready, what: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for name, proc in self.procs:
                if proc.poll() is not None:
                    raise RuntimeError(f"{name} exited ({proc.returncode}) while waiting for {what}\n{self.logs()}")
            try:
                if ready():
                    return
            except Exception:  # not up yet
                pass
            time.sleep(0.3)
        raise RuntimeError(f"{what} not ready after {timeout:.0f}s\n{self.logs()}")

    def _munge(self) -> None:
        d = self.base / "munge"
        d.mkdir(mode=0o755)  # clients need to reach the socket
        self.munge_socket = d / "munge.socket"
        key = d / "munge.key"
        subprocess.run([_which("mungekey"), "--create", f"--keyfile={key}"], check=True, capture_output=True)
        key.chmod(0o600)
        self._spawn("munged", [_which("munged"), "--foreground", "--force", f"--socket={self.munge_socket}",
                               f"--key-file={key}", f"--pid-file={d / 'munged.pid'}",
                               f"--log-file={self.base / 'munged.log'}", f"--seed-file={d / 'munged.seed'}"])
        self._wait(self.munge_socket.exists, "munged")

    def _mariadb(self) -> None:
        d = self.base / "mysql"
        self.db_port = _free_port()
        self.db_socket = self.base / "mysql.sock"
        subprocess.run([_which("mariadb-install-db"), f"--datadir={d}", "--user=root",
                        "--auth-root-authentication-method=normal", "--skip-test-db"],
                       check=True, capture_output=True)
        # no grant tables: slurmdbd logs in as root without a password, over 127.0.0.1 only
        self._spawn("mariadbd", [_which("mariadbd"), "--no-defaults", f"--datadir={d}", f"--socket={self.db_socket}",
                                 f"--port={self.db_port}", "--bind-address=127.0.0.1", "--user=root",
                                 "--skip-grant-tables", f"--pid-file={self.base / 'mariadbd.pid'}",
                                 f"--log-error={self.base / 'mariadbd.log'}", "--innodb-buffer-pool-size=64M"])
        self._wait(lambda: _connects(self.db_port), "mariadbd")

    def _slurmdbd(self) -> None:
        self.dbd_port = _free_port()
        conf = self.base / "slurmdbd.conf"
        conf.write_text("\n".join([
            "AuthType=auth/munge", f"AuthInfo=socket={self.munge_socket}",
            "DbdHost=localhost", "DbdAddr=127.0.0.1", f"DbdPort={self.dbd_port}", "SlurmUser=root",
            f"PidFile={self.base / 'slurmdbd.pid'}", f"LogFile={self.base / 'slurmdbd.log'}", "DebugLevel=info",
            "StorageType=accounting_storage/mysql", "StorageHost=127.0.0.1", f"StoragePort={self.db_port}",
            "StorageUser=root", "StorageLoc=slurm_acct_db", "",
        ]))
        conf.chmod(0o600)
        # slurmdbd reads slurmdbd.conf beside $SLURM_CONF (it has no -f)
        self._spawn("slurmdbd", [_which("slurmdbd"), "-D"])
        self._wait(lambda: _connects(self.dbd_port), "slurmdbd")

    def _slurm_conf(self) -> None:
        ctld, slurmd = _free_port(), _free_port()
        for sub in ("state", "spool"):
            (self.base / sub).mkdir()
        # Slurm 22.05 drops a GPU without a File ("Removing file-less GPU"): plain files stand in for
        # /dev/nvidiaN (nothing opens them: no cgroup device constraint here)
        (self.base / "dev").mkdir()
        for i in range(GPUS):
            (self.base / "dev" / f"nvidia{i}").touch()
        (self.base / "gres.conf").write_text(
            f"NodeName={self.node} Name=gpu Count={GPUS} File={self.base / 'dev'}/nvidia[0-{GPUS - 1}]\n")
        (self.base / "slurm.conf").write_text("\n".join([
            f"ClusterName={self.name}", f"SlurmctldHost={self.node}(127.0.0.1)",
            f"SlurmctldPort={ctld}", f"SlurmdPort={slurmd}", "SlurmUser=root", "SlurmdUser=root",
            "AuthType=auth/munge", "CredType=cred/munge",
            # cred_expire also delays a requeued job's next start (default 120 s)
            f"AuthInfo=socket={self.munge_socket},cred_expire=10",
            f"StateSaveLocation={self.base / 'state'}", f"SlurmdSpoolDir={self.base / 'spool'}",
            f"SlurmctldPidFile={self.base / 'slurmctld.pid'}", f"SlurmdPidFile={self.base / 'slurmd.pid'}",
            f"SlurmctldLogFile={self.base / 'slurmctld.log'}", f"SlurmdLogFile={self.base / 'slurmd.log'}",
            "SlurmctldDebug=info", "SlurmdDebug=info",
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "JobAcctGatherType=jobacct_gather/none",
            "MpiDefault=none", "SwitchType=switch/none",
            "SchedulerType=sched/builtin", "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core",
            "GresTypes=gpu", "ReturnToService=2",
            "AccountingStorageType=accounting_storage/slurmdbd", "AccountingStorageHost=localhost",
            f"AccountingStoragePort={self.dbd_port}", "AccountingStorageTRES=gres/gpu",
            # the munge socket for talking to slurmdbd (AuthInfo is for the cluster's own daemons)
            f"AccountingStoragePass={self.munge_socket}",
            "JobCompType=jobcomp/none",
            # a timed-out job is ended as soon as the limit checker sees it, and killed without a grace
            "OverTimeLimit=0", "KillWait=2", "MinJobAge=2", "InactiveLimit=0",
            # more CPUs than the machine has, so a test's jobs all run at once (their sleeps are not work)
            "SlurmdParameters=config_overrides",
            f"NodeName={self.node} NodeAddr=127.0.0.1 CPUs={CPUS} Gres=gpu:{GPUS} State=UNKNOWN",
            f"PartitionName=gpu Nodes={self.node} Default=YES MaxTime=INFINITE State=UP",
            "",
        ]))

    def _node_idle(self) -> bool:
        out = self.run("scontrol", "show", "node", self.node, check=False).stdout
        return "State=IDLE" in out


def _connects(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False
