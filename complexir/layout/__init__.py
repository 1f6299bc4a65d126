"""The standard layout: a benchmark folder that is a Hub dataset repo (schema, card, writer, reader, validation),
and the safe file operations every writer of ours uses (``atomic``) with the errors they raise."""
