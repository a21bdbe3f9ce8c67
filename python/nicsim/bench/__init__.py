"""Benchmarks: the cases `nicsim bench` times and counts, their goals, the machine they ran on, and the peers (ns-3, SimPy) beside them."""
