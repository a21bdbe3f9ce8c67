"""The crate's layering, read from its `use` lines by tools/imports: no import
circle between the top-level modules or inside scenario/, and the adapter kinds
(nic, toe) import nothing from the host."""
import subprocess
import sys
from pathlib import Path

TOOL = Path(__file__).resolve().parent.parent / "tools" / "imports"


def graph(*args):
    out = subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True)
    edges = {}
    for line in out.stdout.splitlines():
        if " -> " in line:
            a, b = line.split(" -> ")
            edges[a] = set() if b == "(nothing)" else set(b.split(", "))
    return out.returncode, edges, out.stdout


def test_the_top_level_modules_import_in_layers():
    rc, edges, text = graph()
    assert rc == 0, text
    assert "host" in edges and "wire" in edges["host"], text


def test_the_adapters_know_nothing_of_the_host():
    _, edges, text = graph()
    for part in ("nic", "toe"):
        assert "host" not in edges[part], text
        assert "scenario" not in edges[part], text


def test_scenario_reads_checks_and_assembles_in_layers():
    rc, edges, text = graph("scenario")
    assert rc == 0, text
    # The schema files import no checks.
    for name, targets in edges.items():
        if name.endswith("_schema") or name in ("schema", "defaults"):
            assert not any(t.endswith("_validate") or t in ("validate", "host_plans") for t in targets), (name, targets)


def test_a_circle_is_found_and_named(tmp_path):
    # The tool itself: a made-up crate with a circle fails with the circle named.
    import importlib.machinery
    import importlib.util

    loader = importlib.machinery.SourceFileLoader("imports_tool", str(TOOL))
    spec = importlib.util.spec_from_loader("imports_tool", loader)
    tool = importlib.util.module_from_spec(spec)
    loader.exec_module(tool)
    src = tmp_path / "src"
    (src / "a").mkdir(parents=True)
    (src / "b.rs").write_text("use crate::a::Thing;\n")
    (src / "a" / "mod.rs").write_text("use crate::b::Other;\n#[cfg(test)]\nmod tests { use crate::c::X; }\n")
    (src / "c.rs").write_text("use crate::b::Other;\n")
    tool.SRC = src
    nodes, edges = tool.graph([])
    assert ("a", "b") in edges and ("b", "a") in edges and ("a", "c") not in edges
    assert tool.circles(nodes, edges) == [["a", "b"]]
