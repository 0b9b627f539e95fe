"""A parsed question → a ``Reply``: the router, the resolver, and one module per answer kind."""
