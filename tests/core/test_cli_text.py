"""The text rules behind the `acpkit chat` display: what is safe to print, which streamed markdown is done."""

from __future__ import annotations

import pytest
from acpkit_core.cli.live import split_lines, split_markdown
from acpkit_core.cli.sanitize import printable


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("plain text\twith a tab\nand a newline", "plain text\twith a tab\nand a newline"),
        ("\x1b[2J\x1b]0;pwned\x07hello", "␛[2J␛]0;pwned␇hello"),
        ("nul\x00 del\x7f", "nul␀ del␡"),
        ("c1 \x9b2J", "c1 \\x9b2J"),
        ("windows\r\nline", "windows\nline"),
        ("over\rwrite", "over␍write"),
        ("emoji ✓ and accents é stay", "emoji ✓ and accents é stay"),
    ],
)
def test_printable_makes_control_characters_visible(raw: str, shown: str) -> None:
    assert printable(raw) == shown


def test_printable_leaves_no_control_character() -> None:
    every = "".join(chr(c) for c in range(0x00, 0xA0))
    assert all(ch in "\n\t" or ch.isprintable() for ch in printable(every))


@pytest.mark.parametrize(
    ("streamed", "done", "rest"),
    [
        ("# Title\n\nSome par", "# Title\n\n", "Some par"),
        ("# Title\n\n", "", "# Title\n\n"),  # the next block has not begun: a list may go on
        ("- a\n\n  still item a", "", "- a\n\n  still item a"),  # indented: continues the item
        ("```py\nx = 1\n\ny = 2\n", "", "```py\nx = 1\n\ny = 2\n"),  # a blank line inside a fence
        ("```py\nx = 1\n```\nAfter", "```py\nx = 1\n```\n", "After"),  # a closed fence is finished
        ("one\n\ntwo\n\nthr", "one\n\ntwo\n\n", "thr"),
        ("no blank line yet\nstill the same paragraph", "", "no blank line yet\nstill the same paragraph"),
    ],
)
def test_split_markdown_keeps_the_block_still_arriving(streamed: str, done: str, rest: str) -> None:
    assert split_markdown(streamed) == (done, rest)


def test_split_markdown_pieces_add_up_whatever_the_chunking() -> None:
    text = "# T\n\npara **bold**\n\n- a\n- b\n\n```\ncode\n\nmore\n```\n\nend\n"
    for size in (1, 2, 3, 7):
        printed, buffer = "", ""
        for i in range(0, len(text), size):
            done, buffer = split_markdown(buffer + text[i : i + size])
            printed += done
        assert printed + buffer == text


def test_split_lines() -> None:
    assert split_lines("a\nb\npartial") == ("a\nb\n", "partial")
    assert split_lines("partial") == ("", "partial")
