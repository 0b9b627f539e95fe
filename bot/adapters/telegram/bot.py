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
* HTTP goes through ``telegram_transport.AiohttpRequest`` (aiohttp, retries budgeted by time), sends
  through ``telegram_flood.ChatFloodLimiter`` (Telegram's pacing; a 429 for a chat holds that chat only).
  Polling goes through ``telegram_poller.Poller``: a durable inbox, so nothing fetched is lost on a
  restart or crash, and round-robin dispatch across users.
* Fair limits: a user over the limit gets one slow-down card per window, not one per message;
  inline queries are debounced (only the last keystroke is answered) and cost no question quota.
* Shared chat settings (/lang, /settings in groups) are for the group's admins: the adapter asks
  ``getChatMember`` (cached a minute) and passes ``User.is_admin`` to the service.
* "Feel the speed" streams a sample text by editing the message at most once per second (every
  three seconds in groups, which allow 20 messages a minute) for at most ten seconds; a new press on
  the same message cancels the old stream, and the stream ends early when the application stops.
"""

from __future__ import annotations

import asyncio
import logging
import re
import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

from telegram import (
    BotCommand,
    CallbackQuery,
    InlineKeyboardMarkup,
    InlineQueryResultArticle,
    InputFile,
    InputTextMessageContent,
    LinkPreviewOptions,
    Message,
    ReplyParameters,
    Update,
)
from telegram.constants import ParseMode
from telegram.error import BadRequest, TelegramError
from telegram.ext import (
    ApplicationBuilder,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    InlineQueryHandler,
    MessageHandler,
    filters,
)
from telegram.request import BaseRequest

from bot import commands
from bot.adapters.buttons import ButtonStore
from bot.adapters.chart_workers import render_chart, warm_up_charts
from bot.adapters.feel import feel_question
from bot.adapters.telegram.fence import LeaseLost
from bot.adapters.telegram.flood import ChatFloodLimiter
from bot.adapters.telegram.parts import (
    AddressedToBot,
    FeelStreams,
    TelegramApp,
    as_caption,
    callback_data,
    is_group,
    keyboard,
    mention_pattern,
    not_modified,
    quote_of,
    say,
    update_lang,
)
from bot.adapters.telegram.poller import GRACE_S, Poller, retryable
from bot.adapters.telegram.transport import AiohttpRequest
from bot.app.jobs import shared_buttons
from bot.render.telegram_html import (
    TelegramMessage,
    caption_for_photo,
    to_telegram,
)
from bot.render.text import one_line, to_console
from bot.reply import Lang, Reply
from bot.service import Service, User
from bot.users.limits import Limits

log = logging.getLogger(__name__)

# The one command list, plus /start: it is in the menu and needs its handler like every other command.
MENU = (*commands.MENU, "start")
ALLOWED_UPDATES = ["message", "callback_query", "inline_query"]
INLINE_CARDS = (("fit", "/fit"), ("quant", "/quant"), ("cloud", "/cloud"))
INLINE_CACHE_S = 30
MAX_CHAT_MESSAGES = 3  # a card longer than this goes out as its first message plus a text document
CONCURRENT_UPDATES = 16


INLINE_DEBOUNCE_S = 0.4  # inline queries arrive per keystroke: only the one typed last is answered
ADMIN_CACHE_S = 60.0
ADMIN_STATUSES = frozenset({"creator", "administrator"})
# Words of the shared-settings commands (/lang, /settings) in both languages: only such group
# messages cost a getChatMember call.
_SHARED_SETTINGS = re.compile(r"(?i)(?<![\w])/?(lang|settings|sprache|einstellungen)(?:@\w+)?\b")


NO_PREVIEW = LinkPreviewOptions(is_disabled=True)


# --------------------------------------------------------------------------- the adapter


class TelegramAdapter(FeelStreams):
    """The handlers, bound to one ``Service`` and one button store."""

    def __init__(self, service: Service, store: ButtonStore | None = None, charts: bool = True) -> None:
        self.service, self.charts = service, charts
        self.store = store or ButtonStore(shared=shared_buttons(service))  # shared: a press on another worker
        self.streams: dict[str, asyncio.Task[None]] = {}
        self.admins: dict[tuple[int, int], tuple[bool, float]] = {}
        self.inline_latest: dict[int, str] = {}  # user id -> the id of their newest inline query

    async def ask(self, text: str, update: Update, context: ContextTypes.DEFAULT_TYPE) -> Reply:
        """Passes a question to the service with the asker's ids, language and (for settings) admin status."""
        user, chat = update.effective_user, update.effective_chat
        group = chat is not None and is_group(update)
        admin = (
            await self.is_admin(context, chat.id, user.id)
            if group and chat is not None and user and _SHARED_SETTINGS.search(text)
            else None
        )
        who = User(id=f"tg:{user.id}" if user else "", chat=f"tg:{chat.id}" if group and chat else "", is_admin=admin)
        reply = await self.service.answer(text, locale=user.language_code if user else None, user=who)
        return reply if self.charts or reply.chart is None else reply.model_copy(update={"chart": None})

    async def is_admin(self, context: ContextTypes.DEFAULT_TYPE, chat_id: int, user_id: int) -> bool | None:
        """Whether the user administers the group (``getChatMember``, cached); None when Telegram won't say."""
        key, now = (chat_id, user_id), asyncio.get_running_loop().time()
        cached = self.admins.get(key)
        if cached is not None and now - cached[1] < ADMIN_CACHE_S:
            return cached[0]
        try:
            member = await context.bot.get_chat_member(chat_id, user_id)
        except TelegramError:
            log.warning("getChatMember failed; treating the sender as a member")
            return None
        admin = member.status in ADMIN_STATUSES
        self.admins[key] = (admin, now)
        if len(self.admins) > 10_000:
            self.admins.pop(next(iter(self.admins)))
        return admin

    def muted(self, update: Update, reply: Reply) -> bool:
        """A slow-down card goes out once per user per window; later refusals stay silent."""
        if reply.kind != "slow_down" or self.service.limits is None:
            return False
        user = update.effective_user
        return not self.service.limits.first_notice(f"tg:{user.id}" if user else "tg:?")

    # ---- sending

    async def send_card(self, message: Message, update: Update, reply: Reply) -> None:
        """Sends a card: a photo with the card as caption when it fits, else text (+ the chart, or a document)."""
        if self.muted(update, reply):
            return
        messages, quote = to_telegram(reply), quote_of(message, update)
        markup = keyboard(reply, messages[-1].buttons, self.store)
        if reply.chart is not None and (caption := as_caption(messages)):
            await message.reply_photo(
                await render_chart(reply.chart),
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
                await render_chart(reply.chart),
                caption=caption_for_photo(reply),
                parse_mode=ParseMode.HTML,
                reply_parameters=quote,
            )

    async def _send_long(
        self, message: Message, reply: Reply, messages: list[TelegramMessage], quote: ReplyParameters | None
    ) -> None:
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
            caption = as_caption(messages) or caption_for_photo(reply)
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
        where: dict[str, Any]
        if cq.inline_message_id:
            where = {"inline_message_id": cq.inline_message_id}
        else:
            assert msg is not None, "a button in a chat comes with its message"
            where = {"chat_id": msg.chat.id, "message_id": msg.message_id}
        try:
            if caption:
                await bot.edit_message_caption(caption=text, parse_mode=ParseMode.HTML, reply_markup=markup, **where)
            else:
                await bot.edit_message_text(
                    text, parse_mode=ParseMode.HTML, reply_markup=markup, link_preview_options=NO_PREVIEW, **where
                )
        except BadRequest as exc:
            if not not_modified(exc):
                raise

    # ---- handlers

    async def command(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """/fit, /speed, ... /start: the command text goes to the service as it is."""
        message = update.effective_message
        assert message is not None, "CommandHandler only passes messages"
        reply = await self.ask(message.text or "", update, context)
        await self.send_card(message, update, reply)

    async def question(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A plain question (private chat, or a group message addressed to the bot, mention removed)."""
        message = update.effective_message
        assert message is not None, "the MessageHandler's filter only passes messages"
        chat = update.effective_chat
        if is_group(update) and chat is not None and not await self.service.answers_mentions(f"tg:{chat.id}"):
            return  # the group switched plain mentions off (/settings mentions off); commands still work
        pattern = mention_pattern(context.bot.username)
        text = pattern.sub(" ", message.text or "").strip() if pattern else (message.text or "")
        reply = await self.ask(text, update, context)
        await self.send_card(message, update, reply)

    async def button(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A pressed follow-up button: answer the callback first, then edit the card in place."""
        cq = update.callback_query
        assert cq is not None, "CallbackQueryHandler only passes callback queries"
        kind, _, value = (cq.data or "").partition(":")
        query = value if kind == "q" else await self.store.fetch(value) if kind == "k" else None
        if not query:
            await cq.answer(say(update_lang(update), "expired"), show_alert=True)
            return
        await cq.answer()
        if (question := feel_question(query)) is not None:
            self.start_stream(cq, update, context, question)
            return
        reply = await self.ask(query, update, context)
        if not self.muted(update, reply):
            await self.edit_card(cq, update, reply)

    async def inline_query(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """``@Bot glm 4.5 air 5090 32k``: the fit card, the quant matrix and the cloud offer as articles."""
        iq = update.inline_query
        assert iq is not None, "InlineQueryHandler only passes inline queries"
        self.inline_latest[iq.from_user.id] = iq.id
        await asyncio.sleep(INLINE_DEBOUNCE_S)
        if self.inline_latest.get(iq.from_user.id) != iq.id:
            return  # the user typed on; Telegram shows only the answer to the newest query anyway
        del self.inline_latest[iq.from_user.id]
        text = " ".join(iq.query.split())
        results: list[InlineQueryResultArticle] = []
        for kind, prefix in INLINE_CARDS if text else ():
            with Limits.free_of_charge():  # keystrokes are not questions; the debounce bounds them
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
        """Logs the failure, then apologises in the chat (if any); the bot keeps running. The poller is told
        too: a network failure is sent again later (no apology, no traceback), a shared worker's lost lease
        is dropped (another worker answers), any other failure is recorded as failed."""
        poller: Poller | None = context.application.bot_data.get("poller")
        if poller is not None and isinstance(update, Update) and context.error is not None:
            poller.failed[update.update_id] = context.error
            if isinstance(context.error, LeaseLost):
                return
            if retryable(context.error):
                log.warning("answer to update %s failed on the network (%s)", update.update_id, context.error)
                return
        log.error("update %s failed", getattr(update, "update_id", "?"), exc_info=context.error)
        if not isinstance(update, Update) or update.effective_chat is None:
            return
        try:
            await context.bot.send_message(update.effective_chat.id, say(update_lang(update), "apology"))
        except TelegramError:
            log.warning("could not send the apology for update %s", update.update_id)

    # ---- start-up

    async def set_commands(self, app: TelegramApp) -> None:
        """Registers the command menu in English (the default) and German."""
        languages: tuple[tuple[Lang, str | None], ...] = (("en", None), ("de", "de"))
        for lang, code in languages:
            menu = [BotCommand(name, say(lang, f"cmd.{name}")) for name in MENU]
            try:
                await app.bot.set_my_commands(menu, language_code=code)
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
) -> TelegramApp:
    """The bot with every handler and the error handler registered; production and tests both use it.

    ``charts=False`` sends cards without their chart image (no matplotlib). ``rate_limiter=False``
    switches Telegram's send pacing off (tests, benches); flood control per chat stays on.
    """
    adapter = TelegramAdapter(service, charts=charts)
    service.warm_up()  # while the bot connects, so that neither the first answer nor the first chart waits
    if charts:
        warm_up_charts()
    requests: list[BaseRequest] = [request or AiohttpRequest()]
    builder = (
        ApplicationBuilder()
        .token(token)
        .concurrent_updates(CONCURRENT_UPDATES)
        .request(requests[0])
        .post_init(adapter.set_commands)
    )
    if not webhook:  # the long poll gets its own single connection
        requests.append(AiohttpRequest(pool_size=1))
        builder = builder.get_updates_request(requests[-1])
    if base_url:
        builder = builder.base_url(base_url).base_file_url(base_file_url or file_url_for(base_url))
    app: TelegramApp = builder.rate_limiter(ChatFloodLimiter(paced=rate_limiter)).build()
    app.bot_data["adapter"] = adapter
    app.bot_data["requests"] = requests  # closed by ``serve`` when start-up fails (PTB does not)
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
    app: TelegramApp,
    *,
    webhook_url: str | None = None,
    webhook_secret: str | None = None,
    listen: str = "127.0.0.1",
    port: int = 8443,
    poll_timeout: int = 10,
    grace_s: float = GRACE_S,
    on_state: Callable[..., None] | None = None,
) -> AsyncIterator[TelegramApp]:
    """Runs ``app`` (polling through the durable inbox, or PTB's webhook server) until the block exits.

    On exit, polling stops fetching at once and gives queued answers ``grace_s`` to go out; what
    is left stays in the inbox and is answered after the next start.
    """
    adapter: TelegramAdapter = app.bot_data["adapter"]
    poller: Poller | None = None
    try:
        await app.initialize()
    except BaseException:  # a refused token or an unreachable server: PTB leaves the HTTP sessions open
        for request in app.bot_data.get("requests", ()):
            await request.shutdown()
        raise
    async with app:
        if app.post_init:
            await app.post_init(app)
        if webhook_url:
            path = urlsplit(webhook_url).path.strip("/") or "telegram"
            await app.updater.start_webhook(  # type: ignore[union-attr]
                listen=listen,
                port=port,
                url_path=path,
                webhook_url=webhook_url,
                secret_token=webhook_secret,
                allowed_updates=ALLOWED_UPDATES,
            )
        else:
            await app.bot.delete_webhook()  # polling and a webhook exclude each other
            poller = Poller(
                app,
                adapter.service.inbox,
                allowed_updates=ALLOWED_UPDATES,
                poll_timeout=poll_timeout,
                workers=CONCURRENT_UPDATES,
                grace_s=grace_s,
                on_state=on_state,
            )
            app.bot_data["poller"] = poller
        await app.start()
        if poller is not None:
            await poller.start()
        try:
            yield app
        finally:
            if poller is not None:
                await poller.stop()
            if app.updater is not None and app.updater.running:
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
    grace_s: float = GRACE_S,
    on_state: Callable[..., None] | None = None,
) -> None:
    """``fitbot run``: serves Telegram until ``stop`` is set or the task is cancelled; reads no env.

    A poller that dies (an invalid token) ends this coroutine with its exception, so the
    supervisor in ``bot.app.run`` can report it and try again.
    """
    app = build_application(
        service, token, base_url=base_url, webhook=bool(webhook_url), rate_limiter=rate_limiter, charts=charts
    )
    secret = webhook_secret or (secrets.token_urlsafe(32) if webhook_url else None)
    serving = serve(
        app,
        webhook_url=webhook_url,
        webhook_secret=secret,
        listen=listen,
        port=port,
        grace_s=grace_s,
        on_state=on_state,
    )
    async with serving:
        log.info("telegram adapter running (%s)", "webhook" if webhook_url else "polling")
        if on_state is not None:
            on_state("running")
        stopped = asyncio.ensure_future((stop or asyncio.Event()).wait())
        poller: Poller | None = app.bot_data.get("poller")
        fetcher = poller.fetcher if poller is not None else None
        try:
            await asyncio.wait([t for t in (stopped, fetcher) if t is not None], return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopped.cancel()
        if fetcher is not None and fetcher.done() and not fetcher.cancelled() and fetcher.exception() is not None:
            raise fetcher.exception()  # type: ignore[misc]


__all__ = ["AiohttpRequest", "build_application", "callback_data", "run_telegram", "serve"]
