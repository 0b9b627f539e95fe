"""Who asks: the platform user, their chat, and the saved defaults that fill what a question leaves out."""

from __future__ import annotations

from dataclasses import dataclass

from core.models import Engine, Lang
from core.runs.calibrate import Calibration
from core.runs.pool import Pool


@dataclass(frozen=True)
class User:
    """Who asks, as ``platform:id`` ("tg:42", "dc:1234"); saved defaults fill what a question leaves out."""

    id: str = ""
    chat: str = ""  # "tg:-1001234" / "dc:guild:5678"; empty in private chats and the console
    lang: Lang | None = None  # an explicit choice (saved, or the console's --lang)
    gpu_id: str | None = None
    gpu_count: int = 1
    ram_gb: float | None = None
    context: int | None = None
    engine: Engine | None = None
    # factors from the runs this user pasted (``bot.users.runs``): their speed answers on those devices are scaled
    calibrations: tuple[Calibration, ...] = ()
    # the chat pools its members' runs (its admins turned sharing on), and those pools (``core.runs.pool``)
    share_runs: bool = False
    pools: tuple[Pool, ...] = ()
    # May this user change the chat's shared settings (/lang and /settings in a group or server)?
    # Set by the adapter from the platform (Telegram group admins, Discord "Manage Server");
    # None = not known, which counts as no.
    is_admin: bool | None = None
    # No person stands behind the id (an MCP client, known by its address): the limits count it, but nothing
    # is saved about it or read for it, so clients behind one address never change each other's answers.
    anonymous: bool = False
