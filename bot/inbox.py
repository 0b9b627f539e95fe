"""The durable inboxes the adapters work with: Telegram updates saved before they are confirmed,
and Discord interactions deferred across a crash. They live in the user database (``catalog.inbox``);
adapters reach them through here, as they reach everything else through the bot layer."""

from __future__ import annotations

from catalog.inbox import DeferredJournal, InboxItem, InboxStore, PendingInteraction

__all__ = ["DeferredJournal", "InboxItem", "InboxStore", "PendingInteraction"]
