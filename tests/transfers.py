"""Checks of whole TCP transfers that the scenario tests share."""


def transfer(r, sender, receiver, size):
    """The two ends' metrics, after checking that exactly `size` bytes of one
    stream crossed once, on one connection, nothing sent twice."""
    a, b = r.component(sender), r.component(receiver)
    s, t = a.metrics, b.metrics
    assert s["ttcp_bytes"] == t["ttcp_bytes"] == size
    assert s["transfer_complete"] == t["transfer_complete"] == 1
    assert a.text["ttcp_xxh128"] == b.text["ttcp_xxh128"]
    assert s["tcp_connections"] == 1 and s["tcp_retransmits"] == 0 and t["tcp_retransmits"] == 0
    return s, t
