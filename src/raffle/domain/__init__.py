"""The pure domain: strategies, the exact sampler, draw rules. Imports nothing but itself."""
