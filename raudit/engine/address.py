"""Whether anything answers at ``RAY_ADDRESS``, asked before any work.

Ray's own connect to a dead address retries for minutes (a warning every few seconds),
and by then raudit had taken the results folder's lock and written its manifest. One TCP
connect with a short timeout tells a dead or mistyped address apart before that; a live
port that is not a Ray head is left to Ray's own error.
"""

from __future__ import annotations

import socket

from raudit.errors import ConfigError

TIMEOUT_S = 5.0


def why_unreachable(address: str, timeout_s: float = TIMEOUT_S) -> str | None:
    """Why a TCP connect to ``address`` (``host:port`` or ``ray://host:port``) fails, or
    None when it succeeds or the address names no port (``auto``: Ray looks it up)."""
    host, sep, port = address.split("://", 1)[-1].rstrip("/").rpartition(":")
    if not sep or not port.isdigit() or not host:
        return None
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
    except socket.timeout:
        return f"no answer within {timeout_s:g} s"
    except OSError as exc:
        return exc.strerror or type(exc).__name__
    return None


def check(address: str | None) -> None:
    """ConfigError, in one line, when nothing answers at ``address`` (RAY_ADDRESS)."""
    if not address:
        return
    why = why_unreachable(address)
    if why is not None:
        raise ConfigError(f"RAY_ADDRESS={address}: nothing answers there ({why}); start the "
                          "cluster or fix the address, or unset RAY_ADDRESS to run on this machine")
