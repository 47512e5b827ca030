"""Each unit's lexical-index document: which of its words go in which field.

Why a container contributes its skeleton, not its whole text: a class or module holds its members'
bodies, and each member is a unit with its own document. Indexing the bodies again under the
container would make every word count three times (method, class, module), so a container's body
field holds its own lines with each member reduced to its first line — its signature — which is
what a container says about itself.
"""

from __future__ import annotations

from collections.abc import Sequence

from woods.chunking import skeleton_source
from woods.store.metadata import LexicalDocument, unit_name
from woods.tokens import code_tokens, identifier_tokens, join_tokens, path_tokens
from woods.units import Unit

# Words indexed per body at most: beyond this a unit is data (a 2 MB fixture, a generated table),
# and its first 50k words already say what it is about.
MAX_BODY_TOKENS = 50_000


def lexical_document(unit: Unit, members: Sequence[Unit] = ()) -> LexicalDocument:
    """The unit's fields, cut into code-aware tokens (`woods.tokens`)."""
    name = unit_name(unit.identifier)
    qualifier = unit.identifier[: max(0, len(unit.identifier) - len(name))]
    body = skeleton_source(unit, members) if members else unit.source_code
    doc = "\n".join(part for part in (unit.signature, unit.docstring) if part)
    return LexicalDocument(
        name=join_tokens(identifier_tokens(name)),
        qualifier=join_tokens(identifier_tokens(qualifier)),
        path=join_tokens(path_tokens(unit.file_path)),
        doc=join_tokens(code_tokens(doc)),
        body=join_tokens(code_tokens(body)[:MAX_BODY_TOKENS]),
    )
