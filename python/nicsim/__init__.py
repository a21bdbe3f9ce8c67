"""nicsim: a host, its I/O bus and an intelligent Ethernet adapter, simulated with
real frames and exact timing.

    import nicsim
    result = nicsim.run("scenarios/wire-efficiency.toml")
    result.metric("rx-792", "goodput_mbps")

    runs = nicsim.sweep("scenarios/wire-efficiency.toml", {"source[0].frame_size": [64, 1518]})
    runs = nicsim.load("results/wire-efficiency.duckdb")
"""

from nicsim._core import ScenarioError, SimulationError, __version__
from nicsim.api import OutputError, Result, check, load, run, sweep

__all__ = ["OutputError", "Result", "ScenarioError", "SimulationError", "__version__", "check", "load", "run", "sweep"]
