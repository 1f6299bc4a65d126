"""complexir inside mteb: the import hook that registers our tasks with mteb's registries, and the one module that
reaches mteb's private names (``internals``)."""
