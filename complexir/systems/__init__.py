"""What produces a ranking: which kind a system is and the mteb search model built for it (``kinds``), the models,
long documents, the embedding store, exact streamed search and its Ray engine."""
