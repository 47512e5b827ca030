"""The woods version, in a module of its own so any module can read it without importing the
package's `__init__` (which lazily exposes the API): no import cycle through the version."""

__version__ = "0.1.0"
