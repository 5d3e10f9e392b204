"""The client half of ACP: what an editor answers, served from this machine (`acpkit chat`, the test client)."""
