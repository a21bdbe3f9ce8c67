"""`nicsim report`: one self-contained HTML file (plots inlined as PNG) from one
or more results files: for a study, each published figure beside the model's,
its plots and the numbers behind them; for a plain sweep, plots of the metrics
that change and the table of runs.
"""

from __future__ import annotations

import base64
import html
import os
from pathlib import Path
from typing import Sequence

import markdown

from nicsim import _core
from nicsim.studies import columns as cells
from nicsim.studies.document import load
from nicsim.files import results_files, write_whole
from nicsim.studies.plots import automatic, column, draw, levels
from nicsim.studies.comparisons import compare, summary
from nicsim.studies.tables import PUBLISHED_HEAD, matches, published_grid, table_grid

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em; color: #222; }
h1 { border-bottom: 2px solid #444; } h2 { margin-top: 2.5em; border-bottom: 1px solid #aaa; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.8em; display: block; max-width: 100%; overflow-x: auto; }
img { max-width: 100%; height: auto; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.4em; text-align: right; }
th { font-weight: 600; } th small { font-weight: normal; color: #666; word-break: break-all; }
th { background: #f0f0f0; } td.text { text-align: left; }
figure { margin: 1.5em 0; } figcaption { font-size: 0.85em; color: #555; }
.note { color: #555; font-size: 0.9em; }
"""


def _esc(v) -> str:
    return html.escape(str(v))


def _shown_path(p) -> str:
    """A path as the reader's project names it: relative to the working directory
    when it lies inside it (not the absolute path of the machine that ran it)."""
    try:
        return str(Path(p).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(p)


def _img(png: bytes, caption: str) -> str:
    data = base64.b64encode(png).decode()
    return f'<figure><img alt="{_esc(caption)}" src="data:image/png;base64,{data}"><figcaption>{_esc(caption)}</figcaption></figure>'


def grid_html(header: list, rows: list) -> str:
    """A table; the first column (labels) left-aligned."""
    head = "".join(f"<th>{_esc(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f'<td class="text">{_esc(c)}</td>' if i == 0 else f"<td>{_esc(c)}</td>" for i, c in enumerate(r)) + "</tr>" for r in rows
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def prose(text: str) -> str:
    """A study's Markdown text as HTML."""
    return markdown.markdown(text.strip(), extensions=["tables"])


def study_tables(spec: dict, frames: dict) -> str:
    """The published figures beside the model's, then the study's own tables."""
    parts = []
    published = published_grid(spec, frames)
    if published:
        line = f"<p>{_esc(summary(compare(spec, frames)))}</p>"
        parts.append("<h3>Published beside predicted</h3>" + line + grid_html(PUBLISHED_HEAD, published))
    for t in spec.get("table", []):
        parts.append(f"<h3>{_esc(t['title'])}</h3>")
        parts += [prose(t["text"])] if t.get("text") else []
        parts.append(grid_html(*table_grid(t, frames)))
        parts += [prose(t["after"])] if t.get("after") else []
    return "\n".join(parts)


def runs_table(frame, vary: dict, metrics: Sequence[str]) -> str:
    """The runs: what each varied, then the metrics plotted or compared, with
    headers in words (the path beneath) and numbers with their units."""
    keys = [column(k) for k in vary if column(k) in frame]
    cols = keys + [m for m in dict.fromkeys(metrics) if m in frame and m not in keys]
    if frame.empty or not cols:
        return ""
    head = "".join(f"<th>{_esc(words)}<br><small>{_esc(where)}</small></th>" for words, where in map(cells.header, cols))
    body = "".join(
        "<tr>" + "".join(f"<td>{_esc(cells.shown(c, row[c]))}</td>" for c in cols) + "</tr>" for row in frame[cols].to_dict("records")
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def section(path: Path) -> str:
    """The HTML for one results file."""
    spec, defs, frames = load(path)
    # A plain sweep's section is named by what it ran, not by its results file.
    scenarios = sorted({Path(d["scenario"]).name for d in defs.values()})
    title = spec.get("title") or (f"Sweeps of {', '.join(scenarios)}" if scenarios else path.stem)
    parts = [f'<h2 id="{_esc(path.stem)}">{_esc(title)}</h2>']
    if spec.get("source"):
        parts.append(f'<p class="note">Publication: {_esc(spec["source"])}. Results file: <code>{_esc(_shown_path(path))}</code>.</p>')
    if spec.get("summary"):
        parts.append(f"<p>{_esc(spec['summary'])}</p>")
    parts += [prose(spec["text"])] if spec.get("text") else []
    parts.append(study_tables(spec, frames))
    plans = {name: [p for p in spec.get("plot", []) if p["sweep"] == name] for name in defs}
    for name, d in defs.items():
        frame = frames[name]
        ok = frame[frame["status"] == "ok"] if "status" in frame else frame
        mine = plans[name] if spec else automatic(ok, d["vary"])
        label = d.get("title") or name
        parts.append(f"<h3>{_esc(label)}</h3><p class=\"note\">Sweep <code>{_esc(name)}</code> of "
                     f"<code>{_esc(_shown_path(d['scenario']))}</code>, {len(frame)} runs ({_esc(d['mode'])}).</p>")
        for plan in mine:
            caption = plan.get("title") or f"{', '.join(plan['y'])} against {plan['x']}"
            shown = ok[[matches(r, plan["where"]) for r in ok.to_dict("records")]] if plan.get("where") else ok
            mine_published = [p for p in spec.get("published", []) if p.get("sweep") == name] if spec else []
            parts.append(_img(draw(shown, plan, mine_published, levels(plan, frames)), caption))
        metrics = [column(y) for p in mine for y in p["y"]]
        metrics += [p["metric"] for p in spec.get("published", []) if p.get("sweep") == name]
        parts.append(runs_table(frame, d["vary"], metrics))
        failed = len(frame) - len(ok)
        if failed:
            parts.append(f'<p class="note">{failed} runs failed; their errors are in the results file.</p>')
    parts += [prose(spec["notes"])] if spec.get("notes") else []
    return "\n".join(parts)


def write_report(results: Sequence["str | os.PathLike[str]"], out: "str | os.PathLike[str]", title: str = "nicsim results") -> Path:
    """Write one HTML report covering every results file given."""
    paths = results_files(results)
    body = [section(p) for p in paths]
    toc = "".join(f'<li><a href="#{_esc(p.stem)}">{_esc(p.stem)}</a></li>' for p in paths)
    text = (
        f"<!doctype html><html><head><meta charset=\"utf-8\"><title>{_esc(title)}</title><style>{STYLE}</style></head>"
        f"<body><h1>{_esc(title)}</h1><p class=\"note\">nicsim {_esc(_core.__version__)}. Every figure is from simulated "
        f"traffic; the model's parameters and their sources are in docs/model.md.</p><ul>{toc}</ul>{''.join(body)}</body></html>"
    )
    return write_whole(out, text)
