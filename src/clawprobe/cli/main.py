"""The ``clawprobe`` command line: argument parsing, the front-door checks of operator input, dispatch.

Headless commands (``check``, ``bundle``, ``replay``, ``schema``, ``canary``, ``walk``) never import textual; the
dashboard (no sub-command, ``demo``, ``--replay``) imports it lazily. Bad input ends with a clear message
and exit 3 (Nagios UNKNOWN), never a traceback — usage errors included (argparse's own default is 2,
which monitoring reads as CRITICAL).

Shared by the command modules (``clawprobe.cli.*``): :func:`preflight` (an explicit state dir / config must exist, ``--agent``
must name an agent OpenClaw knows), :func:`emit` / :func:`warn` (every line printed goes through
``clawprobe.core.report.printable``; a closed pipe — ``clawprobe … | head -1`` — keeps the command's exit code and
prints no "Exception ignored" noise; a closed stdout is read as one, and stdout refusing the output — a full disk —
is exit 3 with the reason on stderr, never the verdict's code for a report that was not written).
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Mapping, MutableMapping
from typing import NoReturn, TextIO

from clawprobe.core import __version__
from clawprobe.core.verdicts import EXIT_CANNOT_RUN

EXIT_INTERRUPTED = 128 + signal.SIGINT  #: 130: stopped by Ctrl-C (SIGINT), every command, the dashboard too
COLOR_CHOICES = ("auto", "always", "never")


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors exiting 3 (UNKNOWN) instead of 2 (CRITICAL)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_CANNOT_RUN, f"{self.prog}: error: {message}\n")


def _color_options(p: argparse.ArgumentParser) -> None:
    """``--color`` / ``--no-color`` on a sub-command that paints (``clawprobe demo --color always``); unset
    there, the global option's value stands (``clawprobe --color always demo``)."""
    p.add_argument("--color", choices=COLOR_CHOICES, default=argparse.SUPPRESS,
                   help="colour: auto (default), always or never (same as the global option)")
    p.add_argument("--no-color", action="store_const", const="never", dest="color", default=argparse.SUPPRESS,
                   help="same as --color never")


def _scenario_words() -> list[str]:
    """What ``demo --scenario`` completes to: each scenario's number (as ``demo --list`` prints it) and name."""
    from clawprobe.tui.demo import names

    every = names()
    return [str(i) for i in range(1, len(every) + 1)] + every


def _complete_scenarios(parser: argparse.ArgumentParser) -> None:
    """Attach the scenario words to ``demo --scenario`` for shtab (bash: a function in the script's preamble,
    zsh: a word list) and for the fish lines (``complete`` key ``fish``)."""
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    action = next(a for a in subs.choices["demo"]._actions if "--scenario" in a.option_strings)
    words = " ".join(_scenario_words())
    action.complete = {  # shtab reads this attribute
        "bash": "_clawprobe_scenarios", "zsh": f"({words})", "fish": words,
        "preamble": {"bash": f'_clawprobe_scenarios() {{\n  compgen -W "{words}" -- "$1"\n}}\n'},
    }


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="clawprobe",
        description="Is this OpenClaw agent's memory search really healthy? (QMD or builtin)",
        epilog="Exit codes: 0 healthy · 1 warning (stale_index, vector_not_ready, keyword_only, scope_denied) · "
        "2 failure · 3 unverified, could not run, or a usage error. Several agents: the worst.",
    )
    p.add_argument("-V", "--version", action="store_true", help="print versions and exit")
    p.add_argument("--color", choices=COLOR_CHOICES, default="auto",
                   help="colour: auto (default), always or never; NO_COLOR in the environment always wins")
    p.add_argument("--no-color", action="store_const", const="never", dest="color", help="same as --color never")
    p.add_argument("--agent", help="agent id (default: all agents); must be one OpenClaw knows")
    p.add_argument("--state-dir", help="OpenClaw state dir (default: $OPENCLAW_STATE_DIR or ~/.openclaw); "
                   "must exist")
    p.add_argument("--config", help="OpenClaw config file (default: as OpenClaw locates it); must exist")
    p.add_argument("--replay", metavar="FILE", help="show saved receipts in the dashboard (a receipt, check --json "
                   "output, or the history receipts.jsonl: the newest receipt per agent)")
    p.add_argument("--no-mouse", action="store_true", help="leave the mouse to the terminal (native text selection)")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    demo = sub.add_parser("demo", help="the dashboard on embedded scenarios (no OpenClaw needed)")
    demo.add_argument("--scenario", help="start on this scenario: its number in --list, its name or a unique part")
    demo.add_argument("--list", action="store_true", help="list the scenarios and exit")
    demo.add_argument("--no-mouse", action="store_true", dest="demo_no_mouse",
                      help="leave the mouse to the terminal (native text selection)")
    _color_options(demo)  # the dashboard paints: its colour options after the sub-command too

    rp = sub.add_parser("replay", help="diagnose saved receipts (receipt JSON, check --json output, history JSONL)")
    rp.add_argument("files", nargs="+", metavar="FILE", help="receipt files; every receipt in them is diagnosed")
    rp.add_argument("--json", action="store_true", help="print the JSON contract")
    rp.add_argument("--now", help="evaluate at this ISO time instead of each receipt's check time ('now' = the clock)")
    rp.add_argument("--textfile", metavar="FILE", help="also write the diagnoses as node_exporter textfile metrics "
                    "(as check --textfile; the directory must exist)")

    sc = sub.add_parser("schema", help="print the JSON Schema of the receipt (or the diagnosis, or the support bundle)")
    which = sc.add_mutually_exclusive_group()  # one schema per run: both flags are a usage error, not a silent pick
    which.add_argument("--diagnosis", action="store_true", help="print the diagnosis schema instead of the receipt's")
    which.add_argument("--bundle", action="store_true",
                       help="print the support bundle's schema instead of the receipt's")

    ck = sub.add_parser("check", help="probe the local install and print the diagnosis")
    ck.add_argument("--json", action="store_true", help="print the JSON contract (same as --format json)")
    ck.add_argument("--save", action="store_true", help="append the receipt to the history (user data dir)")
    ck.add_argument("--format", choices=["text", "json", "prometheus"], default=None,
                    help="output format (default: text; --textfile implies prometheus)")
    ck.add_argument("--accept-baseline", action="store_true", help="accept the current memory config as the baseline")
    ck.add_argument("--watch", type=float, metavar="N", default=None,
                    help="re-run the check every N seconds, printing each result (Ctrl-C ends it)")
    ck.add_argument("--no-openclaw", action="store_true", help="skip the slow openclaw CLI probes (fast probes only)")
    ck.add_argument("--agent", default=argparse.SUPPRESS, help="agent id (default: all agents)")
    ck.add_argument("--state-dir", default=argparse.SUPPRESS, help="OpenClaw state dir")
    ck.add_argument("--config", default=argparse.SUPPRESS, help="OpenClaw config file")
    ck.add_argument("--bundle", metavar="FILE", help="diagnose a support bundle (clawprobe bundle: the JSON or its "
                    ".tar.gz) instead of probing")
    ck.add_argument("--textfile", metavar="FILE", help="write Prometheus metrics to FILE atomically (node_exporter "
                    "textfile collector; implies --format prometheus; the directory must exist)")

    bd = sub.add_parser("bundle", help="write the evidence of one check as a redacted support bundle (JSON)")
    bd.add_argument("-o", "--output", metavar="FILE", help="write here (default: clawprobe-bundle-<UTC time>.json; "
                    "a FILE.tar.gz holds bundle.json and a README)")
    bd.add_argument("--no-openclaw", action="store_true", help="skip the slow openclaw CLI probes (fast probes only)")
    bd.add_argument("--agent", default=argparse.SUPPRESS, help="agent id (default: all agents)")
    bd.add_argument("--state-dir", default=argparse.SUPPRESS, help="OpenClaw state dir")
    bd.add_argument("--config", default=argparse.SUPPRESS, help="OpenClaw config file")

    cn = sub.add_parser("canary", help="plant, rotate or remove the synthetic canary")
    cn.add_argument("action", choices=["plant", "rotate", "remove", "show"])
    cn.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    cn.add_argument("--root", default=None, help="plant in this managed root (an extra path dir) instead of memory/")
    cn.add_argument("--script", default="auto",
                    help="also write a token in this script (Han, Thai, …; 'auto': the unspaced script the notes "
                         "use most, if any; 'none': Latin only)")
    cn.add_argument("--agent", default=argparse.SUPPRESS, help="this agent (default: the default agent)")
    cn.add_argument("--state-dir", default=argparse.SUPPRESS, help="OpenClaw state dir (same as the global option)")
    cn.add_argument("--config", default=argparse.SUPPRESS, help="OpenClaw config file (same as the global option)")

    wk = sub.add_parser("walk", help="the repair walkthrough as plain text")
    wk.add_argument("--json", action="store_true", help="print the walkthrough as JSON")
    wk.add_argument("--agent", default=argparse.SUPPRESS, help="only this agent (same as the global --agent)")
    wk.add_argument("--state-dir", default=argparse.SUPPRESS, help="OpenClaw state dir (same as the global option)")
    wk.add_argument("--config", default=argparse.SUPPRESS, help="OpenClaw config file (same as the global option)")
    p.set_defaults(_subparsers=sub.choices)  # name → sub-command parser, for the usage line of a conflict
    cp = sub.add_parser("completion", help="print a shell completion script (bash, zsh or fish)")
    cp.add_argument("shell", choices=["bash", "zsh", "fish"])
    return p


def completion_script(shell: str) -> str:
    """The completion script for ``shell`` (bash/zsh via ``shtab`` from the argparse tree; fish from the
    same tree: one ``complete`` line per sub-command and option)."""
    parser = _parser()
    _complete_scenarios(parser)
    if shell in ("bash", "zsh"):
        import shtab

        return shtab.complete(parser, shell=shell)
    lines = ["# clawprobe completion for fish: clawprobe completion fish > ~/.config/fish/completions/clawprobe.fish"]
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    names = " ".join(subs.choices)
    lines.append(f"complete -c clawprobe -f -n '__fish_use_subcommand' -a '{names}'")
    for act in parser._actions:
        for opt in act.option_strings:
            if opt.startswith("--"):
                lines.append(f"complete -c clawprobe -l {opt[2:]}")
    for name, sp in subs.choices.items():
        for act in sp._actions:
            for opt in act.option_strings:
                if opt.startswith("--") and opt != "--help":
                    words = getattr(act, "complete", {}).get("fish")  # a value list: -x (no files), -a (the words)
                    values = f" -x -a '{words}'" if words else ""
                    lines.append(f"complete -c clawprobe -n '__fish_seen_subcommand_from {name}' -l {opt[2:]}{values}")
            if act.choices and not act.option_strings:
                lines.append(f"complete -c clawprobe -f -n '__fish_seen_subcommand_from {name}' "
                             f"-a '{' '.join(act.choices)}'")
    return "\n".join(lines) + "\n"


def apply_color(choice: str, env: MutableMapping[str, str] | None = None) -> None:
    """``--color``: ``never`` sets ``NO_COLOR``; ``always`` sets ``FORCE_COLOR`` unless ``NO_COLOR`` is set
    (NO_COLOR always wins, https://no-color.org); ``auto`` leaves the environment alone."""
    target: MutableMapping[str, str] = os.environ if env is None else env
    if choice == "never":
        target["NO_COLOR"] = "1"
    elif choice == "always" and not target.get("NO_COLOR"):
        target["FORCE_COLOR"] = "1"


def _versions() -> str:
    import platform
    from importlib.metadata import PackageNotFoundError, version

    try:
        tv = version("textual")
    except PackageNotFoundError:
        tv = "not installed"
    return f"clawprobe {__version__} (textual {tv}, python {platform.python_version()})"


# --------------------------------------------------------------------------------------------------------
# shared by the command modules
# --------------------------------------------------------------------------------------------------------

_lost_output: list[str] = []  # why stdout refused the command's output (ENOSPC, EIO…), once a write failed
_closed_pipe: list[bool] = []  # the reader of stdout went away (``| head -1``), once a write saw it


def stdout_gone() -> bool:
    """Whether a write to stdout already failed — its reader went away (a closed pipe) or it refused the output
    (a full disk): a command that would keep printing (``check --watch``) stops instead of running on unseen."""
    return bool(_closed_pipe or _lost_output)


def _standard_streams() -> None:
    """Give a closed standard descriptor (``clawprobe check >&-``, ``2>&-``, ``<&-``) ``/dev/null``, and the
    ``None`` stream Python leaves for it a ``/dev/null`` text stream: output to a closed stdout is dropped like a
    closed pipe's (the exit code stays the command's), a closed stderr drops warnings instead of raising, and no
    file clawprobe opens later is handed descriptor 1 or 2 (where a write meant for stdout would land in it)."""
    for fd, flags in ((0, os.O_RDONLY), (1, os.O_WRONLY), (2, os.O_WRONLY)):
        try:
            os.fstat(fd)
        except OSError:
            try:
                null = os.open(os.devnull, flags)
            except OSError:
                continue
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
    for name, mode in (("stdin", "r"), ("stdout", "w"), ("stderr", "w")):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, mode, encoding="utf-8"))  # lives as long as the process


def _silence_stdout() -> None:
    """After a closed pipe: point fd 1 at /dev/null so the interpreter's final flush cannot fail (the
    Python docs' recipe for SIGPIPE-less programs)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except Exception:
        pass


def _fit(text: str, stream: TextIO) -> str:
    """``text`` with every character ``stream``'s encoding cannot hold as readable ASCII (``—`` → ``--``, ``≥`` →
    ``>=``: :mod:`clawprobe.core.ascii_text`; a name's undecodable byte stays ``\\xNN``)."""
    from clawprobe.core.ascii_text import WIDE

    encoding = getattr(stream, "encoding", None) or "utf-8"
    return text.encode(encoding, WIDE).decode(encoding)


def emit(text: str, file: TextIO | None = None, *, utf8: bool = False) -> bool:
    """Print ``text`` (plus a newline) to stdout or ``file``, through ``clawprobe.core.report.printable``, flushed.

    ``utf8=True`` (JSON, which RFC 8259 defines as UTF-8 whatever the locale) writes UTF-8 bytes to the
    stream's binary buffer; otherwise a character the stream's encoding cannot hold (``LC_ALL=POSIX``
    with ``PYTHONUTF8=0``, ``PYTHONIOENCODING=ascii``, a Latin-1 locale) is written as readable ASCII
    (:func:`_fit`) instead of raising. A closed pipe is not an error of the command: stdout is
    silenced and ``False`` returned, so the caller still returns its own exit code. Any other failure to write
    stdout (``ENOSPC``, ``EIO``) is recorded too: :func:`main` then exits 3 with the reason. Returns ``True``
    when written."""
    from clawprobe.core.report import printable

    out = file or sys.stdout
    line = printable(text) + "\n"
    buffer = getattr(out, "buffer", None) if utf8 else None
    if buffer is not None:
        return _written(out, lambda: (out.flush(), buffer.write(line.encode("utf-8")), buffer.flush()))
    return _written(out, lambda: (out.write(_fit(line, out)), out.flush()))


def _written(out: TextIO, write: Callable[[], object]) -> bool:
    """Run ``write`` (a write to ``out`` and its flush); ``True`` when it went through. On stdout a closed pipe
    (the reader went away) or a refusal (``ENOSPC``, ``EIO``, a stream closed under us: the output is lost, and
    :func:`_delivered` makes the exit code 3) silences stdout and returns ``False``; elsewhere they raise."""
    try:
        write()
    except BrokenPipeError:
        if out is sys.stdout:
            _closed_pipe.append(True)
            _silence_stdout()
        return False
    except (OSError, ValueError) as e:
        if out is not sys.stdout:
            raise
        _lost_output.append(getattr(e, "strerror", None) or str(e))
        _silence_stdout()
        return False
    return True


def warn(message: str, prefix: str | None = "clawprobe") -> None:
    """``prefix: message`` (or just ``message`` with ``prefix=None``) on stderr, control characters
    escaped; never raises for a closed stderr."""
    from clawprobe.core.report import printable

    line = printable(f"{prefix}: {message}" if prefix else message) + "\n"
    try:
        sys.stderr.write(_fit(line, sys.stderr))
        sys.stderr.flush()
    except (BrokenPipeError, OSError, ValueError):
        pass


def preflight(args: argparse.Namespace, env: Mapping[str, str] | None = None) -> str | None:
    """The front door of every command that probes an install (check, walk, canary, the live dashboard):
    why it must not run, or ``None``.

    0. An empty ``--state-dir`` / ``--config`` (``"$DIR"`` with ``DIR`` unset) is refused: it used to be dropped
       silently and the default install (``~/.openclaw``) probed and judged in its place.
    1. An explicit state dir (``--state-dir``, ``$OPENCLAW_STATE_DIR``) or config (``--config``,
       ``$OPENCLAW_CONFIG_PATH``) that does not exist is refused (``clawprobe.core.locate.missing_explicit``): a
       typo must not be probed as an empty install, and OpenClaw's CLI would create the directory.
    2. ``--agent`` must be an agent OpenClaw knows (``clawprobe.core.locate.check_agent_id`` over
       ``clawprobe.core.locate.known_agents``: configured ids, the default agent, ``<state>/agents/<id>/`` dirs), spelt
       so OpenClaw's normalization keeps it (``../x`` is refused, not rewritten to ``x``). With a config that
       does not load only the spelling is checked (the verdict will say ``config_invalid``); with no install
       at all the command's own "not installed" message is clearer, so membership is not checked.
       On success ``args.agent`` is replaced by the normalized id (``Main`` → ``main``).

    Reads only (``stat``, ``scandir``, the config file); writes nothing. ``env``: default ``os.environ``.
    """
    from clawprobe.core import locate

    for option in ("state_dir", "config"):  # `--state-dir "$DIR"` with DIR unset: not the default install
        given = getattr(args, option, None)
        if given is not None and not given.strip():
            return (f"--{option.replace('_', '-')} is empty (an unset variable?): give the path, or leave the option "
                    "out for the default; nothing probed")
    src = os.environ if env is None else env
    st = locate.state_dir(src, getattr(args, "state_dir", None))
    msg = locate.missing_explicit(st, "state dir")
    if msg:
        return f"{msg}: no OpenClaw install there, nothing probed"
    cp = locate.config_path(src, st.path, getattr(args, "config", None))
    msg = locate.missing_explicit(cp, "config")
    if msg:
        return f"{msg}; nothing probed"
    agent = getattr(args, "agent", None)
    if agent is None:
        return None
    known: list[str] | None = None
    try:
        from clawprobe.core.probes.config import read_config

        snap = read_config(cp.path, src, st.path)
        if snap.error is None and (snap.exists or os.path.isdir(st.path)):
            known = locate.known_agents(snap.tree, st.path)
    except Exception:
        known = None
    try:
        args.agent = locate.check_agent_id(agent, known)
    except locate.UnknownAgent as e:
        return str(e)
    return None


# --------------------------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------------------------

def _usage_error(parser: argparse.ArgumentParser, message: str) -> int:
    parser.print_usage(sys.stderr)
    warn(f"error: {message}")
    return EXIT_CANNOT_RUN


#: sub-command → the module whose ``run(args) -> exit code`` handles it
_COMMANDS: dict[str | None, str] = {"replay": "replay", "schema": "schema", "check": "check", "bundle": "bundle",
                                    "canary": "canary", "walk": "walk", "demo": "dashboard", None: "dashboard"}


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``clawprobe`` console script; returns the process exit code (never raises).

    Called as the program (``argv`` None: the console script, ``python -m clawprobe``), this process becomes
    the child subreaper first (:func:`clawprobe.core.reaper.become_subreaper`), so detached grandchildren of
    the commands it runs are killed with their run. A caller that passes ``argv`` (a test, an embedding
    program) keeps its own process-table semantics: orphans of *its* children still go to init. A Ctrl-C
    anywhere in it — also while it parses, or imports what a command needs — is :data:`EXIT_INTERRUPTED`."""
    try:
        return _main(argv)
    except KeyboardInterrupt:  # before or after a command ran (inside one: see _main)
        return EXIT_INTERRUPTED


def _delivered(code: int) -> int:
    """The command's exit code, or :data:`EXIT_CANNOT_RUN` (said on stderr) when stdout refused its output — a full
    disk (``check --json > report.json``), an I/O error: a truncated report must not carry a healthy exit code.
    A closed pipe is not this (the reader stopped on purpose)."""
    if not _lost_output:
        return code
    warn(f"cannot write the output to standard output ({_lost_output[0]}); the result was not delivered")
    _lost_output.clear()
    return EXIT_CANNOT_RUN


_UTF8_REEXEC = "_CLAWPROBE_UTF8_REEXEC"  # set for the re-executed process only: which stdio setting it added


def utf8_paths(environ: MutableMapping[str, str] | None = None) -> None:
    """Read file names as OpenClaw does — UTF-8 whatever the locale — by re-executing this program in Python's UTF-8
    mode (``-X utf8``) when the file-system encoding is anything else (``LC_ALL=POSIX PYTHONUTF8=0``, a Latin-1
    locale). Without it a non-ASCII path from the config (``/srv/wörk``) raised UnicodeEncodeError (ASCII) or named
    another file (Latin-1). The standard streams keep the locale's encoding (``PYTHONIOENCODING``, unless the
    operator set it), and the re-executed process removes what was added, so the programs it runs see the
    operator's environment. Returns only when no re-execution is needed or it failed (then nothing changes)."""
    env = os.environ if environ is None else environ
    if env.pop(_UTF8_REEXEC, None) == "io":
        env.pop("PYTHONIOENCODING", None)
    if sys.getfilesystemencoding().lower().replace("_", "-") in ("utf-8", "utf8") or sys.flags.utf8_mode:
        return
    orig = getattr(sys, "orig_argv", None)
    if not orig or not sys.executable:
        return
    child = dict(env)
    child[_UTF8_REEXEC] = "1"
    if "PYTHONIOENCODING" not in child and sys.stdout is not None:
        child["PYTHONIOENCODING"] = f"{sys.stdout.encoding}:{sys.stdout.errors or 'strict'}"
        child[_UTF8_REEXEC] = "io"
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, [sys.executable, "-X", "utf8", *orig[1:]], child)
    except (OSError, ValueError, AttributeError):
        return


def _main(argv: list[str] | None) -> int:
    _standard_streams()
    if argv is None:
        from clawprobe.core import reaper

        utf8_paths()

        reaper.become_subreaper()
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help (0) or a usage error (3, see _Parser)
        return e.code if isinstance(e.code, int) else (0 if e.code is None else EXIT_CANNOT_RUN)
    if args.version:
        emit(_versions())
        return _delivered(0)
    apply_color(getattr(args, "color", "auto") or "auto")
    if args.command == "completion":
        script = completion_script(args.shell)  # the script as is, not through printable
        _written(sys.stdout, lambda: (sys.stdout.write(script), sys.stdout.flush()))
        return _delivered(0)
    if args.command == "check":
        from clawprobe.cli.check import FormatConflict, output_format

        try:
            output_format(args)
        except FormatConflict as e:
            return _usage_error(args._subparsers.get("check", parser), str(e))
    if args.command == "canary":
        problem = preflight(args)  # the canary command locates the install itself; the front door is shared
        if problem:
            warn(problem, "clawprobe canary")
            return EXIT_CANNOT_RUN
    module = _COMMANDS[args.command]  # imported only now: check/replay/schema/walk never load textual
    headless = module != "dashboard"  # the dashboard handles SIGTERM/SIGHUP in the App
    previous = {sig: signal.signal(sig, _terminated) for sig in (signal.SIGTERM, signal.SIGHUP)} \
        if headless and _in_main_thread() else {}
    try:
        command: Callable[[argparse.Namespace], int] = importlib.import_module(f"clawprobe.cli.{module}").run
        return _delivered(command(args))
    except KeyboardInterrupt:  # clawprobe.core.proc.run killed the child it was waiting for
        return EXIT_INTERRUPTED
    except SystemExit as e:  # SIGTERM (cron's timeout, systemd) or SIGHUP (a lost SSH session): exit 128 + N
        return e.code if isinstance(e.code, int) else EXIT_CANNOT_RUN
    except BrokenPipeError:  # a print outside emit(): the command's result is unknown → UNKNOWN, quietly
        _silence_stdout()
        return EXIT_CANNOT_RUN
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _terminated(signum: int, _frame: object) -> NoReturn:
    """SIGTERM/SIGHUP as ``SystemExit(128 + N)``: the ``openclaw``/``qmd`` child being waited for is killed on the
    way out (``clawprobe.core.proc.run``), where the default action would leave it running in its own session."""
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    sys.exit(main())
