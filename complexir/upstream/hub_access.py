"""Whether the Hugging Face Hub can be reached, asked once per process, quickly.

huggingface_hub retries an unreachable Hub for about half a minute per file (five retries with backoff), so a
command that reads a few files of a mistyped or uncached repo id offline sat silent for two minutes and then blamed
the repo. Asking once, with one short request and no retries, lets it fall back to the cache at once and, when the
cache has nothing, say that the Hub is unreachable (or ``HF_HUB_OFFLINE`` is set) and how to work offline.
"""

from __future__ import annotations

import functools
import logging

logger = logging.getLogger(__name__)

class HubUnreachable(ConnectionError):
    """Something needed from the Hub, which cannot be reached (or ``HF_HUB_OFFLINE`` is set), and not in the cache:
    a network failure (exit code 1), said with what to do instead."""


#: seconds the reachability request may take (connecting and answering); a refused connection fails at once
REACH_TIMEOUT = 5.0


@functools.cache
def hub_unreachable() -> str | None:
    """None when the Hub at ``HF_ENDPOINT`` answers; else why not, in words (``HF_HUB_OFFLINE is set`` or the
    connection's error). Any HTTP answer counts as reachable: only a connection that fails means the Hub is not."""
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        return "HF_HUB_OFFLINE is set"
    from huggingface_hub.utils import get_session

    try:
        get_session().head(constants.ENDPOINT, timeout=REACH_TIMEOUT, follow_redirects=False)
    except Exception as error:  # noqa: BLE001 -- the HTTP client's connection, timeout and proxy errors alike
        logger.debug("the Hub at %s is unreachable", constants.ENDPOINT, exc_info=True)
        reason = " ".join(str(error).split()) or type(error).__name__
        return f"the Hub at {constants.ENDPOINT} cannot be reached ({type(error).__name__}: {reason})"
    return None
