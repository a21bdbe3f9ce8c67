"""The real-wire bridge's helpers: network namespaces with TAP devices for tests, and the real peer that talks to a simulated host."""
