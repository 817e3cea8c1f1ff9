"""Sampled metrics and their corrections (work in progress)."""
