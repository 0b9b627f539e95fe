"""The Telegram adapter's parts that need no application: its strings, button keyboards, message
filters and quoting, and "feel the speed" streaming into a pressed message."""

from __future__ import annotations

import asyncio
import html
import re
from collections.abc import Sequence
from typing import Any

from telegram import (
    CallbackQuery,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Message,
    ReplyParameters,
    Update,
)
from telegram.constants import ChatType
from telegram.error import BadRequest
from telegram.ext import Application, ContextTypes, ExtBot, JobQueue, filters

from bot.adapters.buttons import ButtonStore
from bot.adapters.feel import reveal
from bot.cards.menu import platform_lang, telegram_feel_done, telegram_feel_rate, telegram_text
from bot.render.telegram_html import MAX_CAPTION, MAX_TEXT, TelegramMessage, telegram_visible_length
from bot.reply import Lang, Reply
from bot.service import Service

# The application ``build_application`` makes (its bot is an ExtBot[int]: it has a rate limiter; tests' may not).
TelegramApp = Application[
    ExtBot[Any],
    ContextTypes.DEFAULT_TYPE,
    dict[Any, Any],
    dict[Any, Any],
    dict[Any, Any],
    JobQueue[ContextTypes.DEFAULT_TYPE],
]

MAX_CALLBACK_BYTES = 64
SHORT_LABEL = 20  # buttons with labels up to this long go two to a row
FEEL_MAX_S = 10.0
FEEL_EDIT_S = {"private": 1.0, "group": 3.0}


def say(lang: Lang, key: str, **params: object) -> str:
    """A Telegram-adapter string from the ``[telegram]`` table of locales/."""
    return telegram_text(lang, key, **params)


# --------------------------------------------------------------------------- buttons


def callback_data(query: str, store: ButtonStore) -> str:
    """ "q:<query>" when it fits Telegram's 64 bytes, else "k:<key>" into ``store``."""
    data = "q:" + query
    return data if len(data.encode()) <= MAX_CALLBACK_BYTES else "k:" + store.put(query)


def keyboard(reply: Reply, buttons: Sequence[tuple[str, int]], store: ButtonStore) -> InlineKeyboardMarkup | None:
    """The card's follow-up actions as an inline keyboard; short labels go two to a row."""
    keys = [
        InlineKeyboardButton(label, callback_data=callback_data(reply.actions[i].query, store)) for label, i in buttons
    ]
    rows: list[list[InlineKeyboardButton]] = []
    for key in keys:
        if rows and len(rows[-1]) == 1 and len(rows[-1][0].text) <= SHORT_LABEL and len(key.text) <= SHORT_LABEL:
            rows[-1].append(key)
        else:
            rows.append([key])
    return InlineKeyboardMarkup(rows) if rows else None


# --------------------------------------------------------------------------- helpers


def mention_pattern(username: str | None) -> re.Pattern[str] | None:
    return re.compile(rf"(?<!\w)@{re.escape(username)}\b", re.IGNORECASE) if username else None


class AddressedToBot(filters.MessageFilter):
    """Private messages, and group messages that mention the bot or reply to one of its messages."""

    def filter(self, message: Message) -> bool:
        if message.chat.type == ChatType.PRIVATE:
            return True
        bot = message.get_bot()
        replied = message.reply_to_message
        if replied is not None and replied.from_user is not None and replied.from_user.id == bot.id:
            return True
        pattern = mention_pattern(bot.username)
        return bool(pattern and pattern.search(message.text or ""))


def is_group(update: Update) -> bool:
    chat = update.effective_chat
    return chat is not None and chat.type != ChatType.PRIVATE


def update_lang(update: Update) -> Lang:
    """The language of the adapter's own short texts: the user's Telegram language."""
    user = update.effective_user
    return platform_lang(user.language_code if user else None)


def quote_of(message: Message, update: Update) -> ReplyParameters | None:
    """In groups, answers quote the question so the thread stays readable."""
    if not is_group(update):
        return None
    return ReplyParameters(message_id=message.message_id, allow_sending_without_reply=True)


def as_caption(messages: Sequence[TelegramMessage]) -> str | None:
    """The whole card as a photo caption, when it is one message within the caption limit."""
    if len(messages) == 1 and telegram_visible_length(messages[0].text) <= MAX_CAPTION:
        return messages[0].text
    return None


def not_modified(exc: BadRequest) -> bool:
    return "not modified" in exc.message.lower()


class FeelStreams:
    """The ⚡ button: sample text streamed into the pressed message at the estimated decode rate."""

    service: Service
    store: ButtonStore
    streams: dict[str, asyncio.Task[None]]

    async def _edit(
        self, cq: CallbackQuery, text: str, markup: InlineKeyboardMarkup | None, caption: bool
    ) -> None:  # pragma: no cover - the adapter's own
        raise NotImplementedError

    def start_stream(
        self, cq: CallbackQuery, update: Update, context: ContextTypes.DEFAULT_TYPE, question: str
    ) -> None:
        """Streams the sample text into the pressed message; a new press on it cancels the old stream."""
        msg = cq.message
        key = cq.inline_message_id or f"{msg.chat.id}:{msg.message_id}"  # type: ignore[union-attr]
        if (old := self.streams.pop(key, None)) is not None:
            old.cancel()
        task = context.application.create_task(self.stream(cq, update, context, question), update=update)
        self.streams[key] = task
        task.add_done_callback(lambda t: self.streams.pop(key, None) if self.streams.get(key) is t else None)

    async def stream(
        self, cq: CallbackQuery, update: Update, context: ContextTypes.DEFAULT_TYPE, question: str
    ) -> None:
        lang, caption = update_lang(update), isinstance(cq.message, Message) and bool(cq.message.photo)
        back = InlineKeyboardMarkup(
            [[InlineKeyboardButton(say(lang, "feel.back"), callback_data=callback_data(question, self.store))]]
        )
        rate = await self.service.decode_speed(question)
        if not rate or rate <= 0:
            await self._edit(cq, html.escape(say(lang, "feel.unknown")), back, caption)
            return
        sample, limit = say(lang, "sample"), (MAX_CAPTION if caption else MAX_TEXT) - 120
        interval = FEEL_EDIT_S["group" if is_group(update) else "private"]
        head = f"⏱ <b>{html.escape(say(lang, 'feel.title'))}</b> · {html.escape(telegram_feel_rate(rate, lang))}"
        async for written, elapsed, finished in reveal(rate, sample, every_s=interval, max_s=FEEL_MAX_S, room=limit):
            if not context.application.running:
                return
            if finished:
                done = telegram_feel_done(rate, elapsed, lang)
                await self._edit(cq, f"✅ {html.escape(done)}\n\n{html.escape(written)}", back, caption)
            else:
                await self._edit(cq, f"{head}\n\n{html.escape(written)}▌", None, caption)
