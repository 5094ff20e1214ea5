"""What the health app tells the apps above it; it knows none of them."""

from __future__ import annotations

from django.dispatch import Signal

# Sent after each periodic evaluation has stored its colours (``result``: EvaluationResult, whose
# trees are what was stored); receivers run in the evaluating worker, right after.
evaluated = Signal()
