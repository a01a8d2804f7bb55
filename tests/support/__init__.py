"""Test helpers: hand-written and drawn episodes, the ground-truth comparison, a chat server."""
