"""The schema: the YAML parsed (``parse.py``), drafted from a table (``draft.py``), imported
from other tools' files (``importers.py``), and its dates (``dates.py``)."""
