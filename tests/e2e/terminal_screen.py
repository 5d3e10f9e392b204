"""A small terminal emulator for the chat tests: what the user sees once the output has been drawn.

It understands what `rich` and `prompt_toolkit` write (text, CR/LF, cursor moves, erase line/screen,
SGR and mode switches, OSC strings) and keeps everything that scrolled off the top, so a test can
ask whether text is on screen (or in the scrollback) after live regions were redrawn and cleared.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(
    r"\x1b\[([?>=]?)([0-9;]*)([ -/]*)([@-~])"  # CSI
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC (title, hyperlink)
    r"|\x1b[()][0-9A-Za-z]"  # charset
    r"|\x1b[@-_]"  # other two-character escapes
    r"|[\x00-\x1f]"  # C0 controls
    r"|[^\x00-\x1f\x1b]+"  # text
)


class Screen:
    """The lines of a `rows` x `cols` terminal plus its scrollback."""

    def __init__(self, rows: int = 40, cols: int = 120) -> None:
        self.rows = rows
        self.cols = cols
        self.lines: list[list[str]] = [[] for _ in range(rows)]
        self.scrollback: list[str] = []
        self.row = 0
        self.col = 0

    def feed(self, data: str) -> None:
        """Interpret terminal output."""
        for match in _TOKEN.finditer(data):
            token = match.group(0)
            if match.group(4) is not None:
                self._csi(match.group(1), match.group(2), match.group(4))
            elif token.startswith("\x1b"):
                continue
            elif token == "\n":
                self._down()
            elif token == "\r":
                self.col = 0
            elif token == "\b":
                self.col = max(0, self.col - 1)
            elif token == "\t":
                self.col = min(self.cols - 1, (self.col // 8 + 1) * 8)
            elif len(token) == 1 and token < " ":
                continue
            else:
                for char in token:
                    self._put(char)

    def _put(self, char: str) -> None:
        if self.col >= self.cols:
            self.col = 0
            self._down()
        line = self.lines[self.row]
        if len(line) < self.col:
            line.extend(" " * (self.col - len(line)))
        if self.col < len(line):
            line[self.col] = char
        else:
            line.append(char)
        self.col += 1

    def _down(self) -> None:
        if self.row == self.rows - 1:
            self.scrollback.append("".join(self.lines.pop(0)).rstrip())
            self.lines.append([])
        else:
            self.row += 1

    def _csi(self, private: str, params: str, final: str) -> None:
        if private:
            return  # modes (cursor visibility, bracketed paste, ...)
        nums = [int(p) if p else 0 for p in params.split(";")] if params else []
        n = max(1, nums[0]) if nums else 1
        if final == "A":
            self.row = max(0, self.row - n)
        elif final == "B":
            self.row = min(self.rows - 1, self.row + n)
        elif final == "C":
            self.col = min(self.cols - 1, self.col + n)
        elif final == "D":
            self.col = max(0, self.col - n)
        elif final == "G":
            self.col = n - 1
        elif final in "Hf":
            self.row = min(self.rows - 1, (nums[0] if nums else 1) - 1 if nums and nums[0] else 0)
            self.col = (nums[1] - 1) if len(nums) > 1 and nums[1] else 0
        elif final == "K":
            mode = nums[0] if nums else 0
            line = self.lines[self.row]
            if mode == 0:
                del line[self.col :]
            elif mode == 1:
                line[: self.col] = [" "] * min(self.col, len(line))
            else:
                line.clear()
        elif final == "J":
            mode = nums[0] if nums else 0
            if mode == 0:
                del self.lines[self.row][self.col :]
                for row in range(self.row + 1, self.rows):
                    self.lines[row] = []
            elif mode == 2:
                self.lines = [[] for _ in range(self.rows)]

    def text(self) -> str:
        """Scrollback and screen, one string (trailing spaces and empty last lines dropped)."""
        lines = self.scrollback + ["".join(line).rstrip() for line in self.lines]
        while lines and not lines[-1]:
            lines.pop()
        return "\n".join(lines)
