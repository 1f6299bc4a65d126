"""The mteb import hook's former module name, kept for code that imports it (``complexir.mteb.hook.register()``):
it is ``complexir.mteb.hook`` itself, not a copy, so its state and monkeypatching are shared."""

import sys

from complexir.mteb import hook

sys.modules[__name__] = hook
