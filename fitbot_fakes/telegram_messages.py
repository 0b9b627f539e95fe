"""Bot API methods that send, edit and answer: messages, media, files, callback and inline answers, commands."""

from __future__ import annotations

import json
import time
from typing import Any

from fitbot_fakes.telegram_checks import (
    CHAT_ACTIONS,
    COMMAND_RE,
    INLINE_RESULT_TYPES,
    MAX_CALLBACK_ANSWER,
    MAX_CAPTION,
    MAX_INLINE_RESULTS,
    MAX_TEXT,
    bad_request,
)
from fitbot_fakes.telegram_state import UploadedFile
from fitbot_fakes.telegram_updates import TelegramUpdates


class TelegramMessages(TelegramUpdates):
    """sendMessage and its kin, edits, deletes, answers and the command menu."""

    def _m_sendMessage(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(params)
        text, entities = self._check_text(
            params.get("text"), params.get("parse_mode"), params.get("entities"), MAX_TEXT, "message text"
        )
        markup = self._check_markup(params.get("reply_markup"))
        reply_to = self._check_reply(chat, params)
        return self._new_message(chat, text=text, entities=entities, reply_markup=markup, reply_to_message=reply_to)

    def _send_media(self, params: dict[str, Any], kind: str) -> dict[str, Any]:
        chat = self._chat(params)
        media = params.get(kind)
        if media in (None, ""):
            raise bad_request(f"there is no {kind} in the request")
        caption: str | None = None
        entities: list[dict[str, Any]] = []
        if params.get("caption"):
            caption, entities = self._check_text(
                params["caption"],
                params.get("parse_mode"),
                params.get("caption_entities"),
                MAX_CAPTION,
                "message caption",
            )
        markup = self._check_markup(params.get("reply_markup"))
        reply_to = self._check_reply(chat, params)
        if isinstance(media, UploadedFile):
            if not media.data:
                raise bad_request("file must be non-empty")
            file_id = f"F{kind[:3]}{next(self._ids)}"
            self.files[file_id] = media
            size = len(media.data)
        else:
            file_id, size = str(media), 1024
        unique = f"U{file_id}"
        if kind == "photo":
            content: Any = [
                {"file_id": file_id, "file_unique_id": unique, "width": 640, "height": 480, "file_size": size}
            ]
        else:
            content = {
                "file_id": file_id,
                "file_unique_id": unique,
                "file_size": size,
                "file_name": getattr(media, "filename", None) or "file",
                "mime_type": getattr(media, "content_type", None) or "application/octet-stream",
            }
        return self._new_message(
            chat,
            **{kind: content},
            caption=caption,
            caption_entities=entities,
            reply_markup=markup,
            reply_to_message=reply_to,
        )

    def _m_sendPhoto(self, params: dict[str, Any]) -> dict[str, Any]:
        return self._send_media(params, "photo")

    def _m_sendDocument(self, params: dict[str, Any]) -> dict[str, Any]:
        return self._send_media(params, "document")

    def _m_getFile(self, params: dict[str, Any]) -> dict[str, Any]:
        file_id = params.get("file_id")
        if file_id not in self.files:
            raise bad_request("invalid file_id")
        return {
            "file_id": file_id,
            "file_unique_id": f"U{file_id}",
            "file_size": len(self.files[file_id].data),
            "file_path": f"files/{file_id}",
        }

    def _apply_edit(self, msg: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
        current = {k: msg.get(k) for k in changes}
        normalized = {k: (v if v not in ([], None) else None) for k, v in changes.items()}
        if {k: (v if v not in ([], None) else None) for k, v in current.items()} == normalized:
            raise bad_request(
                "message is not modified: specified new message content and reply markup are exactly "
                "the same as a current content and reply markup of the message"
            )
        for key, value in normalized.items():
            if value is None:
                msg.pop(key, None)
            else:
                msg[key] = value
        msg["edit_date"] = int(time.time())
        return msg

    def _m_editMessageText(self, params: dict[str, Any]) -> Any:
        text, entities = self._check_text(
            params.get("text"), params.get("parse_mode"), params.get("entities"), MAX_TEXT, "message text"
        )
        markup = self._check_markup(params.get("reply_markup"))
        if params.get("inline_message_id"):
            return True
        msg = self._target(params)
        if "text" not in msg:
            raise bad_request("there is no text in the message to edit")
        return self._apply_edit(msg, {"text": text, "entities": entities, "reply_markup": markup})

    def _m_editMessageCaption(self, params: dict[str, Any]) -> Any:
        caption: str | None = None
        entities: list[dict[str, Any]] = []
        if params.get("caption"):
            caption, entities = self._check_text(
                params["caption"],
                params.get("parse_mode"),
                params.get("caption_entities"),
                MAX_CAPTION,
                "message caption",
            )
        markup = self._check_markup(params.get("reply_markup"))
        if params.get("inline_message_id"):
            return True
        msg = self._target(params)
        if "text" in msg:
            raise bad_request("there is no caption in the message to edit")
        return self._apply_edit(msg, {"caption": caption, "caption_entities": entities, "reply_markup": markup})

    def _m_editMessageReplyMarkup(self, params: dict[str, Any]) -> Any:
        markup = self._check_markup(params.get("reply_markup"))
        if params.get("inline_message_id"):
            return True
        return self._apply_edit(self._target(params), {"reply_markup": markup})

    def _m_deleteMessage(self, params: dict[str, Any]) -> bool:
        msg = self._target(params, verb="delete")
        del self.messages[msg["chat"]["id"]][msg["message_id"]]
        return True

    def _m_sendChatAction(self, params: dict[str, Any]) -> bool:
        self._chat(params)
        if params.get("action") not in CHAT_ACTIONS:
            raise bad_request("wrong parameter action in request")
        return True

    def _m_answerCallbackQuery(self, params: dict[str, Any]) -> bool:
        query_id = str(params.get("callback_query_id", ""))
        if self._callback_queries.get(query_id, True):
            raise bad_request("query is too old and response timeout expired or query ID is invalid")
        if len(params.get("text") or "") > MAX_CALLBACK_ANSWER:
            raise bad_request("MESSAGE_TOO_LONG")
        self._callback_queries[query_id] = True
        return True

    def _m_answerInlineQuery(self, params: dict[str, Any]) -> bool:
        query_id = str(params.get("inline_query_id", ""))
        if self._inline_queries.get(query_id, True):
            raise bad_request("query is too old and response timeout expired or query ID is invalid")
        results = params.get("results")
        if not isinstance(results, list):
            raise bad_request("can't parse inline query results JSON object")
        if len(results) > MAX_INLINE_RESULTS:
            raise bad_request("RESULTS_TOO_MUCH")
        if len(str(params.get("next_offset") or "").encode()) > 64:
            raise bad_request("NEXT_OFFSET_INVALID")
        seen: set[str] = set()
        for result in results:
            rid = str(result.get("id", ""))
            if not 1 <= len(rid.encode()) <= 64:
                raise bad_request("RESULT_ID_INVALID")
            if rid in seen:
                raise bad_request("RESULT_ID_DUPLICATE")
            seen.add(rid)
            if result.get("type") not in INLINE_RESULT_TYPES:
                raise bad_request("RESULT_TYPE_INVALID")
            if result["type"] == "article" and not result.get("title"):
                raise bad_request("ARTICLE_TITLE_EMPTY")
            content = result.get("input_message_content")
            if result["type"] == "article" and not content:
                raise bad_request("MESSAGE_EMPTY")
            if content and "message_text" in content:
                self._check_text(
                    content["message_text"],
                    content.get("parse_mode"),
                    content.get("entities"),
                    MAX_TEXT,
                    "message text",
                )
            if result.get("caption"):
                self._check_text(
                    result["caption"],
                    result.get("parse_mode"),
                    result.get("caption_entities"),
                    MAX_CAPTION,
                    "message caption",
                )
            self._check_markup(result.get("reply_markup"))
        self._inline_queries[query_id] = True
        return True

    @staticmethod
    def _commands_key(params: dict[str, Any]) -> tuple[str, str]:
        scope = params.get("scope") or {"type": "default"}
        return json.dumps(scope, sort_keys=True), str(params.get("language_code") or "")

    def _m_setMyCommands(self, params: dict[str, Any]) -> bool:
        commands = params.get("commands")
        if not isinstance(commands, list) or len(commands) > 100:
            raise bad_request("can't parse commands JSON object")
        for command in commands:
            if not COMMAND_RE.match(str(command.get("command", ""))):
                raise bad_request("BOT_COMMAND_INVALID")
            if not 1 <= len(str(command.get("description", ""))) <= 256:
                raise bad_request("BOT_COMMAND_DESCRIPTION_INVALID")
        self.commands[self._commands_key(params)] = commands
        return True

    def _m_getMyCommands(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        return self.commands.get(self._commands_key(params), [])

    def _m_deleteMyCommands(self, params: dict[str, Any]) -> bool:
        self.commands.pop(self._commands_key(params), None)
        return True
