"""The ranges every stored number keeps to: ids are signed 64-bit keys, counts 32-bit."""

from __future__ import annotations

MAX_ID = 2**63 - 1  # activity, strategy, award, pack and SKU ids: BIGINT columns
MAX_COUNT = 2**31 - 1  # stock, chances, prices and points: INTEGER columns
