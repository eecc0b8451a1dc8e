#!/usr/bin/python3
"""Runs the file checks a VM test queued (tests/vm/lib.sh `later`), inside HOSTDIR, on the host.

Python tools run in this one process, so numpy, h5py and matplotlib load once (a fresh process
costs ~0.4 s a check, and a VM test queues a dozen); any other tool runs as a process. Prints
`FAIL MESSAGE` for each failed check and a count; exit 1 if one failed, 3 if the queue has no end
marker (the VM part stopped before it had queued every check).
    run_checks.py HOSTDIR ROOT
"""
import os
import runpy
import shlex
import subprocess
import sys
import traceback


def python_tool(path):
    try:
        with open(path, "rb") as f:
            first = f.readline()
    except OSError:
        return False
    return path.endswith(".py") or first.startswith(b"#!/usr/bin/python3")


def run_in_process(tool, args):
    argv, cwd, path = sys.argv, os.getcwd(), list(sys.path)
    sys.argv = [tool] + args
    try:
        runpy.run_path(tool, run_name="__main__")
        return True
    except SystemExit as e:
        return e.code in (None, 0)
    except Exception:  # a crash of one check is that check's failure, not the runner's
        traceback.print_exc()
        return False
    finally:
        sys.argv, sys.path[:] = argv, path
        os.chdir(cwd)
        if "matplotlib.pyplot" in sys.modules:
            sys.modules["matplotlib.pyplot"].close("all")


def main():
    hostdir, root = sys.argv[1], sys.argv[2]
    os.chdir(hostdir)
    queue = os.path.join(hostdir, "checks")
    lines = open(queue).read().splitlines() if os.path.exists(queue) else []
    ended, n, fails = "# end" in lines, 0, 0
    for line in lines:
        if not line.strip() or line == "# end":
            continue
        msg, tool, *args = shlex.split(line)
        tool = tool if os.path.isabs(tool) else os.path.join(root, tool)
        n += 1
        sys.stdout.flush()
        if python_tool(tool):
            ok = run_in_process(tool, args)
        else:
            ok = subprocess.run([tool] + args).returncode == 0
        sys.stdout.flush()
        if not ok:
            print(f"FAIL {msg}")
            fails += 1
    print(f"host: {n} file check(s), {fails} failed")
    sys.exit(3 if not ended else 1 if fails else 0)


main()
