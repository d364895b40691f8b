"""Starts collscope_record in every Python process that `collscope record` runs.

`collscope record -o DIR -- COMMAND` puts this folder first on PYTHONPATH and sets
COLLSCOPE_RECORD_DIR; Python imports sitecustomize at start-up, so the program, the
children it spawns (torch.multiprocessing.spawn) and the workers a launcher starts
(torchrun) all record. Without COLLSCOPE_RECORD_DIR it does nothing. The
sitecustomize it shadows (Debian ships one) still runs.
"""

import os
import sys


def _run_shadowed():
    here = os.path.dirname(os.path.abspath(__file__))
    import importlib.machinery
    import importlib.util

    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None or spec.origin is None:
        return
    if os.path.abspath(spec.origin) == os.path.abspath(__file__):
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


try:
    _run_shadowed()
except Exception:  # noqa: BLE001 - the other hook's failure is not ours to report
    pass

if os.environ.get("COLLSCOPE_RECORD_DIR"):
    try:
        import collscope_record

        collscope_record.install(os.environ["COLLSCOPE_RECORD_DIR"])
    except Exception as error:  # noqa: BLE001 - never stop the program itself
        sys.stderr.write("collscope record: cannot record in this process: %s\n" % error)
