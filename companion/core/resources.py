"""Where the shipped files are: inside the installed package, or at the top of a source checkout."""

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent  # companion/, above core/


def _find(name: str) -> Path:
    # A wheel carries `web/` and `seeds/` inside the package; a source checkout has them one level up.
    for candidate in (_PACKAGE / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"cannot find the {name}/ folder next to {_PACKAGE}")


def web_dir() -> Path:
    return _find("web")


def seeds_dir() -> Path:
    return _find("seeds")
