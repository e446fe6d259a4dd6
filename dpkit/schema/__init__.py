"""The schema: the YAML parsed (``parse.py``), drafted from a table (``draft.py``), imported
from other tools' files (``importers.py``), its dates (``dates.py``) and the column names a user
gives or a header holds (``names.py``)."""
