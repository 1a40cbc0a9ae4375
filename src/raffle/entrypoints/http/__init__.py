"""The HTTP API: FastAPI at the edge, use cases behind it."""
