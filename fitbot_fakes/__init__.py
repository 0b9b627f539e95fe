"""Strict loopback fakes of the Telegram Bot API and the Discord REST API + gateway."""
