"""What systems produce and how it is kept: TREC run and qrels files, runs folders, fusion, scoring TREC files,
and the result folders ``complexir run`` writes."""

#: the system names of a release's own runs scored as systems (``complexir run --release-runs``):
#: ``release/<run name>``; here, where importing it costs nothing (the folder module loads pyarrow)
RELEASED_SYSTEM_PREFIX = "release"
