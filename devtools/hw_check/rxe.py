# SPDX-License-Identifier: BSD-3-Clause
"""An rxe (soft-RoCE) link where the kernel has rdma_rxe.

Whether the kernel can, which netdevs could carry a link, and the iproute2
command that creates one (rdma-link(8): rdma link add NAME type rxe netdev
NETDEV). Nothing here asks a question unless the caller says it may: under
CI or without a terminal on stdin the answer is always "no".
"""
import os


def kernel_has_rxe(sysroot="/", release=None):
    """(True, how) if rdma_rxe is loaded, built in or installed; else (False, why)."""
    release = release or os.uname().release
    if os.path.isdir(os.path.join(sysroot, "sys/module/rdma_rxe")):
        return True, "rdma_rxe is loaded"
    moddir = os.path.join(sysroot, "lib/modules", release)
    try:
        with open(os.path.join(moddir, "modules.builtin")) as f:
            if any(l.strip().endswith("/rdma_rxe.ko") for l in f):
                return True, "rdma_rxe is built into the kernel"
    except OSError:
        pass
    rxedir = os.path.join(moddir, "kernel/drivers/infiniband/sw/rxe")
    if os.path.isdir(rxedir) and any(n.startswith("rdma_rxe.ko")
                                     for n in os.listdir(rxedir)):
        return True, "rdma_rxe is installed as a module (loaded on link add)"
    if not os.path.isdir(os.path.join(sysroot, "sys/class/infiniband")) and \
            not os.path.isdir(moddir):
        return False, "kernel %s has no InfiniBand support and no modules " \
            "directory (no rdma_rxe)" % release
    return False, "kernel %s has no rdma_rxe module" % release


def netdevs(sysroot="/"):
    """Netdevs that are up, loopback and virtual bridges' members aside."""
    base = os.path.join(sysroot, "sys/class/net")
    out = []
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return out
    for n in names:
        if n == "lo":
            continue
        try:
            with open(os.path.join(base, n, "operstate")) as f:
                state = f.read().strip()
        except OSError:
            continue
        if state in ("up", "unknown"):
            out.append(n)
    return out


def link_name(netdev):
    return "rxe_" + netdev


def link_add_argv(netdev):
    if not netdev or "/" in netdev or netdev.startswith("-"):
        raise ValueError("bad netdev name %r" % netdev)
    return ["rdma", "link", "add", link_name(netdev), "type", "rxe",
            "netdev", netdev]


def may_ask(stdin_isatty, env):
    """Questions only at a terminal, never under CI."""
    return bool(stdin_isatty) and not env.get("CI")


def plan(devices, requested, refuse, has_rxe, candidates, ask_ok):
    """What to do: ("none", why), ("create", netdev) or ("ask", candidates)."""
    if refuse:
        return "none", "--no-rxe given"
    if devices and not requested:
        return "none", "RDMA devices present: no rxe link needed"
    ok, why = has_rxe
    if not ok:
        return "none", why
    if requested:
        if requested not in candidates:
            return "none", "--rxe=%s: no such netdev up (up: %s)" % (
                requested, ", ".join(candidates) or "none")
        return "create", requested
    if not candidates:
        return "none", "no netdev is up to carry an rxe link"
    if not ask_ok:
        return "none", "not asked (no terminal or CI): give --rxe=NETDEV " \
            "(e.g. --rxe=%s) to create one" % candidates[0]
    return "ask", candidates
