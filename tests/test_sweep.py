"""Sweeps: the points they make, the rows they store, resuming after a kill."""

import csv
import re
import signal
import subprocess
import time

import duckdb
import pytest

import nicsim
from nicsim.sweeping.points import parse_vary, points

from conftest import nicsim_cmd

FLOOD = """name = "flood"
duration = "1ms"
[[source]]
name = "gen"
to = "rx"
protocol = "udp"
frame_size = 1518
rate = "line"
count = 200
[[sink]]
name = "rx"
[[link]]
name = "wire"
a = "gen"
b = "rx"
rate = "1Gbps"
"""


@pytest.fixture
def flood(tmp_path):
    path = tmp_path / "flood.toml"
    path.write_text(FLOOD)
    return path


def test_vary_parsing_ranges_lists_and_strings():
    assert parse_vary("source[0].frame_size=64:256:64") == ("source[0].frame_size", [64, 128, 192, 256])
    assert parse_vary("host[0].clock=400MHz,700MHz") == ("host[0].clock", ["400MHz", "700MHz"])
    assert parse_vary('p=["a", "b"],["c"]') == ("p", [["a", "b"], ["c"]])
    assert parse_vary("x=true,1.5") == ("x", [True, 1.5])
    for bad in ("nokey", "=1,2", "k=", "k=1,,2", "k=5:1:0"):
        with pytest.raises(nicsim.ScenarioError):
            parse_vary(bad)


def test_grid_and_zip_points():
    grid = points({"a": [1, 2], "b": [3, 4, 5]})
    assert [p.values for p in grid][:2] == [(("a", 1), ("b", 3)), (("a", 1), ("b", 4))]
    assert len(grid) == 6 and len({p.key("s") for p in grid}) == 6
    zipped = points({"a": [1, 2], "@n": [10, 20], "c": ["x"]}, "zip")
    assert [p.sets for p in zipped] == [["a=1", 'c="x"'], ["a=2", 'c="x"']]
    assert zipped[1].labels == {"n": 20}
    with pytest.raises(nicsim.ScenarioError, match="one length"):
        points({"a": [1, 2], "b": [1, 2, 3]}, "zip")


def test_sweep_rows_hold_inputs_metrics_and_facts(flood, tmp_path):
    db = tmp_path / "r.duckdb"
    frame = nicsim.sweep(flood, {"source[0].frame_size": [64, 1518], "@tag": ["x"]}, db=db, jobs=1)
    assert len(frame) == 2
    row = frame.set_index("source[0].frame_size").loc[1518]
    assert row["status"] == "ok" and row["tag"] == "x" and row["nicsim_version"] == nicsim.__version__
    assert row["seed"] == 1 and row["link[0].rate"] == "1Gbps" and row["source[0].count"] == 200
    single = nicsim.run(flood, overrides={"source[0].frame_size": 1518}).metric("rx", "goodput_mbps")
    assert row["rx.goodput_mbps"] == pytest.approx(single)
    # The same call again runs nothing and changes nothing.
    again = nicsim.sweep(flood, {"source[0].frame_size": [64, 1518], "@tag": ["x"]}, db=db, jobs=1)
    assert list(again["finished_at"]) == list(frame["finished_at"])


def test_a_single_value_is_one_point_not_its_characters(flood, tmp_path):
    frame = nicsim.sweep(flood, {"link[0].rate": "10Gbps", "source[0].frame_size": 1518}, db=tmp_path / "r.duckdb", jobs=1)
    assert len(frame) == 1 and frame["link[0].rate"][0] == "10Gbps" and frame["source[0].frame_size"][0] == 1518


def test_run_refuses_a_seed_or_trace_limit_out_of_range_by_its_name(flood, tmp_path):
    with pytest.raises(nicsim.ScenarioError, match="^seed: must be 0 to 2"):
        nicsim.run(flood, seed=-3)
    with pytest.raises(nicsim.ScenarioError, match="^trace_limit: must not be negative"):
        nicsim.run(flood, trace=tmp_path / "t.json", trace_limit=-1)
    assert not (tmp_path / "t.json").exists()


def test_sweep_table_in_the_scenario_and_export(flood, tmp_path, cli):
    flood.write_text(FLOOD + '[sweep]\nmode = "zip"\nvary = { "source[0].frame_size" = [64, 128], "source[0].count" = [10, 20] }\n')
    db = tmp_path / "own.duckdb"
    r = cli("sweep", flood, "--db", db, "--jobs", "1", "--quiet")
    assert r.returncode == 0, r.stderr
    assert "2 points, 2 run now" in r.stdout
    r = cli("export", db, tmp_path / "own.csv")
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader((tmp_path / "own.csv").open()))
    assert [(x["source[0].frame_size"], x["rx.frames"]) for x in rows] == [("64", "10"), ("128", "20")]
    assert cli("export", db, tmp_path / "own.parquet").returncode == 0
    back = duckdb.connect().execute(f"SELECT count(*) FROM '{tmp_path / 'own.parquet'}'").fetchone()[0]
    assert back == 2


def test_bad_sweeps_exit_2_and_write_nothing(flood, tmp_path, cli):
    db = tmp_path / "bad.duckdb"
    r = cli("sweep", flood, "--vary", "source[0].frame_size=64,20", "--db", db)
    assert r.returncode == 2
    assert "sweep point 1 (source[0].frame_size=20)" in r.stderr and "frame_size" in r.stderr
    assert not db.exists()
    r = cli("sweep", flood, "--db", db)
    assert r.returncode == 2 and "nothing to vary" in r.stderr
    r = cli("sweep", flood, "--vary", "a=1,2", "--vary", "b=1", "--zip", "--vary", "c=1,2,3", "--db", db)
    assert r.returncode == 2 and "one length" in r.stderr
    r = cli("export", tmp_path / "none.duckdb", tmp_path / "x.csv")
    assert r.returncode == 2 and "no such results file" in r.stderr


def test_an_unreachable_scheduler_writes_nothing(flood, tmp_path, cli):
    db, out = tmp_path / "s.duckdb", tmp_path / "out"
    r = cli("sweep", flood, "--vary", "source[0].count=1,2", "--db", db, "--scheduler", "tcp://127.0.0.1:9", "--quiet")
    assert r.returncode == 2 and "cannot reach a Dask scheduler" in r.stderr
    assert not db.exists()
    r = cli("reproduce", "cern2007", "--out", out, "--scheduler", "tcp://127.0.0.1:9", "--quiet")
    assert r.returncode == 2 and not out.exists()


def test_an_edited_scenario_is_not_mixed_with_old_rows(flood, tmp_path, cli):
    db = tmp_path / "e.duckdb"
    assert cli("sweep", flood, "--vary", "source[0].count=1,2", "--db", db, "--jobs", "1", "--quiet").returncode == 0
    flood.write_text("# a comment changes nothing\n" + FLOOD)
    r = cli("sweep", flood, "--vary", "source[0].count=1,2,3", "--db", db, "--jobs", "1", "--quiet")
    assert r.returncode == 0 and "3 points, 1 run now" in r.stdout
    flood.write_text(FLOOD.replace('duration = "1ms"', 'duration = "2ms"'))
    r = cli("sweep", flood, "--vary", "source[0].count=1,2", "--db", db, "--jobs", "1", "--quiet")
    assert r.returncode == 2 and "earlier version" in r.stderr and "--restart" in r.stderr
    r = cli("sweep", flood, "--vary", "source[0].count=1,2", "--db", db, "--jobs", "1", "--quiet", "--restart")
    assert r.returncode == 0 and "2 points, 2 run now" in r.stdout
    assert set(nicsim.load(db)["duration"]) == {"2ms"}


def _kill_after(cmd, done_at, sig):
    """Start a sweep with a terminal for its stderr, where its progress bar
    shows (only there), and send sig once the bar shows done_at runs."""
    import os
    import pty
    import threading

    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    shown, progressed = bytearray(), threading.Condition()

    def read():
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the sweep closed its end
                chunk = b""
            with progressed:
                shown.extend(chunk)
                progressed.notify_all()
            if not chunk:
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    count = lambda: max([int(m) for m in re.findall(rb"(\d+)/60 ", bytes(shown))] or [0])  # noqa: E731
    with progressed:
        progressed.wait_for(lambda: count() >= done_at or proc.poll() is not None, timeout=120)
        seen = count()
    proc.send_signal(sig)
    proc.communicate(timeout=60)
    reader.join(timeout=10)
    os.close(master)
    return proc.returncode, seen, bytes(shown).decode(errors="replace")


def _long_sweep(flood, db):
    """60 points of a few milliseconds each, the count of frames varied."""
    flood.write_text(FLOOD.replace('duration = "1ms"\n', ""))
    return nicsim_cmd() + ["sweep", str(flood), "--vary", "source[0].count=1000:60000:1000", "--db", str(db), "--jobs", "1"]


def test_a_killed_sweep_resumes_without_repeating_a_point(flood, tmp_path):
    db = tmp_path / "k.duckdb"
    cmd = _long_sweep(flood, db)
    code, seen, _ = _kill_after(cmd, 12, signal.SIGKILL)
    assert code == -signal.SIGKILL and seen >= 12
    before = nicsim.load(db)
    assert 12 <= len(before) < 60, "the kill must land part-way"
    assert before["run_key"].is_unique
    time.sleep(0.01)
    r = subprocess.run(cmd + ["--quiet"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert f"60 points, {60 - len(before)} run now" in r.stdout
    after = nicsim.load(db)
    assert len(after) == 60 and after["run_key"].is_unique and sorted(after["point"]) == list(range(60))
    kept = after.set_index("run_key").loc[before["run_key"], "finished_at"]
    assert list(kept) == list(before["finished_at"]), "a finished point ran again"
    assert list(after.sort_values("point")["rx.frames"]) == list(range(1000, 60001, 1000))


def test_ctrl_c_stops_cleanly_and_says_how_to_resume(flood, tmp_path):
    db = tmp_path / "c.duckdb"
    cmd = _long_sweep(flood, db)
    code, _, err = _kill_after(cmd, 5, signal.SIGINT)
    assert code == 130 and "interrupted" in err and "resumes" in err
    rows = nicsim.load(db)
    assert 5 <= len(rows) < 60 and (rows["status"] == "ok").all()


def test_a_label_may_set_a_group_of_keys_as_one_dimension():
    groups = [{"label": "a", "set": {"x": 1, "y": "s"}}, {"label": "b", "set": {"x": 2}}]
    pts = points({"@design": groups, "z": [7, 8]})
    assert len(pts) == 4
    assert pts[0].labels == {"design": "a"} and pts[0].sets == ["x=1", 'y="s"', "z=7"]
    assert pts[3].labels == {"design": "b"} and pts[3].sets == ["x=2", "z=8"]
    with pytest.raises(nicsim.ScenarioError):
        points({"@design": [{"label": "a"}]})
    with pytest.raises(nicsim.ScenarioError):
        points({"x": [{"label": "a", "set": {}}]})


def _tiny_study(tmp_path):
    """A studies folder with one study: the long sweep of the flood."""
    papers = tmp_path / "papers" / "tiny"
    papers.mkdir(parents=True)
    (papers / "flood.toml").write_text(FLOOD.replace('duration = "1ms"\n', ""))
    (papers / "study.toml").write_text(
        'title = "Tiny"\nsource = "a test"\nsummary = "Frames through one link."\n'
        '[[sweep]]\nname = "count"\nscenario = "flood.toml"\n'
        f'vary = {{ "source[0].count" = {list(range(1000, 60001, 1000))} }}\n'
    )
    out = tmp_path / "out"
    return nicsim_cmd() + ["reproduce", "tiny", "--papers", str(papers.parent), "--out", str(out), "--jobs", "1"], out / "tiny.duckdb"


def test_reproduce_resumes_and_never_runs_a_finished_point_again(tmp_path):
    cmd, db = _tiny_study(tmp_path)
    code, seen, _ = _kill_after(cmd, 12, signal.SIGKILL)
    assert code == -signal.SIGKILL and seen >= 12
    before = nicsim.load(db)
    assert 12 <= len(before) < 60, "the kill must land part-way"
    r = subprocess.run(cmd + ["--quiet"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    after = nicsim.load(db)
    assert len(after) == 60 and after["run_key"].is_unique
    kept = after.set_index("run_key").loc[before["run_key"], "finished_at"]
    assert list(kept) == list(before["finished_at"]), "a finished point ran again"
    # The same command once more runs nothing at all.
    r = subprocess.run(cmd + ["--quiet"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    again = nicsim.load(db).set_index("run_key")["finished_at"]
    assert again.equals(after.set_index("run_key")["finished_at"])


@pytest.mark.parametrize("after", [2, 9, 20])
def test_ctrl_c_on_two_threads_keeps_whole_rows_at_any_moment(flood, tmp_path, after):
    db = tmp_path / "t.duckdb"
    cmd = [*_long_sweep(flood, db)[:-2], "--jobs", "2"]
    code, _, err = _kill_after(cmd, after, signal.SIGINT)
    assert code == 130 and "Traceback" not in err and "resumes" in err, err[-2000:]
    rows = nicsim.load(db)
    assert after <= len(rows) < 60 and (rows["status"] == "ok").all() and rows["run_key"].is_unique
    r = subprocess.run(cmd + ["--quiet"], capture_output=True, text=True)
    assert r.returncode == 0 and f"60 points, {60 - len(rows)} run now" in r.stdout, r.stderr


def test_an_interrupt_during_a_row_write_waits_for_the_row(tmp_path, monkeypatch):
    """Ctrl-C that lands inside the write: the row is stored whole, then the
    interrupt is raised."""
    import os

    from nicsim.sweeping.store import Store

    store = Store(tmp_path / "w.duckdb")
    fit = Store._fit

    def interrupted_fit(self, column, value):
        if column == "b":
            os.kill(os.getpid(), signal.SIGINT)
        return fit(self, column, value)

    monkeypatch.setattr(Store, "_fit", interrupted_fit)
    facts = {"run_key": "k", "sweep": "s", "point": 0, "status": "ok"}
    with pytest.raises(KeyboardInterrupt):
        store.add(facts, {"a": 1, "b": 2, "c": 3}, {}, {})
    row = store.con.execute('SELECT a, b, c FROM runs WHERE run_key = ?', ["k"]).fetchone()
    store.close()
    assert row == (1, 2, 3)


def test_ctrl_c_stops_reproduce_cleanly_and_it_resumes(tmp_path):
    cmd, db = _tiny_study(tmp_path)
    code, _, err = _kill_after(cmd[:-2] + ["--jobs", "2"], 6, signal.SIGINT)
    assert code == 130 and "Traceback" not in err and "the same command resumes" in err, err[-2000:]
    rows = nicsim.load(db)
    assert 6 <= len(rows) < 60 and (rows["status"] == "ok").all()
    r = subprocess.run(cmd + ["--quiet"], capture_output=True, text=True)
    assert r.returncode == 0 and len(nicsim.load(db)) == 60, r.stderr


def test_progress_bars_go_to_a_terminal_only(flood, tmp_path, cli):
    """Sent to a log file, the bars filled it with carriage returns."""
    r = cli("sweep", flood, "--vary", "source[0].count=100,200", "--db", tmp_path / "p.duckdb")
    assert r.returncode == 0, r.stderr
    assert "\r" not in r.stderr and "%|" not in r.stderr


def test_a_results_file_is_read_again_once_it_changed(flood, tmp_path):
    """Reading a study's results is remembered while the file stays as it is:
    runs added since are seen, and a table's rows follow them."""
    from nicsim.studies.document import load
    from nicsim.studies.tables import records

    db = tmp_path / "r.duckdb"
    nicsim.sweep(flood, {"source[0].frame_size": [64]}, db=db, jobs=1, name="s")
    _, _, frames = load(db)
    assert load(db)[2]["s"] is frames["s"], "an unchanged file is read once"
    assert [r["source[0].frame_size"] for r in records(frames, "s")] == [64]
    nicsim.sweep(flood, {"source[0].frame_size": [64, 1518]}, db=db, jobs=1, name="s")
    _, _, again = load(db)
    assert [r["source[0].frame_size"] for r in records(again, "s")] == [64, 1518]
