"""Discord: discord.py wiring, slash commands, mentions, retries and stopping."""
