"""Live GPU rental prices: provider APIs -> parsed offers -> the price store -> the catalog's offers.

``sources`` knows each provider's API (URL, key, response shape, GPU names); ``store`` keeps every
refreshed price with the time it was seen (``prices.sqlite``, or the shared database); ``refresh``
runs one refresh and merges the newest prices over the shipped snapshot (``catalog/facts/offers.toml``
stays the fallback).
"""
