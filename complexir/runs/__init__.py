"""What systems produce and how it is kept: TREC run and qrels files, runs folders, fusion, scoring TREC files,
and the result folders ``complexir run`` writes."""
