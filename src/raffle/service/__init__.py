"""Use cases as plain functions over a unit of work, and the ports they need."""
