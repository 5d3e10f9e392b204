"""`acpkit chat` and `acpkit sessions` (placeholder until the terminal client lands)."""

from __future__ import annotations

import argparse
import sys

__all__ = ["chat_main", "sessions_main"]


def chat_main(args: argparse.Namespace) -> int:
    """Run `acpkit chat`; returns the exit code."""
    print("acpkit chat: not available yet", file=sys.stderr)
    return 2


def sessions_main(args: argparse.Namespace) -> int:
    """Run `acpkit sessions`; returns the exit code."""
    print("acpkit sessions: not available yet", file=sys.stderr)
    return 2
