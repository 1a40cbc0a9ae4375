"""Entrypoints: the command line now; HTTP, workers and the scheduler later."""
