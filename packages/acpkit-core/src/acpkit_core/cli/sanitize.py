"""Make text from an agent or a client safe to print on a terminal.

Whatever `acpkit chat` shows that it did not write itself (agent text, thoughts, titles, tool
output, diffs, plan entries, error messages, the agent's stderr) goes through
[`printable`][acpkit_core.cli.sanitize.printable] first: control characters other than newline and
tab are replaced by visible stand-ins, so an agent cannot clear the screen, retitle the window,
ring the bell or hide text. `rich` adds its own styling afterwards.
"""

from __future__ import annotations

import re

__all__ = ["printable"]

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _stand_in(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # the Unicode control pictures: ␀ ␇ ␛ ...
    if code == 0x7F:
        return "\u2421"  # ␡
    return f"\\x{code:02x}"  # C1 controls (U+0080..U+009F) have no picture


def printable(text: str) -> str:
    """`text` with every control character but `\\n` and `\\t` made visible (`\\x1b` becomes `␛`).

    A Windows line end (`\\r\\n`) becomes `\\n`; a lone `\\r` (which would overwrite the line) is shown as `␍`.
    """
    if text.isprintable():
        return text
    return _CONTROL.sub(_stand_in, text.replace("\r\n", "\n"))
