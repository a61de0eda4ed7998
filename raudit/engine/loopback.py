"""A local Ray instance listens on loopback only; a cluster binds as its own config says.

Ray's daemons choose their interface from the node's IP: the GCS server, the raylet and
every worker's gRPC server listen on 127.0.0.1 when the node IP is 127.0.0.1 and on every
interface otherwise, and the runtime-env agent listens on the node IP. On Linux,
``ray.init(_node_ip_address="127.0.0.1")`` alone changes nothing: Ray replaces a loopback
node IP by the host's routable address (``services.resolve_ip_for_localhost``) unless
``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER`` is off, the switch that keeps a laptop's Ray on
loopback (measured, issue 46: without it the GCS, raylet, driver and actors listened on
``*:PORT`` and the runtime-env agent on the host's external address).

:func:`loopback_start` turns that switch off for this process (Ray read it at import, so
its constant is set as well) and for the processes Ray starts (they inherit the
environment), and gives ``ray.init`` the loopback node IP; :func:`restore` puts both
back when the instance is shut down, so that a later connection to a cluster in the same
process (``RAY_ADDRESS``) uses the host's address again. A cluster run never comes here:
its nodes bind where the cluster's own ``ray start`` put them (docs/cluster.md).
"""

from __future__ import annotations

import os
from typing import Any

SWITCH = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
LOOPBACK = "127.0.0.1"

_saved: list[tuple[str | None, Any]] = []  # (the switch's env value, Ray's constant) before


def loopback_start() -> dict[str, Any]:
    """Make the next local ``ray.init`` bind loopback; its extra keyword arguments."""
    from ray._private import ray_constants

    if not _saved:
        _saved.append((os.environ.get(SWITCH), ray_constants.ENABLE_RAY_CLUSTER))
    os.environ[SWITCH] = "0"
    ray_constants.ENABLE_RAY_CLUSTER = False
    return {"_node_ip_address": LOOPBACK}


def restore() -> None:
    """Undo :func:`loopback_start` (a no-op if it did not run)."""
    if not _saved:
        return
    from ray._private import ray_constants

    env, constant = _saved.pop()
    if env is None:
        os.environ.pop(SWITCH, None)
    else:
        os.environ[SWITCH] = env
    ray_constants.ENABLE_RAY_CLUSTER = constant
