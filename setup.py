"""Packaging glue that pyproject.toml cannot express: ship ``complexir_mteb.pth`` into site-packages.

The ``.pth`` file installs complexir's mteb import hook (``complexir/mteb/hook.py``) so that the plain ``mteb``
CLI knows our tasks. It must land at the root of site-packages in both install modes:

* ``pip install .`` (wheel): ``build_py`` copies it to the root of ``build_lib``, which becomes the root of
  the wheel's purelib, i.e. site-packages.
* ``pip install -e .`` (PEP 660 editable wheel): setuptools runs ``build_py`` in ``editable_mode`` into a
  throw-away ``build_lib`` whose files are *not* packed (packages are mapped to the source tree instead);
  what is packed is the unpacked-wheel folder, which setuptools hands to the ``install`` command as its
  ``install_lib``. So in editable mode the file is copied there too.

All metadata stays in pyproject.toml.
"""

from __future__ import annotations

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

PTH = "complexir_mteb.pth"
HERE = Path(__file__).resolve().parent


class build_py_with_pth(build_py):  # setuptools' command naming
    """``build_py`` that also ships the mteb hook's ``.pth`` file at the root of site-packages."""

    def run(self) -> None:
        super().run()
        source = str(HERE / PTH)
        self.copy_file(source, str(Path(self.build_lib) / PTH), preserve_mode=False)
        if getattr(self, "editable_mode", False):
            wheel_root = self.get_finalized_command("install").install_lib
            self.copy_file(source, str(Path(wheel_root) / PTH), preserve_mode=False)

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        return [*super().get_outputs(include_bytecode), str(Path(self.build_lib) / PTH)]


setup(cmdclass={"build_py": build_py_with_pth})
