"""Find the ROOT files behind the user's paths: files, directories (recursive) and globs;
remote ``root://`` files, directories and globs, and ``http(s)://`` files (:mod:`.remote`).

Never raises for bad input: every path that cannot be used becomes a :class:`ProbeError` with a
one-line cause, and the rest are still found.  Directory symlinks are followed, but each real
directory is visited once, so a symlink loop is reported instead of recursed into forever.
"""

from __future__ import annotations

import errno
import glob
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass

from .results import ProbeError

ROOT_SUFFIX = ".root"
REMOTE_PREFIXES = ("root://", "xroot://", "http://", "https://", "s3://")


@dataclass(frozen=True)
class FoundFile:
    path: str
    size_bytes: int


@dataclass(frozen=True)
class Discovery:
    files: tuple[FoundFile, ...]
    errors: tuple[ProbeError, ...]


def os_error_cause(exc: OSError) -> str:
    """A short human cause for an OSError (no path, no traceback)."""
    if exc.errno == errno.ELOOP:
        return "symlink loop (too many levels of symbolic links)"
    if exc.errno == errno.ENOENT:
        return "no such file or directory"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.ENOTDIR:
        return "a path component is not a directory"
    return exc.strerror or type(exc).__name__


def is_remote(path: str) -> bool:
    return path.startswith(REMOTE_PREFIXES)


class _Walker:
    def __init__(self) -> None:
        self.files: dict[str, FoundFile] = {}
        self.errors: list[ProbeError] = []
        self._seen_dirs: set[tuple[int, int]] = set()

    def error(self, path: str, cause: str) -> None:
        self.errors.append(ProbeError(path=path, error=cause))

    def add_file(self, path: str, explicit: bool) -> None:
        try:
            st = os.stat(path)
        except OSError as exc:
            self.error(path, os_error_cause(exc))
            return
        if not stat.S_ISREG(st.st_mode):
            if explicit:
                self.error(path, "not a regular file")
            return
        real = os.path.realpath(path)
        if real not in self.files:
            self.files[real] = FoundFile(path=os.path.abspath(path), size_bytes=st.st_size)

    def walk(self, top: str) -> int:
        """Add every ``*.root`` below ``top``; return how many were found."""
        before = len(self.files)
        stack = [top]
        while stack:
            d = stack.pop()
            try:
                st = os.stat(d)
            except OSError as exc:
                self.error(d, os_error_cause(exc))
                continue
            key = (st.st_dev, st.st_ino)
            if key in self._seen_dirs:  # reached again through another link: already walked
                continue
            self._seen_dirs.add(key)
            try:
                with os.scandir(d) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError as exc:
                self.error(d, os_error_cause(exc))
                continue
            subdirs = []
            for entry in entries:
                full = os.path.join(d, entry.name)
                try:
                    is_dir = entry.is_dir(follow_symlinks=True)
                except OSError as exc:  # pragma: no cover - races only
                    self.error(full, os_error_cause(exc))
                    continue
                if is_dir:
                    if entry.is_symlink() and _points_to_ancestor(full, d):
                        self.error(full, "symlink loop (points to "
                                   f"{os.path.realpath(full)}, which contains it); skipped")
                        continue
                    subdirs.append(full)
                elif entry.name.endswith(ROOT_SUFFIX):
                    if entry.is_symlink() and not os.path.exists(full):
                        try:
                            os.stat(full)
                        except OSError as exc:
                            self.error(full, os_error_cause(exc))
                        continue
                    self.add_file(full, explicit=True)
            stack.extend(reversed(subdirs))
        return len(self.files) - before


def _points_to_ancestor(link: str, parent: str) -> bool:
    target = os.path.realpath(link)
    here = os.path.realpath(parent)
    return here == target or here.startswith(target.rstrip("/") + "/")


def discover(paths: Iterable[str]) -> Discovery:
    """Expand ``paths`` (files, directories, globs) into ROOT files, sorted by path."""
    walker = _Walker()
    for raw in paths:
        path = os.path.expanduser(str(raw))
        if is_remote(path):
            _add_remote(walker, str(raw))
            continue
        if glob.has_magic(path) and not os.path.lexists(path):  # an existing "[x]" is a name
            matches = sorted(glob.glob(path, recursive=True))
            if not matches:
                walker.error(path, "the pattern matches nothing")
            for m in matches:
                if os.path.isdir(m):
                    _walk_dir(walker, m)
                else:
                    walker.add_file(m, explicit=True)
            continue
        try:
            st = os.stat(path)
        except OSError as exc:
            walker.error(path, os_error_cause(exc))
            continue
        if stat.S_ISDIR(st.st_mode):
            _walk_dir(walker, path)
        else:
            walker.add_file(path, explicit=True)
    files = tuple(sorted(walker.files.values(), key=lambda f: f.path))
    return Discovery(files=files, errors=tuple(walker.errors))


def _add_remote(walker: _Walker, url: str) -> None:
    """A ``root://`` file, directory or glob, or an ``http(s)://`` file (see
    :func:`hep_advisor.probes.remote_files.list_remote`); URLs are kept as given (no realpath)."""
    from .remote_files import list_remote

    found, errors = list_remote(url)
    for u, cause in errors:
        walker.error(u, cause)
    for u, size in found:
        walker.files.setdefault(u, FoundFile(path=u, size_bytes=size))


def _walk_dir(walker: _Walker, path: str) -> None:
    n_errors = len(walker.errors)
    if walker.walk(path) == 0 and len(walker.errors) == n_errors:
        walker.error(path, "no ROOT files (*.root) in this directory")
