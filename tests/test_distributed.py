"""Sweeps on threads and on Dask: the same rows as a serial run, and a worker
that dies costs only the runs it held."""

import os
import signal
import subprocess
import time

import pytest

import nicsim

from conftest import SCENARIOS, nicsim_cmd

pytest.importorskip("dask.distributed")
from dask.distributed import Client, LocalCluster  # noqa: E402

SCENARIO = SCENARIOS / "papers" / "malta2001" / "send.toml"
VARY = {"host[0].send.frame_size": [64, 256, 1024, 1518], "host[0].send.count": [2000, 4000]}
# What may differ between two runs of one point: when and where it ran.
CIRCUMSTANCES = {"finished_at", "wall_seconds"}


def _results(frame):
    keep = [c for c in frame.columns if c not in CIRCUMSTANCES]
    return frame[keep].sort_values("run_key").reset_index(drop=True)


@pytest.fixture
def cluster():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c:
        with Client(c) as client:
            yield c, client


def test_threads_and_a_cluster_give_the_serial_rows(cluster, tmp_path):
    serial = nicsim.sweep(SCENARIO, VARY, db=tmp_path / "serial.duckdb", jobs=1)
    threads = nicsim.sweep(SCENARIO, VARY, db=tmp_path / "threads.duckdb", jobs=2)
    dask = nicsim.sweep(SCENARIO, VARY, db=tmp_path / "dask.duckdb", scheduler=cluster[0].scheduler_address)
    assert len(serial) == 8 and (serial["status"] == "ok").all()
    assert _results(threads).equals(_results(serial))
    assert _results(dask).equals(_results(serial))


def test_a_worker_killed_mid_sweep_costs_only_its_runs(cluster, tmp_path):
    c, client = cluster
    db = tmp_path / "k.duckdb"
    # Runs of a few hundred milliseconds, so the kill lands while workers hold some.
    vary = ["--vary", "host[0].send.count=20000:220000:20000"]
    cmd = nicsim_cmd() + ["sweep", str(SCENARIO), *vary, "--db", str(db), "--scheduler", c.scheduler_address, "--quiet"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while not any(client.processing().values()) and time.time() < deadline:
        time.sleep(0.05)
    pids = client.run(os.getpid)
    victim = sorted(pids)[0]
    os.kill(pids[victim], signal.SIGKILL)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert "11 points, 11 run now" in out
    rows = nicsim.load(db)
    assert len(rows) == 11 and rows["run_key"].is_unique and (rows["status"] == "ok").all()
    assert sorted(rows["host[0].send.count"]) == list(range(20000, 220001, 20000))
    serial = nicsim.sweep(SCENARIO, {"host[0].send.count": list(range(20000, 220001, 20000))}, db=tmp_path / "s.duckdb", name="send", jobs=1)
    assert _results(rows.drop(columns=["scenario_file"])).equals(_results(serial.drop(columns=["scenario_file"])))


def test_an_unreachable_scheduler_is_bad_input(cli, tmp_path):
    r = cli("sweep", SCENARIO, "--vary", "host[0].send.count=10,20", "--scheduler", "tcp://127.0.0.1:9", "--db", tmp_path / "x.duckdb")
    assert r.returncode == 2 and "cannot reach a Dask scheduler" in r.stderr


def test_a_scheduler_address_dask_cannot_read_is_bad_input(cli, tmp_path):
    for address in ("nothing", "foo://x:1"):
        r = cli("sweep", SCENARIO, "--vary", "host[0].send.count=10,20", "--scheduler", address, "--db", tmp_path / "x.duckdb")
        assert r.returncode == 2 and f"--scheduler {address}: not a scheduler address" in r.stderr, r.stderr
        assert not (tmp_path / "x.duckdb").exists(), "nothing written"


def test_a_scheduler_without_workers_stops_the_sweep_after_the_wait(tmp_path, cli):
    """A cluster with no workers held the sweep at 0% for ever; now it waits as
    long as asked, says why it stops, and writes nothing."""
    db = tmp_path / "out" / "w.duckdb"
    with LocalCluster(n_workers=0, dashboard_address=None) as c:
        start = time.monotonic()
        r = cli("sweep", SCENARIO, "--vary", "host[0].send.count=2000,4000", "--db", db, "--scheduler", c.scheduler_address, "--wait-workers", "1", "--quiet", timeout=120)
        took = time.monotonic() - start
    assert r.returncode == 2, r.stderr
    assert "has no workers; waiting up to 1 s" in r.stderr and "no worker joined within 1 s" in r.stderr
    assert took < 60 and not (tmp_path / "out").exists()


def test_a_sweep_refused_for_its_scheduler_changes_no_file(tmp_path, cli):
    """Refused for a bad --scheduler, a sweep left the stored definition of an
    existing results file rewritten, and made the results folder of a new one."""
    from nicsim.sweeping.store import Store

    db = tmp_path / "kept.duckdb"
    assert cli("sweep", SCENARIO, "--vary", "host[0].send.count=2000", "--db", db, "--quiet").returncode == 0
    before = Store(db, read_only=True)
    defined = before.definitions()
    before.close()
    r = cli("sweep", SCENARIO, "--vary", "host[0].send.count=4000,6000", "--db", db, "--scheduler", "nonsense", "--quiet")
    assert r.returncode == 2 and "--scheduler nonsense" in r.stderr
    after = Store(db, read_only=True)
    assert after.definitions() == defined and len(after.frame()) == 1
    after.close()
    fresh = tmp_path / "new" / "r.duckdb"
    r = cli("sweep", SCENARIO, "--vary", "host[0].send.count=4000", "--db", fresh, "--scheduler", "nonsense", "--quiet")
    assert r.returncode == 2 and not fresh.parent.exists()
    r = cli("sweep", SCENARIO, "--vary", "host[0].send.count=4000", "--db", fresh, "--wait-workers", "-1", "--quiet")
    assert r.returncode == 2 and "--wait-workers: must be" in r.stderr
