"""The woods retrieval engine: classify → execute → rank → assemble (a port of Ruby woods 2.0).

Public entry point: `Retriever(stores, embedder_factory, mode=...)`.retrieve(query, ...) →
`RetrievalResult`. The core never prints and never imports an interface.
"""

from woods.retrieval.candidates import (
    Candidate,
    Classification,
    InvalidOptionError,
    InvalidQueryError,
    InvalidScopeError,
    InvalidTypeError,
    RetrievalResult,
    StoreError,
)
from woods.retrieval.retriever import Retriever

__all__ = [
    "Candidate",
    "Classification",
    "InvalidOptionError",
    "InvalidQueryError",
    "InvalidScopeError",
    "InvalidTypeError",
    "RetrievalResult",
    "Retriever",
    "StoreError",
]
