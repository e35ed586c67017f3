"""The analysis' files as the printed commands name them, safe for any path.

A command must run as printed whatever the data's paths hold: spaces, both quote kinds, ``$``,
glob characters, newlines, non-ASCII.  So shell words are quoted with :func:`shlex.quote` (a
relative path starting with ``-`` gets ``./`` so that no command reads it as an option); lists
of files travel NUL-separated (``find -print0``, ``read -d ''``) into a bash array, never as
the words of a ``$(...)`` or the lines of a temporary file; Python snippets get ``repr()``
literals and open each file by its path (no glob, no ``path:object`` syntax).

ROOT itself reads some characters of a file name as its own syntax: ``$`` starts an
environment variable, ``?`` URL options and ``#`` an anchor (``TSystem::ExpandPathName``,
``TUrl``).  Commands that hand such paths to ROOT (``hadd``, a ``TChain``) pass it symbolic
links with plain names instead, in a temporary directory that the command removes.
"""

from __future__ import annotations

import glob
import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

#: Characters ROOT reads as syntax in a file name.
ROOT_SPECIAL = frozenset("$?#")
#: What a command names when the inputs are not known (a template to fill in).
PLACEHOLDER = "DIR"


@dataclass(frozen=True)
class Inputs:
    """The inputs split as the dataset probe reads them: files named, and directories searched
    recursively for ``*.root``; ``links`` when ROOT needs them renamed (see the module)."""

    files: tuple[str, ...] = ()
    dirs: tuple[str, ...] = ()
    links: bool = False

    @property
    def placeholder(self) -> bool:
        return self.dirs == (PLACEHOLDER,) and not self.files


def inputs_of(inputs: Sequence[str], known: Sequence[str] = ()) -> Inputs:
    """The user's paths (files, directories, globs, ``~``) as :class:`Inputs`; ``known`` are
    file paths found below them (when known), checked too for characters ROOT reads as
    syntax.  Paths become absolute when links are needed (a link must point back)."""
    if not inputs:
        return Inputs(dirs=(PLACEHOLDER,))
    files: list[str] = []
    dirs: list[str] = []
    for raw in inputs:
        path = os.path.expanduser(raw)
        if glob.has_magic(path) and not os.path.lexists(path):  # as the probe expands it
            for m in sorted(glob.glob(path, recursive=True)):
                (dirs if os.path.isdir(m) else files).append(m)
        else:
            (dirs if os.path.isdir(path) else files).append(path)
    if not files and not dirs:  # nothing there any more: name them as given
        files = [os.path.expanduser(p) for p in inputs]
    links = any(ROOT_SPECIAL & set(p) for p in (*files, *dirs, *known))
    if links:
        files = [p if "://" in p else os.path.abspath(p) for p in files]
        dirs = [os.path.abspath(p) for p in dirs]
    return Inputs(tuple(dict.fromkeys(files)), tuple(dict.fromkeys(dirs)), links)


def word(path: str) -> str:
    """``path`` as one shell word."""
    if path == PLACEHOLDER:
        return path
    if path.startswith("-"):
        path = "./" + path
    return shlex.quote(path)


def words(paths: Sequence[str]) -> str:
    return " ".join(word(p) for p in paths)


def find_root(ins: Inputs, action: str = "-print0") -> str:
    """``find`` over the directories' ``*.root`` (recursive, following links: as the probe)."""
    return f"find -L {words(ins.dirs)} -name '*.root' -type f {action}"


def stream(ins: Inputs) -> str:
    """A shell pipeline writing the inputs' ROOT files NUL-separated: the files named, then
    the directories' (sorted)."""
    parts = []
    if ins.files:
        parts.append(f"printf '%s\\0' {words(ins.files)}")
    if ins.dirs:
        parts.append(f"{find_root(ins)} | sort -z")
    return parts[0] if len(parts) == 1 else "{ " + "; ".join(parts) + "; }"


def files_array(ins: Inputs) -> list[str]:
    """Bash lines (inside a subshell) that fill the array ``files`` with the inputs' ROOT
    files, or with links to them under plain names when ROOT needs them (removed on exit)."""
    if not ins.dirs and not ins.links:
        return [f"files=({words(ins.files)})"]
    if not ins.links:
        return ["files=()",
                f"while IFS= read -r -d '' f; do files+=(\"$f\"); done < <({stream(ins)})",
                "[ ${#files[@]} -gt 0 ] || { echo 'no ROOT files found' >&2; exit 1; }"]
    return ["links=$(mktemp -d) || exit  # ROOT reads $, ? and # in a file name as syntax",
            "trap 'rm -rf \"$links\"' EXIT",
            "files=()",
            "while IFS= read -r -d '' f; do",
            '  l="$links/${#files[@]}.root"; ln -s "$f" "$l" || exit; files+=("$l")',
            f"done < <({stream(ins)})",
            "[ ${#files[@]} -gt 0 ] || { echo 'no ROOT files found' >&2; exit 1; }"]


def subshell(lines: Sequence[str]) -> str:
    """The lines as one bash subshell (its variables, ``exit`` and trap stay inside)."""
    return "(\n" + "\n".join("  " + line for line in lines) + "\n)"


def hadd_all(ins: Inputs, options: str, output: str) -> str:
    """``hadd OPTIONS OUTPUT`` over every ROOT file of the inputs, as one command."""
    if not ins.dirs and not ins.links:
        return f"hadd {options} {word(output)} {words(ins.files)}"
    return subshell([*files_array(ins), f'hadd {options} {word(output)} "${{files[@]}}"'])


def hadd_groups(ins: Inputs, options: str, per_output: int, prefix: str = "merged_") -> str:
    """``hadd`` of the inputs' ROOT files, ``per_output`` at a time, into ``merged_000.root``,
    ``merged_001.root``, ... in the current directory; it stops at the first failure."""
    k = max(1, per_output)
    return subshell([
        *files_array(ins),
        f"for ((i = 0; i < ${{#files[@]}}; i += {k})); do",
        f"  printf -v out '{prefix}%03d.root' $((i / {k}))",
        f'  hadd {options} "$out" "${{files[@]:i:{k}}}" || exit',
        "done"])


def python_files(ins: Inputs) -> str:
    """A Python expression for the inputs' ROOT files (a list of str), as the probe finds
    them: the files named, then the directories' ``*.root`` below, following links (``os``
    needs importing)."""
    named = repr(list(ins.files))
    if not ins.dirs:
        return named
    found = (f"sorted(os.path.join(top, n) for d in {list(ins.dirs)!r} "
             "for top, _, names in os.walk(d, followlinks=True) "
             "for n in names if n.endswith('.root'))")
    return found if not ins.files else f"{named} + {found}"
