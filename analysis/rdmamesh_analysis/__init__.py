"""rdmamesh's analysis tools: results files (HDF5) into pages, plots, a history and metrics."""
import importlib.util
import os
import sys

# The tools start with the python3 on PATH (a site's `module load python`). Where that one lacks
# a library they need and Debian's has it, Debian's runs them instead; else one line says what to
# install.
_missing = [m for m in ("numpy", "h5py", "matplotlib") if importlib.util.find_spec(m) is None]
if _missing:
    _system = "/usr/bin/python3"
    if (os.path.realpath(sys.executable) != os.path.realpath(_system) and os.access(_system, os.X_OK)
            and "RDMAMESH_PYTHON_FALLBACK" not in os.environ):
        os.environ["RDMAMESH_PYTHON_FALLBACK"] = sys.executable
        os.execv(_system, [_system] + sys.argv)
    sys.exit(f"{os.path.basename(sys.argv[0])}: {sys.executable} lacks {', '.join(_missing)}: install them "
             f"(Debian: apt-get install python3-numpy python3-h5py python3-matplotlib), or put a python3 "
             f"that has them first on PATH")
