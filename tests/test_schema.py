"""The scenario format as a JSON Schema: generated from the model's own types,
shipped in docs/, and every scenario that ships validates against it."""

import json

import jsonschema
import pytest

from conftest import SCENARIOS, nicsim_cmd

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

ROOT = SCENARIOS.parent
SHIPPED = ROOT / "docs" / "scenario.schema.json"


def scenario_files():
    return sorted(p for p in SCENARIOS.rglob("*.toml") if p.name != "study.toml")


@pytest.fixture(scope="module")
def schema(cli_module):
    r = cli_module("schema")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def cli_module():
    import subprocess

    return lambda *a: subprocess.run(nicsim_cmd() + [str(x) for x in a], capture_output=True, text=True)


def test_the_shipped_schema_is_what_nicsim_prints(schema):
    assert json.loads(SHIPPED.read_text()) == schema


def test_the_shipped_key_reference_is_what_nicsim_prints(cli_module):
    r = cli_module("schema", "--keys")
    assert r.returncode == 0, r.stderr
    shipped = (ROOT / "docs" / "scenario-keys.md").read_text()
    assert shipped == r.stdout, "regenerate it with `nicsim schema --keys -o docs/scenario-keys.md`"


def test_every_key_says_what_it_means_with_its_default(schema):
    from nicsim.keydoc import reference, undescribed

    assert undescribed(schema) == [], "give these fields a doc comment in the Rust types"
    text = reference(schema)
    # The reference reads the defaults from the types: a few known ones.
    assert "| `rx_ring` | integer | `256` |" in text and "| `mode` | `\"handler\"` \\| `\"napi\"`" in text
    assert "| `ack_delay` | a time | `\"200ms\"` |" in text and "| `dma_setup` | integer | `100` |" in text and "| `latency` | a time | `\"0s\"` |" in text
    for table in ["## `[[host.adapter]]`", "## `[host.adapter.toe]`", "## `[host.tcp]`", "## `[[link]]`", "## `[sweep]`"]:
        assert table in text


@pytest.mark.parametrize("path", scenario_files(), ids=lambda p: str(p.relative_to(SCENARIOS)))
def test_every_shipped_scenario_validates(schema, path):
    jsonschema.validate(tomllib.loads(path.read_text()), schema)


def test_a_misspelt_key_and_a_wrong_type_are_caught_by_the_schema(schema):
    good = tomllib.loads((SCENARIOS / "papers" / "ibm2001" / "server.toml").read_text())
    bad = json.loads(json.dumps(good))
    bad["host"][0]["cpu"] = 4
    with pytest.raises(jsonschema.ValidationError, match="cpu"):
        jsonschema.validate(bad, schema)
    bad = json.loads(json.dumps(good))
    bad["host"][0]["cpus"] = "four"
    with pytest.raises(jsonschema.ValidationError, match="four"):
        jsonschema.validate(bad, schema)


def test_schema_writes_a_file(cli_module, tmp_path):
    out = tmp_path / "s.json"
    r = cli_module("schema", "-o", out)
    assert r.returncode == 0 and json.loads(out.read_text())["title"] == "nicsim scenario"
    (tmp_path / "a-file").write_text("")
    r = cli_module("schema", "-o", tmp_path / "a-file" / "s.json")
    assert r.returncode == 2 and "cannot write" in r.stderr


def keys_of(schema):
    """Every key the schema allows, as (table path, key): ("host.driver", "mode")."""
    defs = schema["$defs"]

    def resolve(node):
        while "$ref" in node:
            node = defs[node["$ref"].split("/")[-1]]
        for alt in node.get("anyOf", []) + node.get("oneOf", []):
            if alt.get("type") != "null":
                return resolve(alt)
        if node.get("type") == "array":
            return resolve(node.get("items", {}))
        return node

    found = []

    def walk(node, path):
        for key, sub in resolve(node).get("properties", {}).items():
            found.append((path, key))
            inner = resolve(sub)
            if "properties" in inner:
                walk(inner, f"{path}.{key}" if path else key)

    walk(schema, "")
    return found


def test_every_key_the_schema_allows_is_documented(schema):
    """The docs name every key of the format (as `key`, `table.key` or `[table]`),
    so a key cannot be added without its documentation."""
    docs = "".join((ROOT / "docs" / f).read_text() for f in ("scenarios.md", "bridge.md", "sweeps.md"))
    def documented(path, key):
        full = f"{path}.{key}" if path else key
        forms = [f"`{key}`", f".{key}`", f"`{key}.", f"[{full}]", f"[[{full}]]", f"{full} ="]
        return any(f in docs for f in forms)

    missing = [f"{path}.{key}" if path else key for path, key in keys_of(schema) if not documented(path, key)]
    assert not missing, f"keys without documentation in docs/scenarios.md: {missing}"


# Defaults that choose nothing: off, zero, none, or one of a thing.
NO_CHOICE = {"*none*", "*required*", "*its keys'*", "`false`", "`0`", "`0.0`", '`"0s"`', "`1`"}


def defaults_table(text):
    """The rows of docs/model.md's default tables: (table, key) -> default."""
    rows = {}
    section = text.split("## Defaults of the scenario format", 1)[1]
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[1].startswith("`") and cells[0] != "table":
            rows[(cells[0].strip("`"), cells[1].strip("`"))] = cells[2]
    return rows


def test_every_default_the_model_chooses_has_its_source_in_the_model(schema):
    """A key whose default is a value is named in docs/model.md, where its source is;
    and every row of the default tables there is a key of the format with that default."""
    from nicsim.keydoc import tables

    model = (ROOT / "docs" / "model.md").read_text()
    listed = defaults_table(model)
    keys = {(title or "top level", key): default for title, _, rows in tables(schema) for key, kind, default, _ in rows}
    unsourced = [f"{t} {k} = {d}" for (t, k), d in keys.items() if d not in NO_CHOICE and f"`{k}`" not in model]
    assert not unsourced, f"defaults with no source in docs/model.md: {unsourced}"
    stale = {tk: d for tk, d in listed.items() if keys.get(tk) != d}
    assert not stale, f"rows of docs/model.md's default tables that the format does not have: {stale}"
    assert len(listed) > 40
