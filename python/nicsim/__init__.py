"""nicsim: a host, its I/O bus and an intelligent Ethernet adapter, simulated with
real frames and exact timing.

    import nicsim
    result = nicsim.run("scenarios/wire-efficiency.toml")
    result.metric("rx-792", "goodput_mbps")
"""

from ._core import ScenarioError, SimulationError, __version__
from .api import Result, check, run

__all__ = ["Result", "ScenarioError", "SimulationError", "__version__", "check", "run"]
