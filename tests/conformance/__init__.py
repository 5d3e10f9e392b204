"""The shared runner conformance suite (see `base.py`)."""
