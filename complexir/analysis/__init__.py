"""Reading results: paired statistics, published numbers, tables, charts, the model-card report and comparisons."""
