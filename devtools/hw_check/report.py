# SPDX-License-Identifier: BSD-3-Clause
"""The report: one JSON document and the same facts as Markdown."""
import json

# What doc/guides/hw-check.md asks of `ulimit -l`: memory registration pins
# pages, and the checks' queues and buffers need that much.
MEMLOCK_MIN_KIB = 64 * 1024
# Where a report goes (doc/guides/hw-check.md, "What to send back").
SEND_BACK = ("send report.md and report.json back: attach both to an issue on "
             "the issue tracker of the cqpoll repository you cloned "
             "(doc/guides/hw-check.md, \"What to send back\")")
EMULATED_TIMINGS = ("Emulated run: the devices are threads of this machine, so "
                    "these timings say nothing about hardware and pass nothing; "
                    "a row only says its completions were all delivered, once, "
                    "in order (or what went wrong).")


def memlock(raw):
    """`ulimit -l` (KiB, or "unlimited") with its unit, and a warning when it
    is below what the guide asks (None if it is enough)."""
    if raw is None or raw == "":
        return None, "memlock limit unknown (ulimit -l failed)"
    if raw == "unlimited":
        return "unlimited", None
    try:
        kib = int(raw)
    except ValueError:
        return raw, "memlock limit %r not understood" % raw
    text = "%d KiB (%.1f MiB)" % (kib, kib / 1024)
    if kib < MEMLOCK_MIN_KIB:
        return text, ("memlock limit %s is below the 64 MiB doc/guides/hw-check.md "
                      "asks: registrations may fail (raise it: ulimit -l unlimited, "
                      "or run as root)" % text)
    return text, None


def summary(checks):
    s = {"pass": 0, "fail": 0, "skip": 0}
    for c in checks:
        s[c["status"]] += 1
    return s


def _cell(v):
    return "" if v is None else str(v).replace("|", "\\|").replace("\n", " ")


def markdown(rep):
    out = ["# cqpoll hardware check", ""]
    out.append("Mode: **%s**. Result: **%s** (%d pass, %d fail, %d skip)." % (
        rep["mode"], rep["result"], rep["summary"]["pass"],
        rep["summary"]["fail"], rep["summary"]["skip"]))
    out += ["", "To " + SEND_BACK + "."]
    if rep.get("warnings"):
        out += ["", "## Warnings", ""] + ["- " + w for w in rep["warnings"]]
    out += ["", "## Versions", "", "| what | version |", "|---|---|"]
    for k, v in rep["versions"].items():
        out.append("| %s | %s |" % (k, _cell(v if v is not None else "not found")))
    out += ["", "## Devices", ""]
    if rep["devices"]:
        out += ["| device | driver | firmware | usable | transport | gid index | why not |",
                "|---|---|---|---|---|---|---|"]
        for d in rep["devices"]:
            out.append("| %s | %s | %s | %s | %s | %s | %s |" % tuple(_cell(x) for x in (
                d.get("name"), d.get("driver"), d.get("fw_ver"), d.get("usable"),
                d.get("transport"), d.get("gid_index"), d.get("reason"))))
    else:
        out.append("None: %s" % rep["devices_reason"])
    out += ["", "## Checks", "", "| device | check | result | reason |",
            "|---|---|---|---|"]
    for c in rep["checks"]:
        out.append("| %s | %s | %s | %s |" % (
            _cell(c["device"]), _cell(c["check"]),
            c["status"].upper() if c["status"] == "fail" else c["status"],
            _cell(c["reason"])))
    emulated = rep["mode"] == "emulated"
    out += ["", "## Latency (ping-pong, one message outstanding)", ""]
    if emulated:
        out += [EMULATED_TIMINGS, ""]
    out += [
            "| device | tool | mode | bytes | p50 us | p99 us | max us | result |",
            "|---|---|---|---|---|---|---|---|"]
    for l in rep["latency"]:
        if l["status"] == "pass":
            res = "delivered (timings emulated)" if emulated else "pass"
        else:
            res = "%s: %s" % (l["status"], l["reason"])
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % tuple(
            _cell(x) for x in (l["device"], l["tool"], l["mode"], l.get("bytes"),
                               l.get("p50_us"), l.get("p99_us"), l.get("max_us"),
                               res)))
    out += ["", "perftest's p50 is its t_typical (median), its max its t_max; "
            "testpmd-cq's are its own percentiles (post to completion read) of "
            "its ping-pong on the same device and message size.", ""]
    data = [c for c in rep["checks"] if c.get("data")]
    if data:
        out += ["## Data", ""]
        for c in data:
            out.append("- %s / %s: `%s`" % (c["device"], c["check"],
                                            json.dumps(c["data"], sort_keys=True)))
        out.append("")
    out += ["## libcqpoll log", ""]
    if rep["log"]:
        out += ["```"] + rep["log"] + ["```"]
    else:
        out.append("(nothing logged)")
    out.append("")
    return "\n".join(out)


def write(rep, json_path, md_path):
    with open(json_path, "w") as f:
        json.dump(rep, f, indent=2, sort_keys=False)
        f.write("\n")
    with open(md_path, "w") as f:
        f.write(markdown(rep))
