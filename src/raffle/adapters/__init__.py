"""Adapters: storage, cache, randomness and files behind the ports the service layer names."""
