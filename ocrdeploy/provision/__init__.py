"""The engine: connections, the one-round-trip facts probe, and (later) steps and plans."""
