"""mkdocs hook (``hooks:`` in mkdocs.yml): an expected-output block, the ```` ```text ```` block under a
``<!-- test: output -->`` marker (tests/test_docs.py), gets the class ``expected-output``, which
docs/stylesheets/extra.css shows apart from the commands to run. Python-Markdown keeps the marker comment in the
page's HTML, right before the block's ``<div class="language-text highlight">``."""

from __future__ import annotations

import re
from typing import Any

OUTPUT_BLOCK = re.compile(r'(<!--\s*test:\s*output\s*-->\s*<div class=")([^"]*highlight")')


def on_page_content(html: str, **kwargs: Any) -> str:
    return OUTPUT_BLOCK.sub(r"\1expected-output \2", html)
