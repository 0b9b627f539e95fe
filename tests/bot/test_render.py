"""Renderers: every card stays within its platform's limits, untrusted text stays inert, nothing is lost."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from html.parser import HTMLParser

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.render import discord_embed as rd
from bot.render import telegram_html as rt
from bot.render.discord_embed import DiscordMessage, escape_markdown, neutralise_mentions, to_discord
from bot.render.telegram_html import caption_for_photo, telegram_visible_length, to_telegram
from bot.render.text import environment, to_console
from bot.reply import Action, ChartSpec, CodeBlock, Reply, Row, Section, Series, Table, Tone
from fitbot_fakes.discord_api import FormErrors, check_embeds
from fitbot_fakes.telegram_api import parse_html

INJECTIONS = ("<b>", "&", '<a href="x">', "</pre>", "&amp;", "<pre>x", "a < b > c")
MENTIONS = ("@everyone", "@here", "<@123>", "<@&456>", "<@!789>")
ALLOWED_TAGS = {"b", "i", "u", "s", "code", "pre", "a", "blockquote"}

CHART = ChartSpec(
    kind="memory_vs_context",
    title="Memory vs context",
    x_label="Context",
    y_label="GiB",
    series=(Series(name="Q4_K_M", points=((4096, 18.0), (32768, 22.0), (131072, 34.0))),),
    limit=23.5,
    limit_label="RTX 4090 usable",
)


def fit_card(**changes: object) -> Reply:
    """A realistic fit card: 4 sections, a 120-row GPU table (phone-narrow), 2 commands, 6 actions, 3 suggestions."""
    sections = (
        Section(
            title="Memory",
            rows=(
                Row(label="Weights", value="18.49 GiB (measured file)"),
                Row(label="KV cache", value="4.00 GiB"),
                Row(label="Runtime overhead", value="0.62 GiB"),
                Row(label="Total on GPU", value="23.11 GiB"),
                Row(label="Usable memory", value="23.50 GiB"),
            ),
        ),
        Section(
            title="Speed",
            rows=(Row(label="Decode", value="38.2 tok/s"), Row(label="Prefill", value="2,410 tok/s")),
        ),
        Section(
            title="What to do",
            rows=(
                Row(label="Best quant that fits", value="Q4_K_M"),
                Row(label="KV cache quantization", value="q8_0 saves 2.00 GiB"),
            ),
        ),
        Section(title="Cost", rows=(Row(label="Cheapest cloud", value="$0.34/h on RunPod (RTX 4090)"),)),
    )
    table = Table(
        title="Other GPUs",
        headers=("Device", "GB", "8K", "32K", "tok/s", ""),
        rows=tuple(
            (
                f"GPU model {i}",
                f"{8 + i % 40}",
                f"{20.5 + i / 10:.1f}",
                f"{23 + i / 7:.1f}",
                f"{10 + i * 2.5:.0f}",
                "🟢" if i % 3 else "🔴",
            )
            for i in range(120)
        ),
    )
    code = (
        CodeBlock(label="llama.cpp", text="llama-server -m Qwen3-32B-Q4_K_M.gguf \\\n  -c 32768 -ngl 99 -fa on"),
        CodeBlock(label="vLLM", text="vllm serve Qwen/Qwen3-32B-AWQ --max-model-len 32768"),
    )
    actions = tuple(
        Action(label=lab, query=f"fit qwen3-32b rtx 4090 {lab.lower()}")
        for lab in ("8K context", "32K context", "Q8_0", "KV q8", "Cloud prices", "Other GPUs")
    )
    base = {
        "kind": "fit",
        "locale": "en",
        "title": "Qwen3 32B on RTX 4090",
        "tone": Tone.GOOD,
        "summary": "Fits with 0.39 GiB to spare (98% of usable memory in use).",
        "sections": sections,
        "table": table,
        "code": code,
        "chart": CHART,
        "actions": actions,
        "suggestions": ("qwen3-32b", "qwen3-30b-a3b", "qwq-32b"),
        "assumptions": "Assumed Q4_K_M (default), 32K context, llama.cpp.",
        "footer": "Catalog 2025-06 · estimates, not measurements",
        "echo": "can I run qwen3 32b on a 4090?",
    }
    base.update(changes)
    return Reply(**base)


def huge_card(text: str) -> Reply:
    """Every string field holds ``text``; many rows, sections, actions."""
    rows = tuple(Row(label=text, value=text) for _ in range(5))
    return Reply(
        kind="fit",
        locale="de",
        title=text,
        tone=Tone.INFO,
        summary=text,
        sections=tuple(Section(title=text, rows=rows) for _ in range(4)),
        table=Table(title=text, headers=(text, text), rows=tuple((text, text, text) for _ in range(20))),
        code=(CodeBlock(label=text, text=text), CodeBlock(label=text, text="\n".join([text[:300]] * 40))),
        chart=CHART,
        actions=tuple(Action(label=text, query=text) for _ in range(40)),
        suggestions=(text, text, text),
        assumptions=text,
        footer=text,
        echo=text,
    )


# --------------------------------------------------------------------------- validators


class _TelegramHTML(HTMLParser):
    """Records problems: unknown tags, attributes Telegram refuses, unbalanced nesting."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.problems: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ALLOWED_TAGS:
            self.problems.append(f"tag <{tag}>")
        for name, value in attrs:
            if not (tag == "code" and name == "class" and (value or "").startswith("language-")):
                self.problems.append(f"attribute {name} on <{tag}>")
        if "pre" in self.stack and tag != "code":
            self.problems.append(f"<{tag}> inside <pre>")
        self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"unbalanced </{tag}> in {self.stack}")
        else:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def telegram_problems(html: str, limit: int = rt.MAX_TEXT) -> list[str]:
    parser = _TelegramHTML()
    parser.feed(html)
    parser.close()
    problems = list(parser.problems)
    if parser.stack:
        problems.append(f"unclosed {parser.stack}")
    if re.search(r"&(?!(amp|lt|gt|quot|#\d+);)", html):
        problems.append("bare &")
    plain, _ = parse_html(html)  # the strict fake Bot API's parser raises on anything Telegram refuses
    if not plain.strip():
        problems.append("empty text")
    if telegram_visible_length(html) > limit or len(plain) > limit:
        problems.append(f"{telegram_visible_length(html)} visible characters > {limit}")
    return problems


def discord_problems(msg: DiscordMessage) -> list[str]:
    """Discord's documented limits (Message Resource: Embed Limits; components)."""
    problems: list[str] = []
    embeds = msg.embeds
    if not 1 <= len(embeds) <= 10:
        problems.append(f"{len(embeds)} embeds")
    total = 0
    for i, e in enumerate(embeds):

        def check(what: str, value: str | None, most: int, least: int = 0, i: int = i) -> None:
            if value is not None and not least <= len(value) <= most:
                problems.append(f"embed {i} {what}: {len(value)} not in {least}..{most}")

        check("title", e.get("title"), 256)
        check("description", e.get("description"), 4096, 1)
        check("footer", (e.get("footer") or {}).get("text"), 2048, 1)
        if not 0 <= e.get("color", 0) <= 0xFFFFFF:
            problems.append("colour")
        fields = e.get("fields") or []
        if len(fields) > 25:
            problems.append(f"embed {i}: {len(fields)} fields")
        for f in fields:
            check("field name", f["name"], 256, 1)
            check("field value", f["value"], 1024, 1)
            total += len(f["name"]) + len(f["value"])
        total += (
            len(e.get("title") or "") + len(e.get("description") or "") + len((e.get("footer") or {}).get("text") or "")
        )
    if total > 6000:
        problems.append(f"total {total} > 6000")
    if msg.content is not None and not 1 <= len(msg.content) <= 2000:
        problems.append("content")
    if len(msg.buttons) > 25 or any(not 1 <= len(label) <= 80 for label, _ in msg.buttons):
        problems.append("buttons")
    err = FormErrors()
    check_embeds(err, embeds)  # the fake Discord API's own validator agrees
    if err.errors:
        problems.append(json.dumps(err.errors)[:300])
    return problems


def assert_all_within_limits(reply: Reply) -> None:
    messages = to_telegram(reply)
    assert 1 <= len(messages) <= rt.MAX_MESSAGES
    for m in messages:
        assert telegram_problems(m.text) == []
    assert all(not m.buttons for m in messages[:-1])
    caption = caption_for_photo(reply)
    assert (caption is None) == (reply.chart is None)
    if caption is not None:
        assert telegram_problems(caption, rt.MAX_CAPTION) == []
    assert discord_problems(to_discord(reply)) == []
    assert isinstance(to_console(reply), str)


def discord_text(msg: DiscordMessage) -> str:
    return json.dumps([msg.embeds, msg.content, msg.buttons], ensure_ascii=False)


# --------------------------------------------------------------------------- console


def test_console_contains_every_row_cell_command_and_action():
    reply = fit_card()
    out = to_console(reply)
    for section in reply.sections:
        assert section.title in out
        for row in section.rows:
            assert re.search(rf"^  {re.escape(row.label)} +{re.escape(row.value)}$", out, re.MULTILINE)
    for cells in reply.table.rows:
        assert re.search(r"\s+".join(re.escape(c) for c in cells), out)
    for code in reply.code:
        for line in code.text.split("\n"):
            assert "    " + line in out
    assert "did you mean: qwen3-32b, qwen3-30b-a3b, qwq-32b" in out
    for action in reply.actions:
        assert f"{action.label}: {action.query}" in out
    assert out.startswith("🟢 Qwen3 32B on RTX 4090\n")


def test_console_aligns_values_and_table_columns():
    out = to_console(fit_card())
    value_columns = {
        line.index("  ", 2) + len(line[line.index("  ", 2) :]) - len(line[line.index("  ", 2) :].lstrip())
        for line in out.splitlines()
        if re.match(r"^  (Weights|KV cache|Decode|Cost|Prefill) ", line)
    }
    assert len(value_columns) == 1
    table = [line for line in out.splitlines() if line.startswith("  GPU model")]
    assert len(table) == 120 and len({len(line) for line in table}) == 1  # right-aligned numbers, same width


def test_console_drops_terminal_escapes_and_bidi_overrides():
    out = to_console(fit_card(echo="hi \x1b[2J\x1b]0;pwned\x07 there\u202e", title="T\x00itle"))
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out and "\x00" not in out
    assert "> hi [2J]0;pwned there" in out and "Title" in out


def test_console_wide_table_is_not_cut():
    wide = Table(headers=("a", "b"), rows=(("x" * 500, "y" * 500),))
    out = to_console(fit_card(table=wide))
    assert "x" * 500 + "  " + "y" * 500 in out


# --------------------------------------------------------------------------- telegram


@pytest.mark.parametrize(
    ("html", "length"),
    [
        ("<b>a</b>", 1),
        ("&amp;", 1),
        ("&lt;b&gt;", 3),
        ("&#39;", 1),
        ("🟢", 2),
        ("é", 1),
        ('<pre><code class="language-sh">x\ny</code></pre>', 3),
        ("", 0),
    ],
)
def test_telegram_visible_length_counts_text_after_entity_parsing(html, length):
    assert telegram_visible_length(html) == length


def test_telegram_fit_card_fills_two_well_formed_messages_with_every_row():
    reply = fit_card()
    messages = to_telegram(reply)
    assert len(messages) == 2  # the 120-row table (~5,000 characters) starts in the first and ends in the second
    for m in messages:
        assert telegram_problems(m.text) == []
    assert "<b>Cost</b>" in messages[0].text and "<b>Other GPUs</b>\n<pre>Device" in messages[0].text
    assert messages[1].text.startswith("<b>Other GPUs</b>\n<pre>Device")  # the title and header repeat
    text = "\n\n".join(m.text for m in messages)
    plain = "".join(parse_html(m.text)[0] for m in messages)
    for section in reply.sections:
        for row in section.rows:
            assert f"{row.label}: {row.value}" in plain
    assert plain.count("GPU model ") == 120
    assert '<pre><code class="language-sh">llama-server' in text
    assert messages[0].buttons == ()
    assert messages[1].buttons == tuple((a.label, i) for i, a in enumerate(reply.actions))


def test_telegram_long_table_splits_into_pre_blocks_that_repeat_the_header():
    rows = tuple((f"GPU model {i:03}", f"{i} GiB", "🟢 Fits " + "x" * 10) for i in range(300))
    reply = fit_card(table=Table(title="All GPUs", headers=("Device", "Memory", "Verdict"), rows=rows))
    messages = to_telegram(reply)
    assert len(messages) >= 4
    pres = [pre for m in messages for pre in re.findall(r"<pre>(?!<code)(.*?)</pre>", m.text, re.DOTALL)]
    assert len(pres) >= 4
    for pre in pres:
        assert pre.startswith("Device") and pre.split("\n")[1].startswith("------")
    plain = "".join(parse_html(m.text)[0] for m in messages)
    assert [int(n) for n in re.findall(r"GPU model (\d{3})", plain)] == list(range(300))
    for m in messages:
        assert telegram_problems(m.text) == []
    assert [bool(m.buttons) for m in messages] == [False] * (len(messages) - 1) + [True]


def test_telegram_keeps_blocks_whole_when_splitting():
    many = tuple(
        Section(title=f"Section {i}", rows=tuple(Row(label=f"r{j}", value="v" * 60) for j in range(8)))
        for i in range(12)
    )
    messages = to_telegram(fit_card(sections=many, table=None))
    assert len(messages) > 1
    for m in messages:
        assert telegram_problems(m.text) == []
        for block in m.text.split("\n\n"):
            if block.startswith("<b>Section"):
                assert block.count("\n") == 8  # title + 8 rows, never torn apart


@pytest.mark.parametrize("evil", INJECTIONS)
@pytest.mark.parametrize(
    "where", ["echo", "title", "label", "value", "cell", "code", "suggestion", "summary", "footer"]
)
def test_telegram_escapes_untrusted_and_catalog_text(evil, where):
    text = f"x{evil}y"
    changes: dict[str, object] = {
        "echo": {"echo": text},
        "title": {"title": text},
        "label": {"sections": (Section(title="S", rows=(Row(label=text, value="1"),)),)},
        "value": {"sections": (Section(title="S", rows=(Row(label="l", value=text),)),)},
        "cell": {"table": Table(headers=("h",), rows=((text,),))},
        "code": {"code": (CodeBlock(label="c", text=text),)},
        "suggestion": {"suggestions": (text,)},
        "summary": {"summary": text},
        "footer": {"footer": text},
    }[where]
    reply = fit_card(**changes)
    for m in to_telegram(reply):
        assert telegram_problems(m.text) == []
    plain = "".join(parse_html(m.text)[0] for m in to_telegram(reply))
    assert text in plain  # shown literally, not interpreted
    assert telegram_problems(caption_for_photo(reply), rt.MAX_CAPTION) == []


def test_telegram_caption_is_short_and_only_with_a_chart():
    assert caption_for_photo(fit_card(chart=None)) is None
    caption = caption_for_photo(fit_card())
    assert telegram_problems(caption, rt.MAX_CAPTION) == []
    assert caption.startswith("🟢 <b>Qwen3 32B on RTX 4090</b>") and "Weights: <b>18.49 GiB" in caption


def test_telegram_button_labels_are_clipped_and_never_empty():
    reply = fit_card(actions=(Action(label="", query="q"), Action(label="L" * 200, query="q")))
    buttons = to_telegram(reply)[-1].buttons
    assert buttons[0] == ("1", 0) and len(buttons[1][0]) == rt.MAX_BUTTON_LABEL and buttons[1][1] == 1


# --------------------------------------------------------------------------- discord


def test_discord_fit_card_within_limits_with_fields_code_and_image():
    reply = fit_card()
    msg = to_discord(reply)
    assert discord_problems(msg) == []
    first = msg.embeds[0]
    assert first["title"] == "🟢 Qwen3 32B on RTX 4090" and first["color"] == reply.colour
    assert first["image"] == {"url": "attachment://chart.png"} and msg.image_name == "chart.png"
    fields = [f for e in msg.embeds for f in e["fields"]]
    assert fields[1] == {
        "name": "Speed",
        "value": "Decode: **38.2 tok/s**\nPrefill: **2,410 tok/s**",
        "inline": True,
    }
    assert any(f["value"].startswith("```sh\nllama-server") for f in fields)
    tables = [f["value"] for f in fields if f["value"].startswith("```\nDevice")]
    assert len(tables) >= 2  # 60 rows do not fit one 1024-character field; each part repeats the header
    assert msg.buttons == tuple((a.label, i) for i, a in enumerate(reply.actions))
    assert msg.embeds[-1]["footer"]["text"].startswith("Assumed Q4_K_M")
    assert "did you mean" in first["description"]


def test_discord_without_chart_has_no_image():
    msg = to_discord(fit_card(chart=None))
    assert "image" not in msg.embeds[0] and msg.image_name is None


def test_discord_cuts_at_the_message_total_with_a_note():
    rows = tuple((f"GPU model {i:03}", f"{i} GiB", "🟢 Fits") for i in range(400))
    msg = to_discord(fit_card(table=Table(headers=("Device", "Memory", "Verdict"), rows=rows)))
    assert discord_problems(msg) == []
    assert msg.embeds[-1]["fields"][-1]["value"].startswith("…")


def test_discord_caps_buttons_at_25():
    msg = to_discord(fit_card(actions=tuple(Action(label=f"a{i}", query="q") for i in range(40))))
    assert len(msg.buttons) == 25 and msg.buttons[-1] == ("a24", 24)


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("**bold**", r"\*\*bold\*\*"),
        ("_i_", r"\_i\_"),
        ("~~s~~", r"\~\~s\~\~"),
        ("`x`", r"\`x\`"),
        ("||spoiler||", r"\|\|spoiler\|\|"),
        ("> quote", r"\> quote"),
        ("# head", r"\# head"),
        ("a\\b", "a\\\\b"),
        ("[x](https://e.vil)", r"\[x\](https://e.vil)"),
        ("plain 4.5-air", "plain 4.5-air"),
    ],
)
def test_escape_markdown(raw, escaped):
    assert escape_markdown(raw) == escaped


@pytest.mark.parametrize("mention", MENTIONS)
def test_discord_neutralises_mentions_everywhere(mention):
    text = f"hi {mention} there"
    reply = fit_card(
        title=text,
        echo=text,
        summary=text,
        footer=text,
        assumptions=text,
        suggestions=(text,),
        sections=(Section(title=text, rows=(Row(label=text, value=text),)),),
        table=Table(title=text, headers=(text,), rows=((text,),)),
        code=(CodeBlock(label=text, text=text),),
        actions=(Action(label=text, query=text),),
    )
    msg = to_discord(reply)
    assert discord_problems(msg) == []
    dumped = discord_text(msg)
    assert re.search(r"@(everyone|here)|<@[!&]?\d", dumped) is None
    assert "@\u200b" in dumped
    assert neutralise_mentions(mention) != mention


def test_discord_escapes_markdown_in_untrusted_text():
    msg = to_discord(fit_card(echo="**click** [here](https://e.vil) `x`", title="__t__"))
    assert r"> \*\*click\*\* \[here\](https://e.vil) \`x\`" in msg.embeds[0]["description"]
    assert msg.embeds[0]["title"].endswith(r"\_\_t\_\_")


def test_discord_code_block_cannot_be_closed_from_inside():
    msg = to_discord(fit_card(code=(CodeBlock(label="c", text="echo ```\n**bold**"),)))
    value = next(f["value"] for e in msg.embeds for f in e["fields"] if f["name"] == "c")
    assert value.count("```") == 2 and value.startswith("```sh\n") and value.endswith("\n```")


# --------------------------------------------------------------------------- every renderer, any input


@pytest.mark.parametrize(
    "text",
    [
        "x" * 10_000,
        "<b>&" * 2_500,
        "🟢" * 10_000,
        "*_`|>#@everyone " * 700,
        "word " * 2_000,
        "\n" * 10_000 + "x",
    ],
)
def test_huge_inputs_stay_within_limits(text):
    reply = huge_card(text)
    assert_all_within_limits(reply)
    assert len(to_telegram(reply)[-1].buttons) == 40


def test_many_sections_are_capped_in_messages():
    sections = tuple(Section(title=f"S{i}", rows=(Row(label="l", value="v" * 500),) * 7) for i in range(80))
    reply = fit_card(sections=sections)
    messages = to_telegram(reply)
    assert len(messages) == rt.MAX_MESSAGES and messages[-1].text.endswith("…")
    assert_all_within_limits(reply)


def test_empty_card_renders_everywhere():
    reply = Reply(kind="error", locale="de", title="")
    assert_all_within_limits(reply)
    assert to_console(reply) == "ℹ️\n"


_text = st.text(max_size=400)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    title=_text,
    summary=st.text(max_size=3000),
    echo=_text,
    footer=_text,
    rows=st.lists(st.tuples(_text, _text), max_size=12),
    cells=st.lists(st.lists(st.text(max_size=40), min_size=1, max_size=4), max_size=30),
    labels=st.lists(st.text(max_size=100), max_size=8),
    tone=st.sampled_from(list(Tone)),
)
def test_any_text_renders_within_limits(title, summary, echo, footer, rows, cells, labels, tone):
    reply = Reply(
        kind="fit",
        locale="en",
        title=title,
        summary=summary,
        echo=echo,
        footer=footer,
        tone=tone,
        sections=(Section(title=title, rows=tuple(Row(label=a, value=b) for a, b in rows)),) * 2,
        table=Table(title=title, headers=("a", "b"), rows=tuple(tuple(c) for c in cells)),
        code=(CodeBlock(label=title, text=summary),),
        chart=CHART if len(rows) % 2 else None,
        actions=tuple(Action(label=lab, query=lab) for lab in labels),
        suggestions=tuple(labels[:3]),
    )
    assert_all_within_limits(reply)
    assert re.search(r"@(everyone|here)|<@(?!\u200b)", discord_text(to_discord(reply))) is None


# --------------------------------------------------------------------------- plumbing


def test_templates_autoescape_html_only_and_environment_is_shared():
    env = environment()
    assert env is environment()
    assert env.autoescape("telegram.html.j2") is True and env.autoescape("console.txt.j2") is False


def test_importing_renderers_loads_neither_matplotlib_nor_a_chat_library():
    code = "import sys, bot.render.text, bot.render.charts; print(sorted({'matplotlib', 'discord', 'telegram'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_limits_are_named_constants():
    assert (rt.MAX_TEXT, rt.MAX_CAPTION) == (4096, 1024)
    assert (
        rd.MAX_TITLE_LEN,
        rd.MAX_DESCRIPTION,
        rd.MAX_FIELDS,
        rd.MAX_FIELD_NAME,
        rd.MAX_FIELD_VALUE,
        rd.MAX_FOOTER,
        rd.MAX_TOTAL,
        rd.MAX_EMBEDS,
        rd.MAX_BUTTONS,
        rd.MAX_BUTTON_LABEL,
    ) == (256, 4096, 25, 256, 1024, 2048, 6000, 10, 25, 80)


def test_discord_cut_never_leaves_a_bare_mention_start_or_lone_backslash():
    title = to_discord(fit_card(title="x" * 251 + "<@1")).embeds[0]["title"]
    assert title == "🟢 " + "x" * 251 + "…"
    title = to_discord(fit_card(title="x" * 252 + "**")).embeds[0]["title"]
    assert title == "🟢 " + "x" * 252 + "…" and len(title) <= rd.MAX_TITLE_LEN


def test_telegram_table_wider_than_a_phone_becomes_rows():
    wide = Table(
        title="Offers",
        headers=("Provider", "Instance", "$/h", "Billing"),
        rows=(("RunPod", "1x RTX PRO 6000 Blackwell Server Edition", "$1.79", "per-second"),),
    )
    messages = to_telegram(fit_card(table=wide))
    plain = "".join(parse_html(m.text)[0] for m in messages)
    assert "<pre>Provider" not in "".join(m.text for m in messages)
    assert "RunPod: Instance 1x RTX PRO 6000 Blackwell Server Edition · $/h $1.79 · Billing per-second" in plain


def test_telegram_narrow_table_stays_a_table():
    narrow = Table(title="Quants", headers=("Quant", "GiB"), rows=(("Q4_K_M", "18.5"),))
    text = "".join(m.text for m in to_telegram(fit_card(table=narrow)))
    assert "<pre>Quant" in text
