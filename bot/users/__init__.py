"""Who asks: the user, their saved defaults, usage and rate limits."""
