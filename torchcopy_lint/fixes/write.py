"""Writing a fixed file: what ``--fix`` does to the file system, and nothing more.

- A symbolic link is written through: its target gets the fixed text, the link stays a link.
- The file is replaced atomically (a temporary file in the same folder, then a
  rename) with its mode, owner and group, so a killed run leaves either the
  original or the fixed file, never a mix.
- A file with hard links, or whose owner this user cannot give to a new file,
  is rewritten in place instead (one write, then a truncate): a rename would
  split the links or take the file over. That is the one non-atomic case.
- A read-only file (no write bit) is left alone with a clear reason, also as root.
- Temporary files being written are tracked so that a worker stopped by a
  signal removes its own (:func:`remove_temporaries`).
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

_TEMPORARIES: set[str] = set()


class WriteRefused(Exception):
    """The fixed text was not written; the message says why (one line)."""


def remove_temporaries() -> None:
    """Remove temporary files this process is writing (called when a worker is told to stop)."""
    for temporary in list(_TEMPORARIES):
        try:
            os.unlink(temporary)
        except OSError:
            pass
        _TEMPORARIES.discard(temporary)


def write_fixed(path: Path, data: bytes) -> None:
    """Give the file behind ``path`` the content ``data``; raises WriteRefused."""
    target = Path(os.path.realpath(path))  # through symbolic links, to the file itself
    try:
        info = os.stat(target)
    except OSError as error:
        raise WriteRefused(f"cannot write the fixed file: {error.strerror or error}") from None
    if not stat.S_ISREG(info.st_mode):
        raise WriteRefused("not a regular file; left unchanged")
    if not info.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        raise WriteRefused("file is read-only; left unchanged (make it writable to fix it)")
    if not os.access(target, os.W_OK):
        raise WriteRefused("cannot write the fixed file: permission denied; left unchanged")
    try:
        if info.st_nlink > 1:
            _write_in_place(target, data)
        elif not _replace_atomically(target, data, info):
            _write_in_place(target, data)
    except OSError as error:
        raise WriteRefused(f"cannot write the fixed file: {error.strerror or error}; left unchanged") from None


def _replace_atomically(target: Path, data: bytes, info: os.stat_result) -> bool:
    """Replace ``target`` by a renamed temporary file; False (nothing changed) where its owner cannot be kept."""
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    _TEMPORARIES.add(temporary)
    try:
        with os.fdopen(handle, "wb") as stream:
            if (info.st_uid, info.st_gid) != (os.geteuid(), os.getegid()):
                try:
                    os.fchown(stream.fileno(), info.st_uid, info.st_gid)
                except PermissionError:
                    os.unlink(temporary)
                    return False
            os.fchmod(stream.fileno(), stat.S_IMODE(info.st_mode))
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, target)
        return True
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    finally:
        _TEMPORARIES.discard(temporary)


def _write_in_place(target: Path, data: bytes) -> None:
    """Overwrite ``target``'s own inode: one write of the whole text, then cut what is left of the old one."""
    descriptor = os.open(target, os.O_WRONLY)
    try:
        view = memoryview(data)
        written = 0
        while written < len(data):
            count = os.pwrite(descriptor, view[written:], written)
            if count <= 0:
                raise OSError(errno.EIO, "short write")
            written += count
        os.ftruncate(descriptor, len(data))
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
