"""The encoded table: encoding against the schema, the table every reader builds, counting,
coverage and the values a schema does not read."""
