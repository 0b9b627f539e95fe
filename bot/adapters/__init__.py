"""bot/adapters"""
