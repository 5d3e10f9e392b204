"""The converter names of `deepagents_acp.utils`, as aliases of ours.

Code written against deepagents-acp ports by changing one import:

```python
# from deepagents_acp.utils import convert_text_block_to_content_blocks, ...
from langchain_acp import convert_text_block_to_content_blocks, ...
```

Each name *is* one of our per-block converters (the same function object), so it behaves as
ours: it takes an `acp.schema` model or a wire dict, validates the block as the prompt parser
does, and accepts `blocks=` and `root_dir=` (optional). Where the two disagree (audio is
converted, not refused; `root_dir` adds a relative `path:` line instead of cutting the URI), ours
wins; the differences are listed in the docs (langchain-acp, "Prompt resources and context").
"""

from __future__ import annotations

from ._content import (
    audio_block_to_content,
    embedded_resource_to_content,
    image_block_to_content,
    resource_link_to_content,
    text_block_to_content,
)

__all__ = [
    "convert_audio_block_to_content_blocks",
    "convert_embedded_resource_block_to_content_blocks",
    "convert_image_block_to_content_blocks",
    "convert_resource_block_to_content_blocks",
    "convert_text_block_to_content_blocks",
]

convert_text_block_to_content_blocks = text_block_to_content
"""deepagents-acp's name for `text_block_to_content`."""

convert_image_block_to_content_blocks = image_block_to_content
"""deepagents-acp's name for `image_block_to_content`."""

convert_audio_block_to_content_blocks = audio_block_to_content
"""deepagents-acp's name for `audio_block_to_content` (which converts audio; deepagents-acp's raises)."""

convert_resource_block_to_content_blocks = resource_link_to_content
"""deepagents-acp's name for `resource_link_to_content` (a `resource_link` block)."""

convert_embedded_resource_block_to_content_blocks = embedded_resource_to_content
"""deepagents-acp's name for `embedded_resource_to_content` (a `resource` block)."""
