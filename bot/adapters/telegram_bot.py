"""The Telegram adapter: python-telegram-bot wiring, handlers, and the ``fitbot run`` entry point.

Every handler reads the platform input, asks ``Service.answer``, renders with ``bot.render.text`` and
sends; nothing here builds HTML from user text (``render`` escapes, the few strings of our own are
escaped or static). ``build_application`` registers all handlers and the error handler in one place,
and both production (``run_telegram``) and the tests use it.

Design decisions:

* Buttons carry their question in ``callback_data`` ("q:" + query) when it fits Telegram's 64 bytes,
  so they keep working after a restart. Longer ones get "k:" + a key into an in-memory store with
  expiry and a size cap; after a restart (or expiry) such a button answers "this card expired, ask
  again" in the user's language.
* Languages and saved defaults (/lang, /mygpu) belong to the service; the adapter passes the
  Telegram ``language_code`` as the locale and the user and group ids.
* A card with a chart is one photo with the card as caption when the card fits Telegram's caption
  limit; otherwise the card goes out as text (with its buttons) and the chart follows as a photo with
  a short caption. A pressed button edits the card it sits on (the caption of a photo card); the
  picture of a photo card is not replaced.
* HTTP goes through ``AiohttpRequest``: PTB's default httpx stack costs about twice the CPU per
  update (shared/research/bot-testing.md section 1.6); a small pool plus modest
  ``concurrent_updates`` avoids httpcore's O(connections x queued) pool pass as well.
* "Feel the speed" streams a sample text by editing the message at most once per second (every
  three seconds in groups, which allow 20 messages a minute) for at most ten seconds; a new press on
  the same message cancels the old stream, and the stream ends early when the application stops.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import html
import logging
import re
import secrets
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from telegram import (
    BotCommand,
    CallbackQuery,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InlineQueryResultArticle,
    InputFile,
    InputTextMessageContent,
    LinkPreviewOptions,
    Message,
    ReplyParameters,
    Update,
)
from telegram.constants import ChatType, ParseMode
from telegram.error import BadRequest, NetworkError, TelegramError, TimedOut
from telegram.ext import (
    AIORateLimiter,
    Application,
    ApplicationBuilder,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    InlineQueryHandler,
    MessageHandler,
    filters,
)
from telegram.request import BaseRequest, RequestData

from bot.adapters.buttons import ButtonStore
from bot.adapters.feel import feel_question, reveal
from bot.render.charts import render_png
from bot.render.telegram_html import (
    MAX_CAPTION,
    MAX_TEXT,
    TelegramMessage,
    caption_for_photo,
    telegram_visible_length,
    to_telegram,
)
from bot.render.text import one_line, to_console
from bot.reply import Reply
from bot.service import Service, User
from locales import Lang, lang_of, num, t, tokens_per_s

log = logging.getLogger(__name__)

MENU = (
    "fit",
    "speed",
    "cloud",
    "quant",
    "gpus",
    "models",
    "finetune",
    "tco",
    "compare",
    "mygpu",
    "lang",
    "settings",
    "forget",
    "help",
    "start",
)
ALLOWED_UPDATES = ["message", "callback_query", "inline_query"]
INLINE_CARDS = (("fit", "/fit"), ("quant", "/quant"), ("cloud", "/cloud"))
INLINE_CACHE_S = 30
MAX_CALLBACK_BYTES = 64
MAX_CHAT_MESSAGES = 3  # a card longer than this goes out as its first message plus a text document
CONCURRENT_UPDATES = 16
POOL_SIZE = 16
FEEL_MAX_S = 10.0
FEEL_EDIT_S = {"private": 1.0, "group": 3.0}
SHORT_LABEL = 20  # buttons with labels up to this long go two to a row


RETRY_5XX = frozenset({500, 502, 503, 504})
RETRY_5XX_DELAYS_S = (0.5, 1.0)


def say(lang: Lang, key: str, **params: object) -> str:
    """A Telegram-adapter string from the ``[telegram]`` table of locales/."""
    return t(lang, f"telegram.{key}", **params)


# --------------------------------------------------------------------------- HTTP


class AiohttpRequest(BaseRequest):
    """PTB's request interface on an aiohttp session: about half the CPU per call of the httpx default."""

    def __init__(
        self,
        pool_size: int = POOL_SIZE,
        read_timeout: float = 5.0,
        connect_timeout: float = 5.0,
        write_timeout: float = 5.0,
        media_write_timeout: float = 20.0,
    ) -> None:
        self._pool_size = pool_size
        self._timeouts = {"read": read_timeout, "connect": connect_timeout, "write": write_timeout}
        self._media_write_timeout = media_write_timeout
        self._session: aiohttp.ClientSession | None = None

    @property
    def read_timeout(self) -> float | None:
        return self._timeouts["read"]

    async def initialize(self) -> None:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(limit=self._pool_size, ttl_dns_cache=300)
            self._session = aiohttp.ClientSession(connector=connector, headers={"User-Agent": self.USER_AGENT})

    async def shutdown(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()

    def _timeout(self, value: Any, name: str) -> float | None:
        return self._timeouts[name] if value is BaseRequest.DEFAULT_NONE else value

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: Any = BaseRequest.DEFAULT_NONE,
        write_timeout: Any = BaseRequest.DEFAULT_NONE,
        connect_timeout: Any = BaseRequest.DEFAULT_NONE,
        pool_timeout: Any = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        """One Bot API call; a 5xx answer is tried again after 0.5 s and 1 s (not getUpdates).

        Telegram's 5xx means the message was not accepted, so sending again cannot duplicate it;
        timeouts are not retried because the message may already have been delivered.
        """
        for delay in (*RETRY_5XX_DELAYS_S, None):
            status, payload = await self._attempt(
                url, method, request_data, read_timeout, write_timeout, connect_timeout
            )
            if status not in RETRY_5XX or delay is None or url.endswith("/getUpdates"):
                return status, payload
            log.warning("Telegram answered %s; retrying in %s s", status, delay)
            await asyncio.sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _attempt(
        self,
        url: str,
        method: str,
        request_data: RequestData | None,
        read_timeout: Any,
        write_timeout: Any,
        connect_timeout: Any,
    ) -> tuple[int, bytes]:
        if self._session is None or self._session.closed:
            raise RuntimeError("This AiohttpRequest is not initialized!")
        body: Any = None  # rebuilt per attempt: an aiohttp FormData can be sent only once
        if request_data is not None and request_data.contains_files:
            body = aiohttp.FormData()
            for key, value in request_data.json_parameters.items():
                body.add_field(key, value)
            for key, (filename, content, mime) in request_data.multipart_data.items():
                body.add_field(key, content, filename=filename, content_type=mime)
        elif request_data is not None and request_data.parameters:
            body = request_data.json_parameters  # form-urlencoded, non-strings JSON-encoded (as httpx does)
        default_write = self._media_write_timeout if isinstance(body, aiohttp.FormData) else None
        write = default_write or self._timeout(write_timeout, "write") or 0
        read = self._timeout(read_timeout, "read")
        timeout = aiohttp.ClientTimeout(
            total=None,
            connect=self._timeout(connect_timeout, "connect"),
            sock_read=None if read is None else read + write,
        )
        try:
            async with self._session.request(method, url, data=body, timeout=timeout) as response:
                return response.status, await response.read()
        except TimeoutError as exc:
            raise TimedOut from exc
        except aiohttp.ClientError as exc:  # the class only: aiohttp messages can carry the URL, i.e. the token
            raise NetworkError(f"aiohttp.{exc.__class__.__name__}") from exc


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


def _mention(username: str | None) -> re.Pattern[str] | None:
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
        pattern = _mention(bot.username)
        return bool(pattern and pattern.search(message.text or ""))


def _is_group(update: Update) -> bool:
    chat = update.effective_chat
    return chat is not None and chat.type != ChatType.PRIVATE


def _lang(update: Update) -> Lang:
    """The language of the adapter's own short texts: the user's Telegram language."""
    user = update.effective_user
    return lang_of(user.language_code if user else None)


def _quote(message: Message, update: Update) -> ReplyParameters | None:
    """In groups, answers quote the question so the thread stays readable."""
    if not _is_group(update):
        return None
    return ReplyParameters(message_id=message.message_id, allow_sending_without_reply=True)


def _as_caption(messages: Sequence[TelegramMessage]) -> str | None:
    """The whole card as a photo caption, when it is one message within the caption limit."""
    if len(messages) == 1 and telegram_visible_length(messages[0].text) <= MAX_CAPTION:
        return messages[0].text
    return None


def _not_modified(exc: BadRequest) -> bool:
    return "not modified" in exc.message.lower()


NO_PREVIEW = LinkPreviewOptions(is_disabled=True)


# --------------------------------------------------------------------------- the adapter


class TelegramAdapter:
    """The handlers, bound to one ``Service`` and one button store."""

    def __init__(self, service: Service, store: ButtonStore | None = None, charts: bool = True) -> None:
        self.service, self.charts = service, charts
        self.store = store or ButtonStore()
        self.streams: dict[str, asyncio.Task[None]] = {}

    async def ask(self, text: str, update: Update, context: ContextTypes.DEFAULT_TYPE) -> Reply:
        """Passes a question to the service with the asker's ids and language."""
        user, chat = update.effective_user, update.effective_chat
        who = User(id=f"tg:{user.id}" if user else "", chat=f"tg:{chat.id}" if chat and _is_group(update) else "")
        reply = await self.service.answer(text, locale=user.language_code if user else None, user=who)
        return reply if self.charts or reply.chart is None else reply.model_copy(update={"chart": None})

    # ---- sending

    async def send_card(self, message: Message, update: Update, reply: Reply) -> None:
        """Sends a card: a photo with the card as caption when it fits, else text (+ the chart, or a document)."""
        messages, quote = to_telegram(reply), _quote(message, update)
        markup = keyboard(reply, messages[-1].buttons, self.store)
        if reply.chart is not None and (caption := _as_caption(messages)):
            await message.reply_photo(
                await self._png(reply),
                caption=caption,
                parse_mode=ParseMode.HTML,
                reply_markup=markup,
                reply_parameters=quote,
            )
            return
        if len(messages) > MAX_CHAT_MESSAGES:
            await self._send_long(message, reply, messages, quote)
            return
        for part in messages:
            await message.reply_text(
                part.text,
                parse_mode=ParseMode.HTML,
                link_preview_options=NO_PREVIEW,
                reply_markup=keyboard(reply, part.buttons, self.store),
                reply_parameters=quote,
            )
        if reply.chart is not None:
            await message.reply_photo(
                await self._png(reply),
                caption=caption_for_photo(reply),
                parse_mode=ParseMode.HTML,
                reply_parameters=quote,
            )

    async def _png(self, reply: Reply) -> bytes:
        """The chart, rendered in a thread (matplotlib takes 0.1-1 s; ``render_png`` caches)."""
        return await asyncio.to_thread(render_png, reply.chart)  # type: ignore[arg-type]

    async def _send_long(self, message: Message, reply: Reply, messages: list, quote: ReplyParameters | None) -> None:
        """The first message with the buttons, then the whole card as a text file instead of a flood."""
        markup = keyboard(reply, messages[-1].buttons, self.store)
        await message.reply_text(
            messages[0].text,
            parse_mode=ParseMode.HTML,
            link_preview_options=NO_PREVIEW,
            reply_markup=markup,
            reply_parameters=quote,
        )
        await self._send_document(message, reply, quote)

    async def _send_document(self, message: Message, reply: Reply, quote: ReplyParameters | None = None) -> None:
        document = InputFile(to_console(reply).encode(), filename=f"fitbot-{reply.kind}.txt")
        await message.reply_document(document, reply_parameters=quote)

    async def edit_card(self, cq: CallbackQuery, update: Update, reply: Reply) -> None:
        """Replaces the pressed card in place (text, or a photo's caption); extra parts follow as new messages."""
        messages = to_telegram(reply)
        markup = keyboard(reply, messages[-1].buttons, self.store)
        message = cq.message if isinstance(cq.message, Message) else None
        if message is not None and message.photo:
            caption = _as_caption(messages) or caption_for_photo(reply)
            if caption is None:
                await self.send_card(message, update, reply)
                return
            await self._edit(cq, caption, markup, caption=True)
            return
        long = len(messages) > MAX_CHAT_MESSAGES
        await self._edit(cq, messages[0].text, markup if len(messages) == 1 or long else None)
        if message is not None and long:
            await self._send_document(message, reply)
        elif message is not None:
            for part in messages[1:]:
                await message.reply_text(
                    part.text,
                    parse_mode=ParseMode.HTML,
                    link_preview_options=NO_PREVIEW,
                    reply_markup=keyboard(reply, part.buttons, self.store),
                )

    async def _edit(
        self, cq: CallbackQuery, text: str, markup: InlineKeyboardMarkup | None, caption: bool = False
    ) -> None:
        """Edits the callback's message (chat or inline); an unchanged card is not an error."""
        bot, msg = cq.get_bot(), cq.message
        where: dict[str, Any] = (
            {"inline_message_id": cq.inline_message_id}
            if cq.inline_message_id
            else {"chat_id": msg.chat.id, "message_id": msg.message_id}
        )  # type: ignore[union-attr]
        try:
            if caption:
                await bot.edit_message_caption(caption=text, parse_mode=ParseMode.HTML, reply_markup=markup, **where)
            else:
                await bot.edit_message_text(
                    text, parse_mode=ParseMode.HTML, reply_markup=markup, link_preview_options=NO_PREVIEW, **where
                )
        except BadRequest as exc:
            if not _not_modified(exc):
                raise

    # ---- handlers

    async def command(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """/fit, /speed, ... /start: the command text goes to the service as it is."""
        message = update.effective_message
        reply = await self.ask(message.text or "", update, context)
        await self.send_card(message, update, reply)

    async def question(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A plain question (private chat, or a group message addressed to the bot, mention removed)."""
        message = update.effective_message
        chat = update.effective_chat
        if _is_group(update) and chat is not None and not await self.service.answers_mentions(f"tg:{chat.id}"):
            return  # the group switched plain mentions off (/settings mentions off); commands still work
        pattern = _mention(context.bot.username)
        text = pattern.sub(" ", message.text or "").strip() if pattern else (message.text or "")
        reply = await self.ask(text, update, context)
        await self.send_card(message, update, reply)

    async def button(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A pressed follow-up button: answer the callback first, then edit the card in place."""
        cq = update.callback_query
        kind, _, value = (cq.data or "").partition(":")
        query = value if kind == "q" else self.store.get(value) if kind == "k" else None
        if not query:
            await cq.answer(say(_lang(update), "expired"), show_alert=True)
            return
        await cq.answer()
        if (question := feel_question(query)) is not None:
            self.start_stream(cq, update, context, question)
            return
        await self.edit_card(cq, update, await self.ask(query, update, context))

    async def inline_query(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """``@Bot glm 4.5 air 5090 32k``: the fit card, the quant matrix and the cloud offer as articles."""
        iq = update.inline_query
        text, results = " ".join(iq.query.split()), []
        for kind, prefix in INLINE_CARDS if text else ():
            reply = await self.ask(f"{prefix} {text}", update, context)
            if reply.kind in ("suggest", "error") and results:
                continue
            results.append(self._article(kind, reply))
            if reply.kind in ("suggest", "error"):
                break
        await iq.answer(results, cache_time=INLINE_CACHE_S, is_personal=True)

    def _article(self, kind: str, reply: Reply) -> InlineQueryResultArticle:
        messages = to_telegram(reply)
        return InlineQueryResultArticle(
            id=kind,
            title=one_line(f"{reply.emoji} {reply.title}", 100) or kind,
            description=one_line(reply.summary, 200) or None,
            input_message_content=InputTextMessageContent(
                messages[0].text, parse_mode=ParseMode.HTML, link_preview_options=NO_PREVIEW
            ),
            reply_markup=keyboard(reply, messages[-1].buttons, self.store),
        )

    async def on_error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        """Logs the failure first, then apologises in the chat (if there is one); the bot keeps running."""
        log.error("update %s failed", getattr(update, "update_id", "?"), exc_info=context.error)
        if not isinstance(update, Update) or update.effective_chat is None:
            return
        try:
            await context.bot.send_message(update.effective_chat.id, say(_lang(update), "apology"))
        except TelegramError:
            log.warning("could not send the apology for update %s", update.update_id)

    # ---- feel the speed

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
        lang, caption = _lang(update), isinstance(cq.message, Message) and bool(cq.message.photo)
        back = InlineKeyboardMarkup(
            [[InlineKeyboardButton(say(lang, "feel.back"), callback_data=callback_data(question, self.store))]]
        )
        rate = await self.service.decode_speed(question)
        if not rate or rate <= 0:
            await self._edit(cq, html.escape(say(lang, "feel.unknown")), back, caption)
            return
        sample, limit = say(lang, "sample"), (MAX_CAPTION if caption else MAX_TEXT) - 120
        interval = FEEL_EDIT_S["group" if _is_group(update) else "private"]
        head = f"⏱ <b>{html.escape(say(lang, 'feel.title'))}</b> · {html.escape(tokens_per_s(rate, lang))}"
        async for written, elapsed, finished in reveal(rate, sample, every_s=interval, max_s=FEEL_MAX_S, room=limit):
            if not context.application.running:
                return
            if finished:
                done = say(lang, "feel.done", rate=tokens_per_s(rate, lang), seconds=num(elapsed, lang, 1))
                await self._edit(cq, f"✅ {html.escape(done)}\n\n{html.escape(written)}", back, caption)
            else:
                await self._edit(cq, f"{head}\n\n{html.escape(written)}▌", None, caption)

    # ---- start-up

    async def set_commands(self, app: Application) -> None:
        """Registers the command menu in English (the default) and German."""
        for lang, code in (("en", None), ("de", "de")):
            commands = [BotCommand(name, say(lang, f"cmd.{name}")) for name in MENU]  # type: ignore[arg-type]
            try:
                await app.bot.set_my_commands(commands, language_code=code)
            except TelegramError:
                log.warning("setMyCommands (%s) failed; the command menu may be stale", code or "default")


# --------------------------------------------------------------------------- wiring


def build_application(
    service: Service,
    token: str,
    *,
    base_url: str | None = None,
    base_file_url: str | None = None,
    webhook: bool = False,
    rate_limiter: bool = True,
    request: BaseRequest | None = None,
    charts: bool = True,
) -> Application:
    """The bot with every handler and the error handler registered; production and tests both use it.

    ``charts=False`` sends cards without their chart image (no matplotlib).
    """
    adapter = TelegramAdapter(service, charts=charts)
    builder = (
        ApplicationBuilder()
        .token(token)
        .concurrent_updates(CONCURRENT_UPDATES)
        .request(request or AiohttpRequest())
        .post_init(adapter.set_commands)
    )
    if not webhook:  # the long poll gets its own single connection
        builder = builder.get_updates_request(AiohttpRequest(pool_size=1))
    if base_url:
        builder = builder.base_url(base_url).base_file_url(base_file_url or file_url_for(base_url))
    if rate_limiter:
        builder = builder.rate_limiter(AIORateLimiter(max_retries=3))
    app = builder.build()
    app.bot_data["adapter"] = adapter
    app.add_handlers(
        [
            CommandHandler(MENU, adapter.command),
            MessageHandler(
                filters.UpdateType.MESSAGE & filters.TEXT & ~filters.COMMAND & AddressedToBot(), adapter.question
            ),
            CallbackQueryHandler(adapter.button),
            InlineQueryHandler(adapter.inline_query),
        ]
    )
    app.add_error_handler(adapter.on_error)
    return app


def file_url_for(base_url: str) -> str:
    """The file URL of a Bot API server: ".../bot" -> ".../file/bot"."""
    return base_url[: -len("/bot")] + "/file/bot" if base_url.endswith("/bot") else base_url.rstrip("/") + "/file/bot"


@asynccontextmanager
async def serve(
    app: Application,
    *,
    webhook_url: str | None = None,
    webhook_secret: str | None = None,
    listen: str = "127.0.0.1",
    port: int = 8443,
    poll_timeout: float = 10.0,
) -> AsyncIterator[Application]:
    """Runs ``app`` (polling, or PTB's webhook server with a secret token) until the block exits."""
    async with app:
        if app.post_init:
            await app.post_init(app)
        if webhook_url:
            path = urlsplit(webhook_url).path.strip("/") or "telegram"
            await app.updater.start_webhook(
                listen=listen,
                port=port,
                url_path=path,
                webhook_url=webhook_url,
                secret_token=webhook_secret,
                allowed_updates=ALLOWED_UPDATES,
            )
        else:
            await app.updater.start_polling(
                poll_interval=0, timeout=dt.timedelta(seconds=poll_timeout), allowed_updates=ALLOWED_UPDATES
            )
        await app.start()
        try:
            yield app
        finally:
            await app.updater.stop()
            await app.stop()


async def run_telegram(
    service: Service,
    *,
    token: str,
    base_url: str | None = None,
    webhook_url: str | None = None,
    webhook_secret: str | None = None,
    listen: str = "127.0.0.1",
    port: int = 8443,
    rate_limiter: bool = True,
    charts: bool = True,
    stop: asyncio.Event | None = None,
) -> None:
    """``fitbot run``: serves Telegram until ``stop`` is set or the task is cancelled; reads no env."""
    app = build_application(
        service, token, base_url=base_url, webhook=bool(webhook_url), rate_limiter=rate_limiter, charts=charts
    )
    secret = webhook_secret or (secrets.token_urlsafe(32) if webhook_url else None)
    async with serve(app, webhook_url=webhook_url, webhook_secret=secret, listen=listen, port=port):
        log.info("telegram adapter running (%s)", "webhook" if webhook_url else "polling")
        await (stop or asyncio.Event()).wait()


__all__ = ["AiohttpRequest", "build_application", "callback_data", "run_telegram", "serve"]
