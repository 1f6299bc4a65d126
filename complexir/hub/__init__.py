"""Where data comes from and goes to: the data source, provenance, the day-one build cache and its administration,
and publishing to the Hub."""
