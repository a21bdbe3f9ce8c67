"""The repository stands on its own: nothing in it points a reader at documents
outside it (the project's brief and design notes live beside the repository, not
in it), so every citation names a publication, a specification or docs/."""

import pathlib
import subprocess

ROOT = pathlib.Path(__file__).resolve().parent.parent
# Spelled in pieces so that this file does not name them itself.
OUTSIDE = ["BRIEF" + ".md", "DESIGN" + ".md", "platforms" + ".md", "shared/" + "seeds"]


def tracked():
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        return [p for p in ROOT.rglob("*") if p.is_file() and not {".git", "target", ".venv", "results"} & set(p.parts)]
    return [ROOT / line for line in out.stdout.splitlines()]


def test_no_file_cites_a_document_outside_the_repository():
    found = []
    for path in tracked():
        if "third_party" in path.parts or not path.is_file():
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            found += [f"{path.relative_to(ROOT)}:{n}: {word}" for word in OUTSIDE if word in line]
    assert found == []
