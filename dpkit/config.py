"""Parameter config files (``configs/*.yaml``): plain mappings of option names to values."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from dpkit.errors import DpkitUsageError


def load_config(path: str | Path, section: str | None = None) -> dict[str, Any]:
    """Read a config mapping; if it has a key ``section`` holding a mapping, use that part."""
    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DpkitUsageError(f"{p}: config file not found") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"{p}:{mark.line + 1}:{mark.column + 1}" if mark else str(p)
        raise DpkitUsageError(f"{where}: YAML syntax error: {exc.problem}") from None
    except (yaml.YAMLError, OSError, UnicodeDecodeError) as exc:
        raise DpkitUsageError(f"{p}: cannot read config: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise DpkitUsageError(f"{p}: a config file must be a mapping of option names to values")
    if section and isinstance(data.get(section), dict):
        data = data[section]
    return dict(data)
