"""The scenario format's key reference (docs/scenario-keys.md), written from
its JSON Schema: a table per TOML table, each key with its type, default and
meaning as the Rust types say them, so the reference cannot drift from what
nicsim reads. `nicsim schema --keys` prints it.
"""

from __future__ import annotations

import json

# The top level's tables in the order a scenario file usually has them.
ROOT_ORDER = ["source", "sink", "switch", "link", "host", "tap", "sweep"]

HEAD = """# Scenario keys

Every key of a scenario file, table by table, with its type, its default and what it
means. This file is generated from the scenario format's JSON Schema
(`nicsim schema --keys -o docs/scenario-keys.md`), which is generated from the types
nicsim reads scenarios into, so it says exactly what nicsim accepts; a test checks that
it is up to date. docs/scenarios.md explains how the parts work together.

A key marked *required* must be given; *none* means the key is optional with no value
(the text says what then happens); a table marked *its keys'* takes, when left out,
the defaults of its keys.
"""


def _ref(node: dict) -> str | None:
    """The definition a property points to, through an optional (`anyOf` with null)."""
    if "$ref" in node:
        return node["$ref"].split("/")[-1]
    for alt in node.get("anyOf", []):
        if "$ref" in alt:
            return alt["$ref"].split("/")[-1]
    return None


def _table_of(node: dict, defs: dict) -> tuple:
    """(definition name, whether an array of tables) if the property is a table."""
    if node.get("type") == "array" and "items" in node:
        name = _ref(node["items"])
        return (name, True) if name and defs[name].get("type") == "object" else (None, False)
    name = _ref(node)
    return (name, False) if name and defs[name].get("type") == "object" and "properties" in defs[name] else (None, False)


def _type(node: dict, defs: dict) -> str:
    name = _ref(node)
    if name:
        d = defs[name]
        if "enum" in d:
            return " \\| ".join(f'`"{v}"`' for v in d["enum"])
        if d.get("oneOf"):
            values = [x for alt in d["oneOf"] for x in ([alt["const"]] if "const" in alt else alt.get("enum", []))]
            return " \\| ".join(f'`"{v}"`' for v in values)
        return d.get("description", name).split(":")[0]
    kind = node.get("type")
    kinds = [k for k in (kind if isinstance(kind, list) else [kind]) if k != "null"]
    if kinds == ["array"]:
        items = node.get("items", {})
        return f"list of {_type(items, defs)}" if items else "list"
    if kinds == ["object"]:
        return "table"
    return " or ".join(k for k in kinds if k) or "any"


def _value(v) -> str:
    if v is None:
        return "*none*"
    if isinstance(v, bool):
        return f"`{'true' if v else 'false'}`"
    if isinstance(v, str):
        return f'`"{v}"`'
    if isinstance(v, list) and not v:
        return "*none*"
    if isinstance(v, dict):
        return "*its keys'*"
    return f"`{json.dumps(v)}`"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def tables(schema: dict) -> list:
    """Every TOML table of the format in reference order: (title, description, rows),
    each row (key, type, default, meaning) as the reference prints them; the top
    level's title is empty."""
    defs = schema.get("$defs", {})
    found: list = []
    seen: dict = {}

    def table(title: str, spec: dict, path: str) -> None:
        props = spec.get("properties", {})
        required = set(spec.get("required", []))
        rows, children = [], []
        for key in sorted(props, key=lambda k: (ROOT_ORDER.index(k) if not path and k in ROOT_ORDER else -1, k)):
            node = props[key]
            name, many = _table_of(node, defs)
            default = "*required*" if key in required else _value(node.get("default")) if "default" in node else "*none*"
            if not name:
                rows.append((key, _type(node, defs), default, _cell(node.get("description", ""))))
                continue
            sub = f"{path}.{key}" if path else key
            if name not in seen:
                # A table is written out where it first appears; later uses point there.
                seen[name] = f"[[{sub}]]" if many else f"[{sub}]"
                children.append((sub, name))
                where = f"Its keys: `{seen[name]}` below."
            else:
                where = f"Keys as `{seen[name]}`."
            if path:
                meaning = f"{_cell(node.get('description', ''))} {where}".strip()
                rows.append((key, "tables" if many else "table", default, meaning))
        if rows:
            found.append((title if path else "", _cell(spec.get("description", "")), rows))
        for sub, name in children:
            table(seen[name], defs[name], sub)

    table("top level", schema, "")
    return found


def reference(schema: dict) -> str:
    out = [HEAD]
    for title, description, rows in tables(schema):
        out.append(f"\n## `{title}`\n" if title else "\n## Top level\n")
        if description:
            out.append(description + "\n")
        out.append("| key | type | default | meaning |\n|---|---|---|---|")
        out.extend(f"| `{key}` | {kind} | {default} | {meaning} |" for key, kind, default, meaning in rows)
    return "\n".join(out) + "\n"


def undescribed(schema: dict) -> list:
    """Keys whose types say nothing of what they mean: `Table.key` for each."""
    found = []
    for name, spec in [("Scenario", schema)] + list(schema.get("$defs", {}).items()):
        for key, node in spec.get("properties", {}).items():
            if not node.get("description"):
                found.append(f"{name}.{key}")
    return found
