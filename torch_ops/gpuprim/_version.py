"""gpuprim's version: the one place it is written (setup.py, CMakeLists.txt and the docs read it here)."""
__version__ = "0.1.0"
