"""Putting a finished folder in place of another as one step, safe against Ctrl-C, SIGTERM and failed deletions.

The standard library has ``os.replace`` (one atomic rename) but nothing that replaces a non-empty folder,
defers signals across several steps, or reports what a failed deletion left behind: hence this module.
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from complexir.layout.errors import LeftoverError, Terminated

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _main_thread() -> bool:
    # Python runs signal handlers in the main thread only, and only there may they be changed.
    return threading.current_thread() is threading.main_thread()


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated(signum)


def raise_on_sigterm() -> bool:
    """Make SIGTERM raise ``Terminated`` (a ``KeyboardInterrupt``) instead of killing the process outright, so
    that ``with`` and ``finally`` blocks clean up. Only over the default action and from the main thread;
    returns whether it was installed (then ``restore_sigterm`` undoes it)."""
    if not _main_thread() or signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
        return False
    signal.signal(signal.SIGTERM, _raise_terminated)
    return True


def restore_sigterm() -> None:
    if _main_thread() and signal.getsignal(signal.SIGTERM) is _raise_terminated:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextmanager
def signals_deferred() -> Iterator[None]:
    """SIGINT and SIGTERM arriving inside the block are held and acted on (by the previous handlers) when it
    ends, so the steps inside are never cut in two. Blocking the signals with ``pthread_sigmask`` would not
    do: the library thread pools (pyarrow's) would receive them instead and Python would still act at once."""
    if not _main_thread():
        yield
        return
    previous = {s: signal.getsignal(s) for s in _SIGNALS}
    previous = {s: h for s, h in previous.items() if h is not None}  # None: a handler not set from Python
    received: list[int] = []

    def hold(signum: int, frame: object) -> None:
        received.append(signum)

    for s in previous:
        signal.signal(s, hold)
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        if received:
            signal.raise_signal(received[0])


def sibling(path: Path, kind: str) -> Path:
    """A hidden temporary name beside ``path``: ``.<name>.<kind>-<pid>-<hex>`` (the pid tells a live
    process's folders from those a hard kill left behind)."""
    return path.parent / f".{path.name}.{kind}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


def remove_tree(path: Path) -> str | None:
    """Delete ``path`` (a folder, a file or a link); ``None`` when it is gone, else why it is not."""
    problems: list[str] = []

    def record(function: object, failed: str, error: BaseException | tuple) -> None:
        if isinstance(error, tuple):  # onerror passes sys.exc_info()
            error = error[1]
        problems.append(f"{failed}: {getattr(error, 'strerror', None) or error}")

    try:
        if path.is_symlink() or path.is_file():
            path.unlink()
        elif path.exists():
            shutil.rmtree(path, onerror=record)  # onexc is Python 3.12+; onerror works on 3.11 too
    except OSError as error:
        problems.append(f"{path}: {error.strerror or error}")
    if path.exists() or path.is_symlink():
        return "; ".join(problems[:3]) or "it still exists"
    return None


OLD = "old"


def replace_folder(new: Path, target: Path, check_replaceable: Callable[[Path], None]) -> None:
    """Move the finished folder ``new`` to ``target`` as one step; afterwards ``target`` is either ``new``,
    complete, or (on an error) what it was before, untouched.

    An existing ``target`` is first passed to ``check_replaceable`` (which raises to refuse), then renamed aside,
    ``new`` renamed into place, and the previous folder deleted. Signals that arrive meanwhile are acted on
    after it. If the previous folder cannot be deleted, ``LeftoverError`` names it (``target`` is then new).
    """
    with signals_deferred():
        old = None
        if target.exists() or target.is_symlink():
            check_replaceable(target)
            old = sibling(target, OLD)
            os.replace(target, old)
        try:
            os.replace(new, target)
        except BaseException as error:
            # any failure (an OSError, or a KeyboardInterrupt the deferral could not hold: outside the main
            # thread, or raised by a handler): never leave the user with no folder, put the previous one back
            if old is not None and not (target.exists() or target.is_symlink()):
                try:
                    os.replace(old, target)
                except OSError as restore_error:
                    raise OSError(getattr(error, "errno", None), f"could not move {new} to {target} ({error}), "
                                  f"nor put the previous folder back from {old} ({restore_error.strerror}): "
                                  "move it back by hand") from error
            raise
        if old is not None:
            problem = remove_tree(old)
            if problem:
                raise LeftoverError(old, f"{target} is the new build, but the previous folder, moved aside to "
                                    f"{old}, could not be deleted ({problem}); delete it by hand")


FileContent = str | bytes | Callable[[Path], object]


def _named(error: OSError, path: Path) -> OSError:
    """``error`` with ``path`` as its file name when it has none (a full disk fails a ``write``, which names no
    file): the CLI's one line then says which file could not be written."""
    if error.filename is not None:
        return error
    named = OSError(error.errno, error.strerror or str(error), str(path))
    named.__cause__ = error
    return named


def _write_one(temporary: Path, content: FileContent) -> None:
    if callable(content):
        content(temporary)  # e.g. matplotlib's savefig, given the temporary name to write
    elif isinstance(content, bytes):
        temporary.write_bytes(content)
    else:
        temporary.write_text(content, encoding="utf-8")


def write_files(contents: Mapping[Path, FileContent]) -> list[Path]:
    """Write several files as one step: each to a hidden temporary sibling (``content`` is text, bytes, or a
    function given the temporary path to write), and only when every one is complete, all renamed into place
    (signals held meanwhile). On any failure (a full disk, Ctrl-C) every temporary is removed and the files that
    were there before are untouched; an ``OSError`` names the file it failed on."""
    written: dict[Path, Path] = {}
    try:
        for path, content in contents.items():
            path = Path(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary = written[path] = sibling(path, "tmp")
            try:
                _write_one(temporary, content)
            except OSError as error:
                raise _named(error, path) from error
        with signals_deferred():
            for path, temporary in written.items():
                os.replace(temporary, path)
    finally:
        for temporary in written.values():
            temporary.unlink(missing_ok=True)
    return list(written)


def write_file(path: str | os.PathLike[str], content: FileContent) -> Path:
    """Write one file atomically (:func:`write_files`): a reader sees the previous file or the whole new one."""
    return write_files({Path(path): content})[0]
