"""The runtime: recorders, trace store, spatial primitives, generator and evaluation."""
