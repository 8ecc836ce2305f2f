import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

# The check cache (rulelang/cache.py) of a test run is its own, never the user's (child processes inherit it).
if "RULELANG_CACHE_DIR" not in os.environ:
    import atexit
    import shutil
    import tempfile

    os.environ["RULELANG_CACHE_DIR"] = tempfile.mkdtemp(prefix="rulelang-test-cache-")
    atexit.register(shutil.rmtree, os.environ["RULELANG_CACHE_DIR"], True)
