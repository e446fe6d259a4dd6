"""Readers and writers: what an input is and how it is read (CSV, Parquet, stdin), the
atomic outputs, and a data set's fingerprint."""
