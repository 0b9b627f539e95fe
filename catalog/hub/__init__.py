"""Hugging Face: live look-ups, the offline index, search and the hub's requests."""
