"""Reading and checking inputs: CSV tables, schemas, and the counting module."""
