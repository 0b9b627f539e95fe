"""Bot API methods about the bot itself and what it receives: getMe, webhooks, the getUpdates long poll,
chat members; and the checks of text, markup and replies the sending methods share."""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

from fitbot_fakes.telegram_checks import BUTTON_ACTIONS, SECRET_RE, ApiError, bad_request
from fitbot_fakes.telegram_http import TelegramHttp
from fitbot_fakes.telegram_text import parse_text


class TelegramUpdates(TelegramHttp):
    """getMe, logOut, close, webhooks, getUpdates, getChatMember and the shared checks."""

    # ---- Bot API methods

    def _m_getMe(self, params: dict[str, Any]) -> dict[str, Any]:
        return self.bot_user

    def _m_logOut(self, params: dict[str, Any]) -> bool:
        return True

    def _m_close(self, params: dict[str, Any]) -> bool:
        return True

    def _m_deleteWebhook(self, params: dict[str, Any]) -> bool:
        self.webhook = {}
        if params.get("drop_pending_updates"):
            self.updates.clear()
        return True

    def _m_setWebhook(self, params: dict[str, Any]) -> bool:
        url = params.get("url") or ""
        if not url:
            return self._m_deleteWebhook(params)
        if not url.startswith("https://"):
            raise bad_request("bad webhook: An HTTPS URL must be provided for webhook")
        secret = params.get("secret_token")
        if secret is not None and not SECRET_RE.match(str(secret)):
            raise bad_request("secret token contains unallowed characters")
        if not 1 <= int(params.get("max_connections", 40)) <= 100:
            raise bad_request("bad webhook: max_connections must be between 1 and 100")
        if params.get("drop_pending_updates"):
            self.updates.clear()
        self.webhook = dict(params)
        return True

    def _m_getWebhookInfo(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "url": self.webhook.get("url", ""),
            "has_custom_certificate": False,
            "pending_update_count": len(self.updates),
            "max_connections": self.webhook.get("max_connections", 40),
        }

    async def _m_getUpdates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        if self.webhook.get("url"):
            raise ApiError(
                409,
                "Conflict: can't use getUpdates method while webhook is active; "
                "use deleteWebhook to delete the webhook first",
            )
        offset = int(params.get("offset") or 0)
        limit = int(params.get("limit") or 100)
        if not 1 <= limit <= 100:
            limit = 100
        timeout = max(0.0, float(params.get("timeout") or 0))
        allowed = params.get("allowed_updates") or None
        # A newer poll terminates every parked one, as Telegram does for two bot instances.
        for waiter in self._parked:
            if not waiter.done():
                waiter.set_result("conflict")
        if offset > 0:
            self.updates = [u for u in self.updates if u["update_id"] >= offset]
        elif offset < 0:
            self.updates = self.updates[offset:]
        deadline = time.monotonic() + timeout
        while True:
            batch = [u for u in self.updates if allowed is None or set(u) & set(allowed)][:limit]
            remaining = deadline - time.monotonic()
            if batch or remaining <= 0 or self._closing:
                return batch
            waiter = asyncio.get_running_loop().create_future()
            self._parked.append(waiter)
            try:
                reason = await asyncio.wait_for(asyncio.shield(waiter), remaining)
            except TimeoutError:
                reason = "timeout"
            finally:
                self._parked.remove(waiter)
            if reason == "conflict":
                raise ApiError(
                    409,
                    "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
                )

    def _check_text(
        self, text: Any, parse_mode: Any, entities: Any, limit: int, what: str
    ) -> tuple[str, list[dict[str, Any]]]:
        if not isinstance(text, str):
            text = "" if text is None else str(text)
        plain, parsed = parse_text(text, parse_mode, entities)
        if not plain.strip():
            raise bad_request(f"{what} is empty")
        if len(plain) > limit:
            raise bad_request(f"{what} is too long")
        return plain, parsed

    def _check_markup(self, markup: Any) -> dict[str, Any] | None:
        if markup is None:
            return None
        if not isinstance(markup, dict):
            raise bad_request("can't parse reply keyboard markup JSON object")
        if "inline_keyboard" not in markup:
            if not {"keyboard", "remove_keyboard", "force_reply"} & set(markup):
                raise bad_request("can't parse reply keyboard markup JSON object")
            return None
        rows = markup["inline_keyboard"]
        if not isinstance(rows, list) or not all(isinstance(r, list) for r in rows):
            raise bad_request('can\'t parse inline keyboard markup: field "inline_keyboard" must be an Array of Arrays')
        if sum(len(r) for r in rows) > 100:
            raise bad_request("reply markup is too long")
        for row in rows:
            for button in row:
                if not isinstance(button, dict) or not button.get("text"):
                    raise bad_request("BUTTON_TEXT_INVALID")
                actions = BUTTON_ACTIONS & set(button)
                if len(actions) != 1:
                    raise bad_request("can't parse inline keyboard button: exactly one optional field must be used")
                if "callback_data" in button:
                    data = button["callback_data"]
                    if not isinstance(data, str) or not 1 <= len(data.encode("utf-8")) <= 64:
                        raise bad_request("BUTTON_DATA_INVALID")
                if "url" in button and not re.match(r"^(https?|tg)://\S+$", str(button["url"])):
                    raise bad_request("BUTTON_URL_INVALID")
        return markup

    def _check_reply(self, chat: dict[str, Any], params: dict[str, Any]) -> dict[str, Any] | None:
        ref = params.get("reply_parameters")
        if ref is None and params.get("reply_to_message_id") is not None:
            ref = {"message_id": params["reply_to_message_id"]}
        if not ref:
            return None
        target = self.messages[chat["id"]].get(int(ref.get("message_id", 0)))
        if target is None and not ref.get("allow_sending_without_reply"):
            raise bad_request("message to be replied not found")
        return target

    def _m_getChatMember(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(params)
        user_id = int(params.get("user_id") or 0)
        user = self._user(user_id, None)
        if chat["type"] == "private":
            return {"status": "member", "user": user}
        if user_id not in self.admins.get(chat["id"], set()):
            return {"status": "member", "user": user}
        rights = [
            "can_be_edited",
            "can_manage_chat",
            "can_delete_messages",
            "can_manage_video_chats",
            "can_restrict_members",
            "can_promote_members",
            "can_change_info",
            "can_invite_users",
            "can_post_stories",
            "can_edit_stories",
            "can_delete_stories",
        ]
        return {
            "status": "administrator",
            "user": user,
            "is_anonymous": False,
            **{r: r != "can_be_edited" for r in rights},
        }
