"""The benchmark registry: one frozen ``BenchmarkSpec`` per benchmark, which every other room reads."""
