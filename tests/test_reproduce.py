"""`nicsim reproduce` and `nicsim report`: every study's section, plots and
published figures in one HTML file."""

import base64
import json
import re
import statistics
from html.parser import HTMLParser

import pytest

import nicsim
from nicsim.sweeping.points import points
from nicsim.studies.study import find_studies, load_study

from conftest import SCENARIOS

PAPERS = SCENARIOS / "papers"
STUDIES = [PAPERS, SCENARIOS / "modern"]


class Sections(HTMLParser):
    """The report's structure: each h2 section's id, images and table cells."""

    def __init__(self):
        super().__init__()
        self.sections, self.current, self.in_cell = {}, None, False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "h2":
            self.current = self.sections.setdefault(attrs["id"], {"images": [], "cells": []})
        elif tag == "img" and self.current is not None:
            self.current["images"].append(attrs["src"])
        self.in_cell = tag == "td"

    def handle_data(self, data):
        if self.in_cell and self.current is not None:
            self.current["cells"].append(data.strip())


def _png(src):
    assert src.startswith("data:image/png;base64,")
    data = base64.b64decode(src.split(",", 1)[1])
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
    return data


@pytest.fixture(scope="module")
def reproduced(tmp_path_factory):
    from conftest import nicsim_cmd
    import subprocess

    out = tmp_path_factory.mktemp("results")
    md = out / "validation.md"
    cmd = nicsim_cmd() + ["validate", "--all", "--out", str(out), "--quiet", "--markdown", str(md), "--json"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    (out / "validate.json").write_text(r.stdout)
    return out


def test_calibration_points_reproduce_within_one_percent(reproduced):
    """Every calibration point with a published number comes out within 1%:
    a calibration that does not reproduce is a defect. Predictions are only
    reported, never asserted."""
    found = json.loads((reproduced / "validate.json").read_text())
    assert {r["study"] for r in found} == {s.name for s in find_studies(STUDIES) if s.published}
    assert len(found) == sum(len(s.published) for s in find_studies(STUDIES))
    calibration = [r for r in found if r["kind"] == "calibration" and r["value"] is not None]
    assert len(calibration) >= 8
    for r in calibration:
        assert abs(r["error_pct"]) <= 1.0, f"{r['study']}: {r['quantity']}: {r['shown']} against {r['published']}"


def test_validate_prints_calibration_first_and_the_median_error(reproduced, cli, tmp_path):
    """The text form: per study its calibration points first, each signed error,
    and the median over its predictions."""
    import shutil

    for name in ("ibm2001", "hp2001"):
        shutil.copy(reproduced / f"{name}.duckdb", tmp_path)
    r = cli("validate", "ibm2001", "hp2001", "--out", tmp_path, "--quiet")
    assert r.returncode == 0, r.stderr
    block = r.stdout.split("\n\n")[0]
    assert block.startswith("IBM 2001")
    kinds = [line[2:14].strip() for line in block.splitlines()[1:-1]]
    assert kinds == sorted(kinds, key=["calibration", "fact", "prediction", "not compared"].index) and kinds[0] == "calibration"
    found = json.loads((reproduced / "validate.json").read_text())
    ibm = [x for x in found if x["study"] == "ibm2001" and x["kind"] == "prediction" and x["error_pct"] is not None]
    median = statistics.median(abs(x["error_pct"]) for x in ibm)
    assert f"median absolute error of its {len(ibm)} predictions with a number: {median:.1f}%" in block
    for x in ibm:
        assert (x["predicted"] - x["value"]) / x["value"] * 100 == pytest.approx(x["error_pct"])


def test_validate_names_a_study_with_no_published_figure(reproduced, cli, tmp_path):
    """The text form left such a study out without a word."""
    import shutil

    shutil.copy(reproduced / "modern-40g.duckdb", tmp_path)
    r = cli("validate", "modern-40g", "--out", tmp_path, "--quiet")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Modern: 40 GbE") and "no published figure to compare" in r.stdout


def test_the_report_reads_at_1280_pixels_without_scrolling_sideways(reproduced, tmp_path):
    """Every study's tables and plots fit a 1280-pixel window (issue 54), measured
    as Chromium lays the report out."""
    from page_width import browser, too_wide

    if browser() is None:
        pytest.skip("no headless Chromium on PATH (chromium, chromium-browser or google-chrome) to lay the report out")
    assert too_wide(reproduced / "report.html", tmp_path) == []


def test_reproduce_all_writes_each_study_section_with_plots(reproduced):
    studies = find_studies(STUDIES)
    assert {s.name for s in studies} >= {"ibm2001", "malta2001", "patent-direct-tso"}
    parser = Sections()
    parser.feed((reproduced / "report.html").read_text())
    for s in studies:
        assert (reproduced / f"{s.name}.duckdb").is_file()
        section = parser.sections[s.name]
        assert len(section["images"]) == len(s.plots)
        for src in section["images"]:
            _png(src)
        for p in s.published:
            assert p["quantity"] in section["cells"] and f"{p['published']} ({p['at']})" in section["cells"]
        assert "not run" not in section["cells"]
    assert sum(1 for s in studies if s.plots) >= 6


def test_the_validation_document_and_the_report_show_the_same_figures(reproduced):
    """docs/validation.md is made from the same results files as the report: every
    study's section, published figure and table is in both, with the same numbers."""
    md = (reproduced / "validation.md").read_text()
    parser = Sections()
    parser.feed((reproduced / "report.html").read_text())
    for s in find_studies(STUDIES):
        assert f"## {s.spec['title']}" in md
        for t in s.spec.get("table", []):
            assert f"### {t['title']}" in md
        cells = parser.sections[s.name]["cells"]
        for p in s.published:
            row = next(line for line in md.splitlines() if line.startswith(f"| {p['quantity']} |"))
            got = row.split(" | ")[3]
            assert got in cells, f"{s.name}: {p['quantity']}: {got} is not in the report"
    assert "not run" not in md
    rows = nicsim.load(reproduced / "malta2001.duckdb", sweep="dma")
    hit = rows[(rows["host[0].send.length"] == 1512) & (rows["host[0].send.direction"] == "to-host")]
    assert f"| 1512 | {float(hit['host.dma_mbps'].iloc[0]):.1f} |" in md


def test_reproduced_figures_are_the_models(reproduced):
    """The report's numbers come from the runs: the Malta calibration point."""
    rows = nicsim.load(reproduced / "malta2001.duckdb", sweep="dma")
    hit = rows[(rows["host[0].send.length"] == 1512) & (rows["host[0].send.direction"] == "to-host")]
    got = float(hit["host.dma_mbps"].iloc[0])
    assert got == pytest.approx(665.6, rel=1e-3)
    html = (reproduced / "report.html").read_text()
    assert re.search(rf"<td>{got:.1f}</td>", html)


def test_report_of_a_plain_sweep_plots_what_changed(tmp_path, cli):
    db = tmp_path / "plain.duckdb"
    nicsim.sweep(SCENARIOS / "papers" / "malta2001" / "send.toml", {"host[0].send.frame_size": [64, 512, 1518]}, db=db, jobs=1)
    r = cli("report", db, "-o", tmp_path / "r.html")
    assert r.returncode == 0, r.stderr
    parser = Sections()
    parser.feed((tmp_path / "r.html").read_text())
    images = parser.sections["plain"]["images"]
    assert images and all(_png(i) for i in images)
    cells = parser.sections["plain"]["cells"]
    assert "1,518" in cells, "numbers with separators"
    assert any(c.endswith("%") for c in cells), "utilizations as per cent, not 0.785921"
    assert not any("e+" in c for c in cells), "no exponents"
    text = (tmp_path / "r.html").read_text()
    assert ">Sweeps of send.toml</h2>" in text, "named by what it ran, not by its results file"
    assert "frame size<br><small>host[0].send</small>" in text, "a key's words, its table beneath"


def test_run_table_cells_read_as_quantities():
    from nicsim.studies import columns as runcells

    assert runcells.header("server.app_goodput_mbps") == ("app goodput (Mb/s)", "server")
    assert runcells.header("server.rx_loss") == ("rx loss (%)", "server")
    assert runcells.header("host[0].adapter[0].programmable.segmentation") == ("segmentation", "host[0].adapter[0].programmable")
    assert runcells.shown("server.cpu_utilization", 0.785921) == "78.6%"
    assert runcells.shown("rx.frame_rate_pps", 1492330.0) == "1,492,330"
    assert runcells.shown("server.mean_rx_to_driver_us", 12.34567) == "12.35"
    assert runcells.shown("host[0].file_request.peers", '["c1", "c2", "c3", "c4"]') == "c1 … c4 (4)"


def test_a_plain_sweep_plots_outputs_against_its_first_key_with_titles(tmp_path, cli):
    from nicsim.studies.plots import automatic

    flood = (SCENARIOS / "switched-udp.toml").read_text()
    (tmp_path / "f.toml").write_text(flood)
    db = tmp_path / "f.duckdb"
    # The first key is written last alphabetically: it must still be the x axis.
    vary = {"source[0].rate": ["100Mbps", "500Mbps"], "duration": ["1ms", "2ms"]}
    nicsim.sweep(tmp_path / "f.toml", vary, db=db, jobs=1)
    from nicsim.sweeping.store import Store

    store = Store(db, read_only=True)
    stored = store.definitions()["f"]["vary"]
    store.close()
    rows = nicsim.load(db)
    plans = automatic(rows[rows["status"] == "ok"], stored)
    assert plans and all(p["x"] == "source[0].rate" and p.get("title") and p["x_label"] == "rate (Mbps)" for p in plans)
    assert not any(y.endswith("offered_pps") for p in plans for y in p["y"]), "what a source offered is an input"
    r = cli("report", db, "-o", tmp_path / "r.html", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    page = (tmp_path / "r.html").read_text()
    assert str(tmp_path) not in page, "paths are shown relative to the project"
    assert "overflow-x: auto" in page and "max-width: 100%" in page


def dma_sweep(folder, lengths: str) -> str:
    """A study folder's scenario (Malta's DMA test, as a.toml) and a sweep of it
    named "a" over these transfer lengths, as study text."""
    (folder / "a.toml").write_text((SCENARIOS / "papers" / "malta2001" / "dma.toml").read_text())
    return f'[[sweep]]\nname = "a"\nscenario = "a.toml"\nvary = {{ "host[0].send.length" = {lengths} }}\n'


def test_bad_studies_are_named(tmp_path, cli):
    (tmp_path / "s").mkdir()
    study = tmp_path / "s" / "study.toml"
    study.write_text('title = "t"\n[[sweep]]\nname = "a"\nscenario = "missing.toml"\nvary = { x = [1] }\n')
    with pytest.raises(nicsim.ScenarioError, match=r"sweep\[0\]\.scenario: no file"):
        load_study(study)
    study.write_text('title = "t"\ncolour = 1\n')
    with pytest.raises(nicsim.ScenarioError, match="unknown key 'colour'"):
        load_study(study)
    sweep = dma_sweep(tmp_path / "s", "[64]")
    table = '[[table]]\ntitle = "t"\nrows = ["n"]\nkeys = ["host[0].send.length"]\n'
    for column, words in [
        ('{ label = "x", sweep = "b", cell = "{host.dma_mbps}" }', r"table\[0\]\.column\[0\]\.sweep: no sweep named 'b'"),
        ('{ label = "x", sweep = "a", cell = "{host.dma_mbps % 2}" }', r"table\[0\]\.column\[0\]\.cell: 'host.dma_mbps % 2': cannot read"),
        ('{ label = "x", sweep = "a", cell = "{host.dma_mbps}", keys = [] }', r"table\[0\]\.column\[0\]\.keys: needs one key"),
        ('{ label = "x", sweep = "a", cell = "{host.dma_mbps}", colour = 1 }', "unknown key 'colour'"),
    ]:
        study.write_text('title = "t"\n' + sweep + table + f"column = [{column}]\n")
        with pytest.raises(nicsim.ScenarioError, match=words):
            load_study(study)
    study.write_text('title = "t"\n' + sweep.replace("[64]", '"64:128:64"'))
    with pytest.raises(nicsim.ScenarioError, match=r"sweep\[0\]\.vary\.host\[0\]\.send\.length: must be a list of values"):
        load_study(study)
    figure = '[[published]]\nsweep = "a"\nquantity = "q"\npublished = "about 5"\nat = "p. 1"\nmetric = "host.dma_mbps"\n'
    for extra, words in [
        ("", r"published\[0\]\.kind: is required"),
        ('kind = "guess"\n', r"published\[0\]\.kind: must be one of calibration, fact, prediction"),
        ('kind = "prediction"\nvalue = "five"\n', r"published\[0\]\.value: must be a number"),
        ('kind = "prediction"\ndivide_by = { sweep = "b", metric = "x.y" }\n', r"published\[0\]\.divide_by\.sweep: no sweep named 'b'"),
        ('kind = "prediction"\ncrossing = { x = "host[0].send.length" }\n', r"published\[0\]\.crossing\.level: a number is required"),
        ('kind = "not compared"\nnote = "no run"\n', r"published\[0\]\.sweep: a figure 'not compared' is set beside no run"),
    ]:
        study.write_text('title = "t"\n' + sweep + figure + extra)
        with pytest.raises(nicsim.ScenarioError, match=words):
            load_study(study)
    uncompared = '[[published]]\nquantity = "q"\npublished = "about 5"\nat = "p. 1"\nkind = "not compared"\n'
    study.write_text('title = "t"\n' + sweep + uncompared)
    with pytest.raises(nicsim.ScenarioError, match=r"published\[0\]\.note: is required"):
        load_study(study)
    study.write_text('title = "t"\n' + sweep + uncompared + 'note = "the workload is not described"\n')
    assert load_study(study).published[0]["kind"] == "not compared"
    for kind, extra, words in [
        ("prediction", "", r"published\[0\]\.sweep: is required: a prediction is compared with a run"),
        ("fact", 'metric = "host.dma_mbps"\n', r"published\[0\]\.sweep: is required with 'metric'"),
    ]:
        study.write_text('title = "t"\n' + sweep + uncompared.replace("not compared", kind) + 'note = "n"\n' + extra)
        with pytest.raises(nicsim.ScenarioError, match=words):
            load_study(study)
    study.write_text('title = "t"\n' + sweep + uncompared.replace("not compared", "calibration") + 'note = "sets x"\n')
    assert load_study(study).published[0]["kind"] == "calibration"
    for command in ("reproduce", "validate"):
        r = cli(command, "nosuch")
        assert r.returncode == 2 and "no such study" in r.stderr
    r = cli("validate", "ibm2001", "--all")
    assert r.returncode == 2 and "not both" in r.stderr
    r = cli("report", tmp_path / "none.duckdb")
    assert r.returncode == 2 and "no such results file" in r.stderr


def test_no_study_run_retransmits_unless_a_frame_was_lost(reproduced):
    """TCP repairs losses and nothing else: in every run of every study, an end
    retransmits (or sees data out of order) only if some link, switch, FIFO or
    ring dropped a frame or an impaired link reordered one."""
    checked = 0
    for db in sorted(reproduced.glob("*.duckdb")):
        rows = nicsim.load(db)
        again = [c for c in rows.columns if c.endswith((".tcp_retransmits", ".tcp_out_of_order"))]
        lost = [c for c in rows.columns if any(w in c.split(".")[-1] for w in ("drop", "overrun", "lost", "reordered"))]
        for _, run in rows.iterrows():
            if not again:
                continue
            checked += 1
            if run[again].fillna(0).sum() > 0:
                assert run[lost].fillna(0).sum() > 0, f"{db.stem} {run['sweep']} point {run['point']}: retransmits on a network that lost nothing"
    assert checked > 100, "the TCP studies ran"


def test_every_published_figure_cites_its_publication_and_place(reproduced):
    """A reader has the papers, not our notes: each study names its publication
    and each published figure says where in it the figure is."""
    import html

    md = (reproduced / "validation.md").read_text()
    page = html.unescape((reproduced / "report.html").read_text())
    assert "BRIEF" not in md and "BRIEF" not in page
    cited = 0
    for study in find_studies(STUDIES):
        spec = study.spec
        if not spec.get("published"):
            continue
        assert re.search(r"(19|20)\d\d", spec["source"]), f"{study.name}: the source names no year"
        assert f"Publication: {spec['source']}" in md and f"Publication: {spec['source']}" in page
        for p in spec["published"]:
            cell = f"{p['published']} ({p['at']})"
            assert cell in md and cell in page, cell
            cited += 1
    assert cited >= 30


def test_a_crossing_is_where_a_falling_curve_last_reaches_its_level():
    """The loss threshold of a sweep: between the last run above the level and
    the next at or below it, by linear interpolation."""
    import math

    from nicsim.studies.comparisons import level_crossing

    assert level_crossing([(46, 0.8), (200, 0.3), (300, 0.05), (400, 0.0)], 0.01) == pytest.approx(300 + 100 * 0.04 / 0.05)
    assert level_crossing([(46, 0.5), (100, 0.0), (150, 0.2), (200, 0.0)], 0.01) == pytest.approx(150 + 50 * 0.19 / 0.2), "the last crossing"
    assert math.isnan(level_crossing([(46, 0.0), (100, 0.0)], 0.01)), "never above: no crossing"


def test_plots_mark_published_figures_and_draw_quantities_honestly():
    """Mixed units are ordered categories, sizes over decades a log axis, a
    published figure a marked point with its error, and legends in words."""
    import pandas as pd

    from nicsim.studies.comparisons import published_value
    from nicsim.studies.plots import coordinates, legend, published_marks, spans_decades

    xs, ticks = coordinates(["1Gb/s", "100Mb/s", "1Gb/s"])
    assert ticks == {0.0: "100Mb/s", 1.0: "1Gb/s"} and xs == [1.0, 0.0, 1.0], "1 Gb/s comes after 100 Mb/s"
    assert coordinates(["400MHz", "700MHz"]) == ([400.0, 700.0], None)
    assert spans_decades([64, 1024, 65536]) and not spans_decades([400, 700])
    assert published_value("about 4.5 million") == 4.5e6 and published_value("about 17,000") == 17000
    assert published_value("withheld for validation") is None
    frame = pd.DataFrame({"host[0].clock": ["400MHz", "700MHz"], "server.app_goodput_mbps": [584.0, 640.0]})
    plot = {"x": "host[0].clock", "y": ["server.app_goodput_mbps"]}
    fig = {"metric": "server.app_goodput_mbps", "published": "about 500 Mb/s", "where": {"host[0].clock": "400MHz"}}
    [(x, y, text)] = published_marks(frame, plot, [fig, {**fig, "published": "withheld for validation"}])
    assert (x, y) == (400.0, 500.0) and "+17%" in text
    with_series = {**plot, "series": "host[0].driver.buffers", "legend": {"recycle": "buffers recycled"}}
    assert legend(with_series, "y", 1, "recycle") == "buffers recycled"
    assert legend(with_series, "y", 1, "reallocate") == "buffers = reallocate"
    assert legend({**plot, "legend": {"server.app_goodput_mbps": "goodput"}}, "server.app_goodput_mbps", 2, None) == "goodput"
    for study in find_studies(STUDIES):
        for p in study.plots:
            label = p.get("y_label", "")
            assert "fraction" not in label, f"{study.name}: {p['title']}: shares are drawn as %"
            if "busy" in label:
                assert p.get("percent") and "(%)" in label, f"{study.name}: {p['title']}: busy is drawn as %"


def test_the_validation_preface_counts_the_runs_it_was_made_from(reproduced):
    """The run count and time are generated with the document, not kept by hand."""
    studies = find_studies(STUDIES)
    total = sum(len(points(sw["vary"], sw.get("mode", "grid"))) for s in studies for sw in s.sweeps)
    md = (reproduced / "validation.md").read_text()
    m = re.search(r"(\d+) studies, (\d+) runs; simulating them took ([\d.]+) s", md)
    assert m and int(m.group(1)) == len(studies) and int(m.group(2)) == total and float(m.group(3)) > 0


def test_every_sweep_of_more_than_one_run_has_a_plot():
    for study in find_studies(STUDIES):
        plotted = {p["sweep"] for p in study.plots}
        for sw in study.sweeps:
            if len(points(sw["vary"], sw.get("mode", "grid"))) > 1:
                assert sw["name"] in plotted, f"{study.name}: sweep {sw['name']} has no plot"


def test_a_plots_levels_are_checked_and_read_from_their_runs(tmp_path):
    """`limits`: a number, or one run's figure from a sweep of the study; a bad
    one is named before anything runs."""
    import pandas as pd

    from nicsim.studies.plots import levels

    (tmp_path / "s").mkdir()
    study = tmp_path / "s" / "study.toml"
    head = 'title = "t"\n' + dma_sweep(tmp_path / "s", "[64, 128]") + '[[plot]]\nsweep = "a"\nx = "host[0].send.length"\ny = ["host.dma_mbps"]\n'
    bad = {
        'limits = [{ value = 1 }]\n': r"plot\[0\]\.limits\[0\]\.label: is required",
        'limits = [{ value = 1, sweep = "a", metric = "x.y", label = "l" }]\n': r"limits\[0\]: give either value",
        'limits = [{ sweep = "b", metric = "x.y", label = "l" }]\n': r"limits\[0\]\.sweep: no sweep named 'b'",
        'limits = [{ value = "high", label = "l" }]\n': r"limits\[0\]\.value: must be a number",
        'limits = [{ value = 1, label = "l", colour = 1 }]\n': "unknown key 'colour'",
        'scale = "big"\n': r"plot\[0\]\.scale: must be a number",
    }
    for extra, words in bad.items():
        study.write_text(head + extra)
        with pytest.raises(nicsim.ScenarioError, match=words):
            load_study(study)
    study.write_text(head + 'limits = [{ value = 2.5, label = "two and a half" }, '
                     '{ sweep = "a", where = { "host[0].send.length" = 128 }, metric = "host.dma_mbps / 2", label = "half" }]\n')
    spec = load_study(study).plots[0]
    frame = pd.DataFrame({"host[0].send.length": [64, 128], "host.dma_mbps": [100.0, 300.0]})
    assert levels(spec, {"a": frame}) == [(2.5, "two and a half"), (150.0, "half")]
    assert levels(spec, {}) == [(2.5, "two and a half")], "a sweep not run draws nothing"
