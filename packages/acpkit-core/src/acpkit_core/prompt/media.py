"""Media types: what counts as text, and the type a URI's extension suggests.

Inference uses a small fixed table first, then the *built-in* table of the stdlib `mimetypes`
module (never the machine's `/etc/mime.types`), so the same URI gives the same answer on every
machine: `.ts` is TypeScript here, not an MPEG transport stream.
"""

from __future__ import annotations

import mimetypes
import posixpath
from functools import cache
from urllib.parse import unquote

__all__ = ["guess_media_type", "is_textual"]

_KNOWN: dict[str, str] = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".txt": "text/plain",
    ".rst": "text/x-rst",
    ".py": "text/x-python",
    ".pyi": "text/x-python",
    ".ts": "text/x-typescript",
    ".tsx": "text/x-typescript",
    ".mts": "text/x-typescript",
    ".cts": "text/x-typescript",
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".cjs": "text/javascript",
    ".jsx": "text/javascript",
    ".rs": "text/x-rust",
    ".go": "text/x-go",
    ".java": "text/x-java",
    ".kt": "text/x-kotlin",
    ".rb": "text/x-ruby",
    ".c": "text/x-c",
    ".h": "text/x-c",
    ".cpp": "text/x-c++",
    ".hpp": "text/x-c++",
    ".sh": "text/x-shellscript",
    ".toml": "application/toml",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".json": "application/json",
    ".jsonl": "application/jsonl",
    ".xml": "application/xml",
    ".html": "text/html",
    ".htm": "text/html",
    ".css": "text/css",
    ".csv": "text/csv",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".pdf": "application/pdf",
    ".zip": "application/zip",
    ".gz": "application/gzip",
    ".mp3": "audio/mpeg",
    ".wav": "audio/wav",
    ".ogg": "audio/ogg",
    ".flac": "audio/flac",
    ".mp4": "video/mp4",
}

_TEXTUAL_APPLICATION = frozenset(
    {
        "json",
        "jsonl",
        "x-ndjson",
        "ld+json",
        "xml",
        "xhtml+xml",
        "javascript",
        "x-javascript",
        "ecmascript",
        "typescript",
        "x-typescript",
        "yaml",
        "x-yaml",
        "toml",
        "x-toml",
        "sql",
        "x-sql",
        "graphql",
        "x-sh",
        "x-shellscript",
        "x-csh",
        "x-python",
        "x-python-code",
        "x-ruby",
        "x-perl",
        "x-php",
        "x-httpd-php",
        "x-tex",
        "x-latex",
        "x-diff",
        "x-patch",
        "x-subrip",
        "x-www-form-urlencoded",
        "csv",
        "markdown",
        "x-markdown",
        "rtf",
    }
)


def is_textual(media_type: str | None) -> bool:
    """True when content of this media type is text a model can read as-is.

    Textual: `text/*`, `message/*`, JSON, XML, YAML, TOML, JavaScript/TypeScript, SQL, shell and
    other source or markup types under `application/`, and any type with a `+json`, `+xml`,
    `+yaml` or `+toml` suffix (so `image/svg+xml` is text). `None` (unknown) is not textual.
    """
    if not media_type:
        return False
    essence = media_type.split(";", 1)[0].strip().lower()
    top, _, sub = essence.partition("/")
    if top in ("text", "message"):
        return True
    if sub.endswith(("+json", "+xml", "+yaml", "+toml")):
        return True
    return top == "application" and sub in _TEXTUAL_APPLICATION


@cache
def _builtin_types() -> dict[str, str]:
    # A private database with only Python's built-in table: never reads /etc/mime.types.
    return dict(mimetypes.MimeTypes(filenames=()).types_map[True])


def guess_media_type(uri: str) -> str | None:
    """The media type suggested by the extension of the URI's path, or `None`.

    Only the path counts (a query such as `?symbol=run` or a fragment such as `#L3` is ignored);
    a directory (path ending in `/`) has no media type. Nothing is opened or fetched.
    """
    end = len(uri)
    for sep in "?#":
        found = uri.find(sep, 0, end)
        if found != -1:
            end = found
    path = uri[:end]
    authority = path.find("://")
    if authority != -1:
        slash = path.find("/", authority + 3)
        if slash == -1:
            return None  # no path at all: `https://example.com`
        path = path[slash:]
    if not path or path.endswith("/"):
        return None
    segment = path.rsplit("/", 1)[-1]
    ext = posixpath.splitext(unquote(segment) if "%" in segment else segment)[1].lower()
    if not ext:
        return None
    return _KNOWN.get(ext) or _builtin_types().get(ext)
