"""How to read one input table: the options every engine's reader takes.

One value object for the path and the CSV dialect (csvkit's flags: ``-e``, ``-d``/``-t``,
``-H``), so the numpy reader, the Spark reader and every command agree on what a flag means.
``delimiter=None`` asks the reader to sniff (`,` `;` tab `|`) and to say which it chose.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_ENCODING = "utf-8-sig"


@dataclass(frozen=True)
class ReadOptions:
    """The input table and its dialect.

    ``fmt`` is ``csv``, ``parquet`` or None (by the file's extension or magic bytes);
    ``header=False`` reads a headerless file, naming columns ``column_names`` or c1…cn.
    """

    path: str
    encoding: str = DEFAULT_ENCODING
    delimiter: str | None = ","
    header: bool = True
    column_names: tuple[str, ...] | None = None
    fmt: str | None = None

    @property
    def name(self) -> str:
        """The input's name in messages."""
        return "<stdin>" if self.path == "-" else self.path
