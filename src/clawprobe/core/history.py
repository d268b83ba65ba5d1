"""Receipt history and accepted baselines, under clawprobe's own data dir (never OpenClaw's state).

Location: ``$CLAWPROBE_DATA_DIR``, else platformdirs' user data dir for ``clawprobe``
(``~/.local/share/clawprobe`` on Linux). Files: ``receipts.jsonl`` (one JSON object per saved receipt:
``{"saved_at", "state_dir", "agent_id", "verdict", "receipt"}``), bounded to :data:`MAX_RECORDS` records
and :data:`MAX_BYTES` bytes (oldest dropped); ``baselines.json`` (``{"<state dir>|<agent>": {"hash",
"accepted_at"}}``). Every write is atomic (temp file in the same dir + ``os.replace``) under an exclusive
``flock`` so two ``clawprobe check --save`` runs cannot interleave.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import stat
import tempfile
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path

import platformdirs

from clawprobe.core import stale_temps
from clawprobe.core.probes.fileinfo import open_regular_fd
from clawprobe.core.receipt import Receipt

MAX_RECORDS = 2000
MAX_BYTES = 20 * 1024 * 1024
HISTORY_FILE = "receipts.jsonl"
BASELINE_FILE = "baselines.json"


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """clawprobe's data dir: ``$CLAWPROBE_DATA_DIR`` of ``env`` (default: the process environment) or the
    platformdirs user data dir (not created here)."""
    override = (os.environ if env is None else env).get("CLAWPROBE_DATA_DIR")
    return Path(override).expanduser() if override else Path(platformdirs.user_data_dir("clawprobe", appauthor=False))


_KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a directory"))


class NotARegularFile(OSError):
    """The target of a write exists and is not a regular file (a symlink, FIFO, socket, device, directory):
    clawprobe never replaces it. ``str()`` is the operator's message."""

    def __str__(self) -> str:
        return str(self.strerror)


def replace_problem(path: str | os.PathLike[str], *, dir_fd: int | None = None, shown: str | None = None) -> str | None:
    """Why clawprobe must not replace ``path``, or ``None``: it exists and is not a regular file — a symbolic
    link (never followed), a FIFO, a socket, a character or block device, a directory. Only regular files are
    ever replaced (``--textfile /dev/null`` as root would otherwise replace ``/dev/null``). A missing path is
    fine. ``dir_fd``: ``path`` is relative to that open directory; ``shown``: the path named in the message
    (default ``path``). I/O: one ``lstat``; an ``lstat`` that fails for another reason is left to the write."""
    try:
        st = os.lstat(path, dir_fd=dir_fd)
    except OSError:
        return None
    if stat.S_ISREG(st.st_mode):
        return None
    kind = next((what for test, what in _KINDS if test(st.st_mode)), "not a regular file")
    return (f"refusing to replace {shown or os.fspath(path)}: it is {kind}, not a regular file "
            "(clawprobe only replaces regular files)")


def atomic_write(path: Path, text: str, *, mode: int | None = None, make_parents: bool = True) -> None:
    """Write ``text`` to ``path`` atomically: a temp file in the same directory, fsync, ``os.replace``.

    ``mode``: the new file's permission bits (e.g. ``0o644`` so node_exporter, another user, can read a
    metrics file); ``None`` keeps ``mkstemp``'s ``0o600`` (clawprobe's own data). ``make_parents=False``
    refuses a missing parent directory (``FileNotFoundError`` naming it) instead of creating it — for paths
    the operator typed. A target that exists and is not a regular file (:func:`replace_problem`) raises
    :class:`NotARegularFile` and is left untouched (checked before writing and again just before the
    replace). Raises ``OSError``; the temp file never survives a failure.
    """
    if make_parents:
        path.parent.mkdir(parents=True, exist_ok=True)
    elif not path.parent.is_dir():
        raise FileNotFoundError(2, f"the directory {path.parent} does not exist (clawprobe does not create it)")
    if problem := replace_problem(path):
        raise NotARegularFile(errno.EEXIST, problem)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=stale_temps.SUFFIX, dir=str(path.parent))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            fcntl.flock(f, fcntl.LOCK_EX)  # held while the temp file is ours: a sweep skips it (sweep_stale_temps)
            if mode is not None:
                os.fchmod(f.fileno(), mode)
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
            if problem := replace_problem(path):
                raise NotARegularFile(errno.EEXIST, problem)
            os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    directory.mkdir(parents=True, exist_ok=True)
    with os.fdopen(open_regular_fd(directory / ".lock", os.O_WRONLY | os.O_CREAT | os.O_APPEND), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def sweep_stale(directory: Path | None = None) -> list[Path]:
    """Remove the temp files an interrupted write of ``receipts.jsonl`` or ``baselines.json`` left in the data
    dir (``kill -9`` mid ``check --save``), under the same lock as the writes (:mod:`clawprobe.core.stale_temps`).
    Returns the paths removed; a missing data dir is not created (``[]``), and a lock that cannot be taken (a
    FIFO or a directory at ``.lock``) sweeps nothing (``[]``): the write that follows says why it failed."""
    d = directory or data_dir()
    if not d.is_dir():
        return []
    try:
        with _locked(d):
            return stale_temps.sweep(d, (HISTORY_FILE, BASELINE_FILE))
    except OSError:
        return []


def _read_lines(path: Path) -> list[str]:
    try:
        with os.fdopen(open_regular_fd(path, os.O_RDONLY), encoding="utf-8", errors="replace") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - MAX_BYTES))
            lines = f.read().splitlines()
    except OSError:
        return []
    return lines[1:] if size > MAX_BYTES else lines


def append(receipt: Receipt, verdict: str, state_dir: str, directory: Path | None = None,
           now: datetime | None = None) -> Path:
    """Append one receipt to the history (atomic rewrite, bounded). Returns the history file path."""
    d = directory or data_dir()
    path = d / HISTORY_FILE
    rec = {"saved_at": (now or datetime.now(UTC)).isoformat(), "state_dir": state_dir,
           "agent_id": receipt.agent_id, "verdict": verdict, "receipt": receipt.model_dump(mode="json")}
    line = json.dumps(rec, ensure_ascii=False, separators=(",", ":"))
    with _locked(d):
        lines = [x for x in _read_lines(path) if x.strip()] + [line]
        lines = lines[-MAX_RECORDS:]
        while len(lines) > 1 and sum(len(x) + 1 for x in lines) > MAX_BYTES:
            lines.pop(0)
        atomic_write(path, "\n".join(lines) + "\n")
    return path


def _key(state_dir: str, agent_id: str) -> str:
    return f"{os.path.normpath(state_dir)}|{agent_id}"


def read_baselines(directory: Path | None = None) -> tuple[dict, str | None]:
    """The accepted baselines (``baselines.json`` in the data dir) and why they were ignored, if they were:
    ``({}, None)`` when there is no file; ``({}, reason)`` when it cannot be read, is not UTF-8, is not
    JSON, is nested deeper than the parser reads (``RecursionError``) or is not a JSON object — each read
    as "no baseline", never an error. The reason names the file."""
    path = (directory or data_dir()) / BASELINE_FILE
    try:
        with os.fdopen(open_regular_fd(path, os.O_RDONLY), "rb") as f:
            data = json.loads(f.read().decode("utf-8"))
    except FileNotFoundError:
        return {}, None
    except UnicodeDecodeError as e:
        return {}, f"{path} is not UTF-8 text (byte {e.start}): read as no baseline"
    except RecursionError:
        return {}, f"{path} is nested too deeply to read: read as no baseline"
    except ValueError as e:
        return {}, f"{path} is not JSON ({e}): read as no baseline"
    except OSError as e:
        return {}, f"cannot read {path}: {e.strerror or e}: read as no baseline"
    if not isinstance(data, dict):
        return {}, f"{path} is not a JSON object: read as no baseline"
    return data, None


def load_baseline(state_dir: str, agent_id: str, directory: Path | None = None) -> str | None:
    """The accepted memory-config hash for (state dir, agent), or ``None`` (also when the file is unusable:
    :func:`read_baselines` says why)."""
    entry = read_baselines(directory)[0].get(_key(state_dir, agent_id))
    return entry.get("hash") if isinstance(entry, dict) and isinstance(entry.get("hash"), str) else None


def accept_baseline(state_dir: str, agent_id: str, config_hash: str, directory: Path | None = None,
                    now: datetime | None = None) -> Path:
    """Record ``config_hash`` as the accepted memory config of (state dir, agent) — atomic. An unusable
    file (:func:`read_baselines`) is replaced by one holding this baseline alone."""
    d = directory or data_dir()
    path = d / BASELINE_FILE
    with _locked(d):
        data = read_baselines(d)[0]
        data[_key(state_dir, agent_id)] = {"hash": config_hash, "accepted_at": (now or datetime.now(UTC)).isoformat()}
        atomic_write(path, json.dumps(data, indent=2, sort_keys=True) + "\n")
    return path
