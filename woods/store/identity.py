"""Storage keys for units: the public identifier, or a typed key when two types share it (#225).

Why: Ruby woods lets one identifier exist under several unit types (a `Shared` lib and a `Shared`
model). Such units must stay two records, two graph nodes and two ranking units, yet every place
that shows a name must show the plain identifier. A unit whose identifier is unique is stored under
the identifier itself; each variant of a shared identifier under
`@woods-unit:` + unpadded base64url(JSON [identifier, type]) — the Ruby gem's StorageIdentity format.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from woods.units import Unit

TYPED_KEY_PREFIX = "@woods-unit:"

# Embedding ids of multi-text units end in `#chunk_<i>` (Ruby indexer rule); stripped everywhere.
CHUNK_SUFFIX = re.compile(r"#chunk_\d+\Z")


def typed_key(identifier: str, unit_type: str, *where: str | int) -> str:
    """`@woods-unit:` key for [identifier, type] (Ruby format); `where` (file, line) is appended only
    to tell apart units that share identifier *and* type (a Ruby class reopened in two files)."""
    payload = json.dumps([str(identifier), str(unit_type), *where], separators=(",", ":"), ensure_ascii=False)
    encoded = base64.urlsafe_b64encode(payload.encode("utf-8")).decode("ascii").rstrip("=")
    return TYPED_KEY_PREFIX + encoded


def key_parts(key: str) -> tuple[str, str] | None:
    """(identifier, type) of a typed key, or None for a plain identifier or a malformed key."""
    if not key.startswith(TYPED_KEY_PREFIX):
        return None
    encoded = key[len(TYPED_KEY_PREFIX) :]
    try:
        raw = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
        parts = json.loads(raw.decode("utf-8"))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None
    if isinstance(parts, list) and len(parts) >= 2 and isinstance(parts[0], str) and isinstance(parts[1], str):
        return parts[0], parts[1]
    return None


def public_identifier(key: str) -> str:
    """The identifier a person sees for a storage key (the key itself when it is not typed)."""
    parts = key_parts(key)
    return parts[0] if parts else key


def strip_chunk(embedding_id: str) -> str:
    """`X#chunk_3` → `X`; anything else unchanged."""
    return CHUNK_SUFFIX.sub("", embedding_id)


def assign_keys(units: Sequence[Unit]) -> list[str]:
    """Storage keys for `units`, in order: the identifier when it is unique in the index, the typed
    key when several types share it, and the located typed key when identifier and type repeat."""
    per_identifier = Counter(u.identifier for u in units)
    per_typed = Counter((u.identifier, u.type) for u in units)
    keys = []
    for unit in units:
        if per_identifier[unit.identifier] == 1:
            keys.append(unit.identifier)
        elif per_typed[(unit.identifier, unit.type)] == 1:
            keys.append(typed_key(unit.identifier, unit.type))
        else:
            keys.append(typed_key(unit.identifier, unit.type, unit.file_path, unit.line_start))
    return keys
