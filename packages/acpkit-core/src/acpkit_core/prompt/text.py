r"""The canonical text forms of prompt parts, shared by every adapter.

Whichever framework runs the agent, a model sees the same words for the same attachment:

- the **link label** `[@name](uri)` (`link_label`);
- the **context wrapper** around an embedded text resource (`context_wrapper`):

      [@notes.md](file:///home/user/project/notes.md)
      <context ref="file:///home/user/project/notes.md">
      # Notes
      </context>

- the **resource description** of a link (`resource_description`) and the **binary summary** of
  content that cannot be shown (`binary_summary`): the label, then `key: value` lines;
- `prompt_text`: a plain-text summary for titles and logs.
- `model_text`: the whole prompt as text for a text-only framework (nothing dropped).

Escaping (so that an attachment can neither close its wrapper nor break its attribute):

- in the wrapper's body, every closing tag `</context` (any case, with or without whitespace
  around the `/`, e.g. `< /CONTEXT`) gets a backslash before its slash: `<\/context`. Nothing
  else in the text changes;
- in the `ref` attribute, `&`, `<`, `>`, `"` and control characters are written as XML
  character references (`&amp;`, `&lt;`, `&gt;`, `&quot;`, `&#10;`);
- in the label, the URI's spaces, control characters, `<` and `>` are percent-encoded (none of
  them is legal in a URI), and the name gets a backslash before `\`, `[` and `]`, its control
  characters percent-encoded and its `</context` escaped as in the body.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from os import PathLike
from pathlib import PurePosixPath, PureWindowsPath
from typing import Final, assert_never
from urllib.parse import unquote, urlsplit

from .ir import Binary, ContextRef, Link, Part, Prompt, Text

__all__ = [
    "binary_summary",
    "context_wrapper",
    "escape_attribute",
    "escape_context_text",
    "link_label",
    "link_text",
    "model_text",
    "part_name",
    "prompt_text",
    "relative_path",
    "resource_description",
    "uri_name",
]

_WORD_ANY_CASE: Final = re.compile("context", re.IGNORECASE)
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f]")
_DESTINATION_UNSAFE: Final = re.compile(r"[\x00-\x20\x7f<>]")
_NAME_UNSAFE: Final = re.compile(r"[\\\[\]]")
_ATTRIBUTE_UNSAFE: Final = re.compile(r"[&<>\"\x00-\x1f\x7f]")
_ENTITIES: Final = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}


def _percent(match: re.Match[str]) -> str:
    return f"%{ord(match.group()):02X}"


def uri_name(uri: str) -> str:
    """The name of a resource as its URI suggests it (used when a block carries no name).

    The last path segment, percent-decoded, followed by the URI's query and fragment when it has
    them: `file:///a/run.py?symbol=main#L3:9` -> `run.py?symbol=main#L3:9`,
    `zed:///agent/git-diff?base=main` -> `git-diff?base=main`. A directory (a path ending in `/`)
    is named by its whole path: `file:///workspace/acpkit/` -> `/workspace/acpkit/`. A URI without
    a path is named by its host, else by itself.
    """
    try:
        parts = urlsplit(uri)
    except ValueError:
        return uri
    path = unquote(parts.path)
    if path.endswith("/") and path.strip("/"):
        name = path
    else:
        name = path.rstrip("/").rsplit("/", 1)[-1] or parts.netloc
        if not name:
            return uri
    if parts.query:
        name += "?" + parts.query
    if parts.fragment:
        name += "#" + parts.fragment
    return name


_CHUNK: Final = 1 << 20
_WORD: Final = "context"


def _tag_slashes(text: str) -> list[int]:
    """Indexes of the `/` of every closing tag `<\\s*/\\s*context` (any case) in `text`.

    Looks for the word `context` in 1 MiB chunks (lowercased in C when the chunk is ASCII, which
    keeps indexes aligned; a regex otherwise), then checks what precedes each hit. The text is
    read once and never copied whole.
    """
    slashes: list[int] = []
    n = len(text)
    for start in range(0, n, _CHUNK):
        end = min(start + _CHUNK, n)
        chunk = text[start : end + len(_WORD) - 1]
        if chunk.isascii():
            lowered = chunk.lower()
            hit = lowered.find(_WORD)
            while hit != -1 and hit < end - start:
                slash = _slash_before(text, start + hit)
                if slash is not None:
                    slashes.append(slash)
                hit = lowered.find(_WORD, hit + 1)
        else:
            for match in _WORD_ANY_CASE.finditer(chunk):
                if match.start() < end - start:
                    slash = _slash_before(text, start + match.start())
                    if slash is not None:
                        slashes.append(slash)
    return slashes


def _slash_before(text: str, word: int) -> int | None:
    i = word - 1
    while i >= 0 and text[i].isspace():
        i -= 1
    if i < 0 or text[i] != "/":
        return None
    slash = i
    i -= 1
    while i >= 0 and text[i].isspace():
        i -= 1
    return slash if i >= 0 and text[i] == "<" else None


def _escaped_pieces(text: str) -> list[str]:
    """`text` as pieces whose concatenation is the escaped text (one piece when nothing changes)."""
    if "<" not in text:
        return [text]
    slashes = _tag_slashes(text)
    if not slashes:
        return [text]
    pieces: list[str] = []
    prev = 0
    for slash in slashes:
        pieces += (text[prev:slash], "\\")
        prev = slash
    pieces.append(text[prev:])
    return pieces


def escape_context_text(text: str) -> str:
    r"""Escape `text` for the body of a context wrapper: `</context` becomes `<\/context`.

    Matches any case and whitespace around the slash; every other character is kept as is.
    Returns `text` itself (no copy) when there is nothing to escape.
    """
    pieces = _escaped_pieces(text)
    return pieces[0] if len(pieces) == 1 else "".join(pieces)


def escape_attribute(value: str) -> str:
    """Escape `value` for a double-quoted attribute: `& < > "` and control characters as references."""
    return _ATTRIBUTE_UNSAFE.sub(lambda m: _ENTITIES.get(m.group()) or f"&#{ord(m.group())};", value)


def link_label(name: str, uri: str) -> str:
    """The link label `[@name](uri)`, escaped as the module docstring describes."""
    safe_name = escape_context_text(_CONTROL.sub(_percent, _NAME_UNSAFE.sub(r"\\\g<0>", name)))
    return f"[@{safe_name}]({_DESTINATION_UNSAFE.sub(_percent, uri)})"


def context_wrapper(ref: ContextRef) -> str:
    """The context wrapper of an embedded text resource.

    ```
    [@name](uri)
    <context ref="uri">
    ...text...
    </context>
    ```

    The name comes from the URI (`uri_name`). A newline is
    added before `</context>` unless the text already ends with one.
    """
    pieces = _escaped_pieces(ref.text)
    last = pieces[-1] or (pieces[-2] if len(pieces) > 1 else "")
    sep = "" if not last or last.endswith("\n") else "\n"
    head = f'{link_label(uri_name(ref.uri), ref.uri)}\n<context ref="{escape_attribute(ref.uri)}">\n'
    # One join: the attached text is copied once, into the result.
    return "".join([head, *pieces, sep, "</context>"])


_WINDOWS_DRIVE: Final = re.compile(r"/[A-Za-z]:(/|$)")
"""The path of a Windows `file:///C:/...` URI starts with a drive letter."""


def relative_path(uri: str, root_dir: str | PathLike[str] | None) -> str | None:
    """The path of a `file://` URI relative to `root_dir`, or `None` when it is not inside it.

    Pure string work: nothing on disk is consulted. A Windows URI (`file:///C:/Users/me/app/x.py`)
    is compared with a Windows `root_dir` (`C:\\Users\\me\\app` or `c:/users/me/app`) as Windows
    compares paths, ignoring case; the relative path is given with forward slashes (`x.py`).
    """
    if root_dir is None:
        return None
    try:
        parts = urlsplit(uri)
    except ValueError:
        return None
    if parts.scheme != "file" or not parts.path:
        return None
    path = unquote(parts.path)
    try:
        if _WINDOWS_DRIVE.match(path):
            text = PureWindowsPath(path[1:]).relative_to(PureWindowsPath(root_dir)).as_posix()
        else:
            text = str(PurePosixPath(path).relative_to(PurePosixPath(root_dir)))
    except ValueError:
        return None
    return text + "/" if parts.path.endswith("/") and text != "." else text


def _lines(first: str, fields: Iterable[tuple[str, object]]) -> str:
    return "\n".join([first, *(f"{key}: {value}" for key, value in fields if value is not None)])


def link_text(link: Link) -> str:
    """A link as text: its label, plus its note on a second line when it has one."""
    label = link_label(link.name, link.uri)
    return _lines(label, [("note", link.note)])


def resource_description(link: Link, *, root_dir: str | PathLike[str] | None = None) -> str:
    """Describe a link: its label, then `title`, `path`, `description`, `type`, `size` and `note` lines.

    Lines for fields the link does not have are left out; `path` appears only when `root_dir`
    is given and the URI is a `file://` URI inside it (the label keeps the full URI).

    ```
    [@guide.pdf](https://example.com/guide.pdf)
    title: The guide
    type: application/pdf
    size: 2048 bytes
    ```
    """
    size = None if link.size is None else f"{link.size} bytes"
    return _lines(
        link_label(link.name, link.uri),
        [
            ("title", link.title if link.title != link.name else None),
            ("path", relative_path(link.uri, root_dir)),
            ("description", link.description),
            ("type", link.media_type),
            ("size", size),
            ("note", link.note),
        ],
    )


def binary_summary(binary: Binary) -> str:
    """Describe binary content that is not shown: its label (or `[image]`, `[audio]`, `[file]`), type and size.

    ```
    [@report.pdf](file:///r/report.pdf)
    type: application/pdf
    size: 1024 bytes
    note: binary content, not included as text
    ```
    """
    first = link_label(uri_name(binary.uri), binary.uri) if binary.uri else f"[{_binary_word(binary)}]"
    return _lines(
        first,
        [
            ("type", binary.media_type or "unknown"),
            ("size", f"{binary.size} bytes"),
            ("note", "binary content, not included as text"),
        ],
    )


def _binary_word(binary: Binary) -> str:
    category = binary.category
    return "file" if category == "other" else category


def part_name(part: Link | ContextRef | Binary) -> str | None:
    """The short name of an attachment (`notes.md`), or `None` for a binary without URI."""
    if isinstance(part, Link):
        return part.name
    if part.uri is None:
        return None
    return uri_name(part.uri)


def _short(part: Part) -> str:
    if isinstance(part, Text):
        return part.text
    if isinstance(part, Link | ContextRef):
        return f"@{part_name(part)}"
    if part.kind == "binary":
        name = part_name(part)
        return f"@{name}" if name else f"[{_binary_word(part)}]"
    assert_never(part)


def prompt_text(prompt: Prompt, *, max_length: int | None = None) -> str:
    """A plain-text summary of a prompt for titles and logs.

    Texts as typed; every attachment as `@name` (a binary without URI as `[image]`, `[audio]` or
    `[file]`), separated by single spaces. With `max_length`, runs of whitespace are folded into
    one space and the result is cut to at most `max_length` characters, ending with `…` when cut.
    Attachment contents never appear.
    """
    text = " ".join(s for s in map(_short, prompt) if s)
    if max_length is None:
        return text
    text = " ".join(text.split())
    if len(text) <= max_length:
        return text
    return text[: max(max_length - 1, 0)].rstrip() + "…" if max_length > 0 else ""


def model_text(prompt: Prompt, *, root_dir: str | PathLike[str] | None = None) -> str:
    """The whole prompt as text for a text-only framework, every part in its canonical form.

    Texts as typed; an embedded text resource (a selection, a diff) in its context wrapper
    ([`context_wrapper`][acpkit_core.prompt.text.context_wrapper]), a link as its description
    ([`resource_description`][acpkit_core.prompt.text.resource_description], with a `path` line
    relative to `root_dir`), binary content as its summary
    ([`binary_summary`][acpkit_core.prompt.text.binary_summary]). Parts are separated by a
    newline; empty text blocks are left out. Nothing is dropped, unlike
    [`prompt_text`][acpkit_core.prompt.text.prompt_text], which is a one-line summary.

    ```python
    from acpkit_core import parse_prompt
    from acpkit_core.prompt import model_text

    prompt = parse_prompt([
        {"type": "text", "text": "Summarise"},
        {"type": "resource", "resource": {"uri": "file:///p/notes.md", "text": "milk"}},
    ])
    assert model_text(prompt) == (
        'Summarise\n[@notes.md](file:///p/notes.md)\n<context ref="file:///p/notes.md">\nmilk\n</context>'
    )
    ```
    """
    pieces: list[str] = []
    for part in prompt:
        if isinstance(part, Text):
            if part.text:
                pieces.append(part.text)
        elif isinstance(part, ContextRef):
            pieces.append(context_wrapper(part))
        elif isinstance(part, Link):
            pieces.append(resource_description(part, root_dir=root_dir))
        elif part.kind == "binary":
            pieces.append(binary_summary(part))
        else:
            assert_never(part)
    return "\n".join(pieces)
