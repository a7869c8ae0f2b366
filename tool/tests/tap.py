# SPDX-License-Identifier: GPL-2.0
"""tap.py - the TAP lines of the Python checks (check-pprof.py,
check-speedscope.py): "ok N - what", or "not ok N - what" with the detail
as comments, and the plan at the end."""

count = 0
failed = 0


def check(ok, what, detail=""):
    """One check; the first 30 lines of @detail follow a failure."""
    global count, failed
    count += 1
    print(("ok %d - %s" if ok else "not ok %d - %s") % (count, what))
    if not ok:
        failed += 1
        for line in detail.splitlines()[:30]:
            print("#   " + line)


def done():
    """The plan; the exit status: 1 when a check failed."""
    print("1..%d" % count)
    return 1 if failed else 0
