"""The layers import only downward (pyproject.toml's [tool.importlinter] `layers` contract, checked by
import-linter): the language, then the runtime, then play and analysis, then the applications (the
command line, the servers, the adapters, the tools); every module is in one of them; and no module
imports itself back through others (no import circle)."""
from __future__ import annotations

import graphlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_every_layer_imports_only_downward():
    exe = shutil.which("lint-imports") or os.path.join(os.path.dirname(sys.executable), "lint-imports")
    if not os.path.exists(exe):
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([exe, "--no-cache"], cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "0 broken" in r.stdout


def test_the_code_has_no_unused_or_undefined_names():
    """ruff with pyflakes' rules ([tool.ruff] in pyproject.toml) over the language, the runtime and the tools,
    and over the tests and benchmarks (an unused import or a shadowed name there hides a mistake too)."""
    exe = shutil.which("ruff") or os.path.join(os.path.dirname(sys.executable), "ruff")
    if not os.path.exists(exe):
        pytest.skip("ruff is not installed (pip install -e '.[test]')")
    r = subprocess.run([exe, "check", "--no-cache", "rulelang", "interpreter", "tests", "benchmarks"], cwd=ROOT,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]


def _layers_contract():
    tomllib = pytest.importorskip("tomllib")
    with open(ROOT / "pyproject.toml", "rb") as fh:
        config = tomllib.load(fh)["tool"]["importlinter"]
    contract = [c for c in config["contracts"] if c["type"] == "layers"][0]  # the first: the four layers
    return config, contract


def _layer_modules(layer: str) -> list:
    """The modules of one layer of the contract: separated by `:` or `|`; `(name)` is optional."""
    names = layer.replace("|", ":").split(":")
    return [name.strip().strip("()") for name in names]


def _import_graph():
    grimp = pytest.importorskip("grimp")  # (it comes with import-linter)
    config, _ = _layers_contract()
    sys.path.insert(0, str(ROOT))  # this clone's packages, as lint-imports sees them
    try:
        return grimp.build_graph(*config["root_packages"], cache_dir=None)
    finally:
        sys.path.remove(str(ROOT))


def test_every_module_is_in_one_layer():
    """A new module must be given its place: each module of rulelang/ and interpreter/ (the packages'
    own __init__ aside) is in exactly one layer, itself or a package holding it."""
    config, contract = _layers_contract()
    layers = [_layer_modules(layer) for layer in contract["layers"]]
    graph = _import_graph()
    unplaced, twice = [], []
    for module in sorted(graph.modules):
        if module in config["root_packages"]:
            continue
        holders = [i for i, layer in enumerate(layers) for name in layer
                   if module == name or module.startswith(name + ".")]
        if not holders:
            unplaced.append(module)
        elif len(holders) > 1:
            twice.append(module)
    assert not unplaced, f"modules in no layer of pyproject.toml's [tool.importlinter] contract: {unplaced}"
    assert not twice, f"modules in more than one layer: {twice}"


def test_there_is_no_import_circle():
    """No module imports itself back through others, at the top or inside a function (grimp sees both):
    graphlib's topological sort of the import graph finds a circle if there is one."""
    graph = _import_graph()
    imports = {module: graph.find_modules_directly_imported_by(module) for module in graph.modules}
    graphlib.TopologicalSorter(imports).prepare()  # raises CycleError naming a circle
