"""Telegram: python-telegram-bot wiring, polling, the durable inbox and shared workers."""
