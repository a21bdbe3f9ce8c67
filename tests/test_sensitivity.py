"""`nicsim validate --sensitivity`: each calibrated parameter moved ±20%, and how
each figure of the study moves with it."""

import json
import shutil

import pytest

from nicsim import _core
from nicsim.studies.sensitivity import base_value, scaled, slug
from nicsim.studies.study import load_study

from conftest import SCENARIOS

MALTA = SCENARIOS / "papers" / "malta2001"
STUDY = """title = "DMA start-up"

[[calibrated]]
key = "{key}"
parameter = "DMA start-up cycles"

[[sweep]]
name = "dma"
scenario = "dma.toml"
vary = {{ "host[0].send.direction" = ["to-host"], "host[0].send.length" = [256, 8192] }}

[[published]]
at = "nowhere"
sweep = "dma"
where = {{ "host[0].send.direction" = "to-host", "host[0].send.length" = 256 }}
quantity = "short transfers (Mb/s)"
published = "200"
kind = "prediction"
metric = "host.dma_mbps"

[[published]]
at = "nowhere"
sweep = "dma"
where = {{ "host[0].send.direction" = "to-host", "host[0].send.length" = 8192 }}
quantity = "long transfers (Mb/s)"
published = "900"
kind = "prediction"
metric = "host.dma_mbps"
"""


def _study(tmp_path, key="host[0].adapter[0].programmable.dma_startup"):
    papers = tmp_path / "papers"
    (papers / "dma").mkdir(parents=True)
    shutil.copy(MALTA / "dma.toml", papers / "dma" / "dma.toml")
    (papers / "dma" / "study.toml").write_text(STUDY.format(key=key))
    return papers


def test_a_parameter_is_read_from_the_scenario_or_its_default():
    ibm = str(SCENARIOS / "papers" / "ibm2001" / "server.toml")
    assert base_value(ibm, [], "host[0].costs.rx_frame") == 3870
    assert base_value(ibm, ["host[0].costs.copy_ns_per_byte=5.05"], "host[0].costs.copy_ns_per_byte") == 5.05
    # Not written in dma.toml: the schema's default.
    assert base_value(str(MALTA / "dma.toml"), [], "host[0].adapter[0].programmable.dma_startup") == 470
    with pytest.raises(_core.ScenarioError, match="must be a number"):
        base_value(ibm, [], "host[0].clock")


def test_whole_numbers_stay_whole_when_moved():
    assert scaled(470, 0.8) == 376 and isinstance(scaled(470, 1.2), int)
    assert scaled(5.35, 1.2) == pytest.approx(6.42)
    assert slug("host[0].costs.rx_frame", 0.8) == "host-0-costs-rx-frame-x0.8"


def test_each_figure_moves_with_the_parameter_it_rests_on(tmp_path, cli):
    """A longer DMA start-up slows every transfer, short ones most: the moves
    have the right sign and order, and the runs resume from their files."""
    papers = _study(tmp_path)
    out = tmp_path / "results"
    md = tmp_path / "validation.md"
    r = cli("validate", "--papers", papers, "--out", out, "--quiet", "--sensitivity", "--json", "--markdown", md)
    assert r.returncode == 0, r.stderr
    found = {x["quantity"]: x["sensitivity"]["host[0].adapter[0].programmable.dma_startup"] for x in json.loads(r.stdout)}
    short, long_ = found["short transfers (Mb/s)"], found["long transfers (Mb/s)"]
    assert short["0.8"] > 0 > short["1.2"], "a shorter start-up moves more data"
    assert long_["0.8"] > 0 > long_["1.2"]
    assert abs(short["1.2"]) > abs(long_["1.2"]), "the start-up weighs most on short transfers"
    assert sorted(p.name for p in (out / "sensitivity" / "dma").iterdir() if p.suffix == ".duckdb") == [
        "host-0-adapter-0-programmable-dma-startup-x0.8.duckdb",
        "host-0-adapter-0-programmable-dma-startup-x1.2.duckdb",
    ]
    text = md.read_text()
    assert "### Sensitivity to the calibrated parameters" in text and "DMA start-up cycles (`dma_startup`)" in text
    again = cli("validate", "--papers", papers, "--out", out, "--quiet", "--sensitivity")
    assert again.returncode == 0, again.stderr
    assert "sensitivity (change at -20% / +20%)" in again.stdout


def test_a_key_no_run_has_is_refused(tmp_path, cli):
    papers = _study(tmp_path, key="host[0].adapter[0].toe.packet_cycles")
    r = cli("validate", "--papers", papers, "--out", tmp_path / "results", "--quiet", "--sensitivity")
    assert r.returncode == 2
    assert "calibrated key host[0].adapter[0].toe.packet_cycles: no run of the study has this parameter" in r.stderr


def test_a_calibrated_entry_names_its_key_and_parameter(tmp_path):
    papers = _study(tmp_path)
    study = papers / "dma" / "study.toml"
    study.write_text(study.read_text().replace('parameter = "DMA start-up cycles"\n', ""))
    with pytest.raises(_core.ScenarioError, match=r"calibrated\[0\]\.parameter: is required"):
        load_study(study)


def test_every_study_with_calibration_points_names_its_calibrated_parameters():
    """A calibration point compared with a run sets a named parameter of the
    scenario, which the sensitivity runs move."""
    from nicsim.studies.study import find_studies

    for s in find_studies([SCENARIOS / "papers", SCENARIOS / "modern"]):
        run_calibrations = [p for p in s.published if p["kind"] == "calibration" and "sweep" in p]
        if run_calibrations:
            assert s.spec.get("calibrated"), f"{s.name}: calibration points but no [[calibrated]] parameter"
