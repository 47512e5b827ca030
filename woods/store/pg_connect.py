"""Connecting to a PostgreSQL store: URL handling, the one-line errors, the pgvector adapters.

Why a module of its own: readers (`woods.store.postgres`) and the publisher
(`woods.store.pg_publish`) connect the same way and must fail the same way — a wrong URL, a server
that is down, a missing `psycopg` or a missing pgvector extension is bad input (exit 2) with the
fix in one line, never a traceback. psycopg is imported only here and only when a PostgreSQL store
is used: the local backend never needs it.

Credentials come from the URL or libpq's standard `PG*` environment variables (PGPASSWORD,
PGHOST, PGUSER …; libpq reads them itself), never from a file in the repository.
"""

from __future__ import annotations

import re
import struct
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from woods.errors import InputError

if TYPE_CHECKING:
    import numpy as np

# Store URLs that select the PostgreSQL backend (libpq accepts both schemes).
URL_SCHEMES = ("postgresql://", "postgres://")
# The PostgreSQL schema that holds every woods table of a database.
SCHEMA = "woods"
# Seconds a connection attempt may take before it is reported as a server that is down.
CONNECT_TIMEOUT_SECONDS = 10
# A repository (collection) name: what `--repo` takes and what result rows show. No `:` — a
# multi-repository store namespaces unit keys as `<repo>:<key>`.
REPO_NAME = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,99}\Z")
INSTALL_HINT = "pip install 'woods[postgres]'"


def is_server_url(spec: object) -> bool:
    """True when a `--store` value names a PostgreSQL database rather than a directory."""
    return isinstance(spec, str) and spec.startswith(URL_SCHEMES)


def redact(url: str) -> str:
    """The URL without its password (for messages, status output and summaries)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    user = parts.username or ""
    netloc = f"{user}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def check_repo_name(name: str) -> str:
    if not REPO_NAME.match(name):
        raise InputError(
            f"invalid repository name {name!r}: use letters, digits, '.', '_' or '-' (at most 100), "
            "e.g. --repo my-service"
        )
    return name


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        raise InputError(f"the PostgreSQL backend needs psycopg, which is not installed; run {INSTALL_HINT}") from None
    return psycopg


def connect(url: str, *, autocommit: bool = True) -> Any:
    """An open psycopg connection with the vector adapters registered, or InputError (exit 2)."""
    psycopg = _psycopg()
    try:
        conn = psycopg.connect(url, autocommit=autocommit, connect_timeout=CONNECT_TIMEOUT_SECONDS)
    except psycopg.Error as exc:
        first = (str(exc).strip().splitlines() or [exc.__class__.__name__])[0]
        raise InputError(
            f"cannot connect to PostgreSQL at {redact(url)} ({first}); check that the server is running and "
            "the URL (or the PG* environment variables) names it"
        ) from None
    return conn


def vector_oid(conn: Any) -> int | None:
    row = conn.execute("SELECT oid FROM pg_type WHERE typname = 'vector'").fetchone()
    return None if row is None else int(row[0])


def missing_pgvector(url: str) -> InputError:
    return InputError(
        f"the database at {redact(url)} has no pgvector extension; run `CREATE EXTENSION vector;` in it as a "
        "superuser (pgvector 0.8 or newer), then index again"
    )


def register_vectors(conn: Any, oid: int) -> None:
    """Binary dump and load of pgvector's `vector` for numpy float32 arrays on this connection."""
    import numpy as np
    from psycopg.adapt import Dumper, Loader
    from psycopg.pq import Format

    class VectorDumper(Dumper):
        format = Format.BINARY

        def dump(self, obj: Any) -> bytes:
            array = np.asarray(obj, dtype=">f4").reshape(-1)
            return struct.pack(">HH", array.shape[0], 0) + array.tobytes()

    class VectorLoader(Loader):
        format = Format.BINARY

        def load(self, data: Any) -> np.ndarray:
            raw = bytes(data)
            (dim,) = struct.unpack_from(">H", raw, 0)
            return np.frombuffer(raw, dtype=">f4", count=dim, offset=4).astype(np.float32)

    VectorDumper.oid = oid
    conn.adapters.register_dumper(np.ndarray, VectorDumper)
    conn.adapters.register_loader(oid, VectorLoader)


def first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [exc.__class__.__name__])[0]
