"""The fake Bot API's chats and messages: stored as Telegram keeps them, and the updates a test sends."""

from __future__ import annotations

import itertools
import time
from typing import Any

from fitbot_fakes.telegram_checks import bad_request, utf16_len
from fitbot_fakes.telegram_state import TelegramState


class TelegramStore(TelegramState):
    """Users, chats and messages, and the update payloads tests push."""

    def make_message(
        self,
        text: str,
        chat_id: int = 777,
        chat_type: str = "private",
        user_id: int | None = None,
        language_code: str | None = "en",
        entities: list[dict[str, Any]] | None = None,
        reply_to: int | dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Builds a message update from a user (not yet queued; pass it to push_update)."""
        user = self._user(
            user_id if user_id is not None else (chat_id if chat_type == "private" else 4242), language_code
        )
        chat = self.chats.get(chat_id) or self.add_chat(
            chat_id, chat_type, **({"first_name": user["first_name"]} if chat_type == "private" else {})
        )
        if entities is None and text.startswith("/"):
            entities = [{"type": "bot_command", "offset": 0, "length": utf16_len(text.split()[0])}]
        msg: dict[str, Any] = {
            "message_id": next(self._message_ids.setdefault(chat_id, itertools.count(1))),
            "from": user,
            "chat": chat,
            "date": int(time.time()),
            "text": text,
        }
        if entities:
            msg["entities"] = entities
        if reply_to is not None:
            msg["reply_to_message"] = reply_to if isinstance(reply_to, dict) else self._stored(chat_id, reply_to)
        return {"update_id": next(self._update_ids), "message": msg}

    def make_callback(
        self,
        data: str,
        message_id: int,
        chat_id: int = 777,
        user_id: int | None = None,
        language_code: str | None = "en",
    ) -> dict[str, Any]:
        """Builds a callback_query update for a button on a message the bot sent."""
        message = self._stored(chat_id, message_id)
        query_id = str(next(self._ids) + 9_000_000)
        self._callback_queries[query_id] = False
        user = self._user(user_id if user_id is not None else (chat_id if chat_id > 0 else 4242), language_code)
        return {
            "update_id": next(self._update_ids),
            "callback_query": {
                "id": query_id,
                "from": user,
                "chat_instance": f"ci{chat_id}",
                "data": data,
                "message": message,
            },
        }

    def make_inline_query(
        self,
        query: str,
        user_id: int = 4242,
        offset: str = "",
        chat_type: str | None = "private",
        language_code: str | None = "en",
    ) -> dict[str, Any]:
        """Builds an inline_query update."""
        query_id = str(next(self._ids) + 8_000_000)
        self._inline_queries[query_id] = False
        inline: dict[str, Any] = {
            "id": query_id,
            "from": self._user(user_id, language_code),
            "query": query,
            "offset": offset,
        }
        if chat_type:
            inline["chat_type"] = chat_type
        return {"update_id": next(self._update_ids), "inline_query": inline}

    # ---- internals: storage helpers

    def _user(self, user_id: int, language_code: str | None) -> dict[str, Any]:
        user: dict[str, Any] = {
            "id": user_id,
            "is_bot": False,
            "first_name": "Tess",
            "username": f"tess{user_id}",
        }
        if language_code:
            user["language_code"] = language_code
        return user

    def _register_chat(self, chat: dict[str, Any]) -> None:
        self.chats.setdefault(chat["id"], chat)
        self.messages.setdefault(chat["id"], {})
        self._message_ids.setdefault(chat["id"], itertools.count(1))

    def _stored(self, chat_id: int, message_id: int) -> dict[str, Any]:
        try:
            return self.messages[chat_id][message_id]
        except KeyError:
            raise KeyError(
                f"no message {message_id} in chat {chat_id}; the bot never sent it (use add_bot_message)"
            ) from None

    def _new_message(self, chat: dict[str, Any], **content: Any) -> dict[str, Any]:
        msg = {
            "message_id": next(self._message_ids[chat["id"]]),
            "from": self.bot_user,
            "chat": chat,
            "date": int(time.time()),
            **{k: v for k, v in content.items() if v not in (None, [])},
        }
        self.messages[chat["id"]][msg["message_id"]] = msg
        return msg

    def _chat(self, params: dict[str, Any]) -> dict[str, Any]:
        chat_id = params.get("chat_id")
        if chat_id in (None, ""):
            raise bad_request("chat_id is empty")
        if isinstance(chat_id, str) and chat_id.startswith("@"):
            found = [c for c in self.chats.values() if c.get("username") == chat_id[1:]]
            if found:
                return found[0]
        elif str(chat_id).lstrip("-").isdigit() and int(chat_id) in self.chats:
            return self.chats[int(chat_id)]
        raise bad_request("chat not found")

    def _target(self, params: dict[str, Any], verb: str = "edit") -> dict[str, Any]:
        chat = self._chat(params)
        if params.get("message_id") is None:
            raise bad_request("message identifier is not specified")
        msg = self.messages[chat["id"]].get(int(params["message_id"]))
        if msg is None:
            raise bad_request(f"message to {verb} not found")
        if verb == "edit" and msg["from"]["id"] != self.bot_user["id"]:
            raise bad_request("message can't be edited")
        return msg

    def _wake(self) -> None:
        for waiter in self._parked:
            if not waiter.done():
                waiter.set_result("update")

    def add_chat(self, chat_id: int, chat_type: str = "private", **extra: Any) -> dict[str, Any]:
        """Makes a chat known, so sends to it succeed instead of "chat not found"."""
        chat = {"id": chat_id, "type": chat_type, **extra}
        if chat_type == "private":
            chat.setdefault("first_name", "Tess")
        else:
            chat.setdefault("title", f"Test {chat_type}")
        self._register_chat(chat)
        return self.chats[chat_id]
