"""A query longer than MiniLM's input is embedded piece by piece, never refused for its length."""

from __future__ import annotations

import numpy as np
import pytest

from woods.embedding.encoder import NumpyMiniLMEncoder
from woods.embedding.pooled import PooledQueryEncoder

TRACE = """Traceback (most recent call last):
  File "/srv/app/venv/lib/python3.11/site-packages/flask/app.py", line 1455, in wsgi_app
    response = self.full_dispatch_request()
  File "/srv/app/venv/lib/python3.11/site-packages/flask/app.py", line 869, in full_dispatch_request
    rv = self.handle_user_exception(e)
  File "/srv/app/billing/views.py", line 88, in charge_invoice
    receipt = gateway.capture(invoice.amount_due, currency=invoice.currency)
  File "/srv/app/billing/gateway.py", line 41, in capture
    raise PaymentDeclined(f"card declined for {amount} {currency}: insufficient_funds")
billing.gateway.PaymentDeclined: card declined for 120.00 EUR: insufficient_funds
"""


@pytest.fixture(scope="module")
def encoder() -> NumpyMiniLMEncoder:
    return NumpyMiniLMEncoder()


def test_a_text_that_fits_is_embedded_as_before(encoder):
    pooled = PooledQueryEncoder(encoder)
    np.testing.assert_array_equal(pooled.embed("charge a customer's invoice"), encoder.embed("charge a customer's invoice"))


def test_a_long_trace_is_embedded_from_pieces_that_fit(encoder):
    text = TRACE * 4
    assert encoder.count_tokens(text) > encoder.max_input_tokens
    pooled = PooledQueryEncoder(encoder)
    pieces = pooled.pieces(text, encoder.max_input_tokens)
    assert len(pieces) >= 2 and all(encoder.count_tokens(p) <= encoder.max_input_tokens for p in pieces)
    assert "".join(pieces).split() == text.split()  # every word, in order
    vector = pooled.embed(text)
    assert vector.shape == (encoder.dimension,) and abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5
    # The pooled vector stays close to what the trace alone says.
    assert float(vector @ encoder.embed(TRACE)) > 0.8


def test_a_single_enormous_line_and_word_are_cut_too(encoder):
    pooled = PooledQueryEncoder(encoder)
    line = " ".join(f"token{i}" for i in range(600))
    word = "x" * 5000
    for text in (line, word, line + "\n" + word):
        pieces = pooled.pieces(text, encoder.max_input_tokens)
        assert all(encoder.count_tokens(p) <= encoder.max_input_tokens for p in pieces)
        assert "".join(pieces).replace(" ", "").replace("\n", "") == text.replace(" ", "").replace("\n", "")
        assert pooled.embed(text).shape == (encoder.dimension,)
