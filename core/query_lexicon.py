"""Word lists and patterns the question parser (``core.query``) reads; German and English.

Kept apart from the parsing logic so that adding a phrasing is a data change. Every pattern
runs on lower-cased, NFKC-normalised text; the numeric ones use ``re.ASCII`` so that only
ASCII digits count as numbers.
"""

from __future__ import annotations

import re

A = re.ASCII
_NUM = r"(\d{1,7}(?:[.,]\d{1,3})?)"

# --- names -------------------------------------------------------------------------------

VENDOR_WORDS = frozenset(
    "nvidia geforce amd radeon instinct apple rtx gtx rx tesla quadro intel arc".split()
)
# words that carry no identity in a model or GPU name
NOISE_WORDS = frozenset("instruct chat it hf gguf the model modell llm".split())
NAME_SPLIT = re.compile(r"[^\W_]*\d+(?:\.\d+)+[^\W_]*|[^\W_]+")
# h100, m3, r1, a3b, mi300x, l40s, k2, v3.1, e4b: letters+digits that are one identifier
SHORT_ID = re.compile(r"[a-z]{1,2}\d+(?:\.\d+)?[a-z]?(?:\d+b)?", A)
PIECES = re.compile(r"\d+(?:\.\d+)?b(?![a-z])|\d+(?:\.\d+)?|[^\W\d_]+")
MOE_SIZE = re.compile(r"\d+x\d+(?:\.\d+)?b", A)  # mixtral 8x7b
COUNT_PREFIX = re.compile(r"(\d{1,2})[x×](.*)")  # 2x, 2x3090, 8xh200
COUNT_SUFFIX = re.compile(r"[x×](\d{1,2})", A)  # 3090 x2
MEM_TOKEN = re.compile(r"(\d{1,4})(?:gb|gib|g)", A)
PLURAL_GPU = re.compile(r"(\d{3,5})(?:s|er|ern)", A)  # 5090s, 3090er
VENDOR_PREFIX = re.compile(r"(?:rtx|gtx|rx)(\d.*)", A)
SIZE = re.compile(r"\d+(?:\.\d+)?b|\d+x\d+(?:\.\d+)?b", A)

COUNT_WORDS = {
    "single": 1, "einzelne": 1, "einer": 1, "eine": 1, "one": 1,
    "two": 2, "zwei": 2, "dual": 2, "double": 2, "doppel": 2, "doppelte": 2, "pair": 2,
    "three": 3, "drei": 3, "triple": 3, "four": 4, "vier": 4, "quad": 4,
    "five": 5, "fünf": 5, "six": 6, "sechs": 6, "seven": 7, "sieben": 7,
    "eight": 8, "acht": 8, "ten": 10, "zehn": 10, "twelve": 12, "zwölf": 12,
    "sixteen": 16, "sechzehn": 16,
}
COUNT_GLUE = frozenset("x × mal of von my meine meiner meinen meinem".split())

STOPWORDS = frozenset(
    """a an the my our your on with and or of for to in at by is are be i me we you it this that
    can could will would should do does did run running runs fit fits use using have has get
    what which how much many about please just also than then there here into onto from
    ein einen einem eines der die das den dem des und oder mit auf für fuer von zu im in am
    ist sind kann können könnte läuft laufen passt passen geht gehen habe hab hat ich mein
    meine meiner meinem meinen wir du es mir bei wie was welche welcher welches wieviel viel
    bitte noch auch als dann da hier mal so x""".split()
)
UNIFIED_GROUPS = frozenset({"apple", "apu", "unified"})
MAC_WORDS = re.compile(r"\b(?:mac|macbook|imac|mac ?studio|mac ?mini|mac ?pro)\b")

# --- parameters --------------------------------------------------------------------------

HF_URL = re.compile(
    r"(?:https?://)?(?:www\.)?(?:hf\.co|huggingface\.co)/(?:models/)?"
    r"([A-Za-z0-9][\w.-]{0,95})/([\w.-]{1,95}?)(?::([\w.-]{1,40}))?(?=[/?#\s]|$)",
    A,
)
HF_ID = re.compile(
    r"(?<![\w/.:-])([A-Za-z][\w.-]{1,95})/([A-Za-z0-9][\w.-]{2,95})(?::([\w.-]{1,40}))?(?![\w/])",
    A,
)
ENGINE = re.compile(r"\b(vllm|llama[ .-]?cpp|ollama|lm[ -]?studio|lmstudio)\b", A)
_KV_TYPE = r"(q8_0|q8|q4_0|q4|fp8|f8|f16|fp16|bf16)"
KV_AFTER = re.compile(
    r"\b(?:kv[ -]?cache|kv|k/v|cache[ -]?type(?:[ -]?[kv])?)\s*[:=-]?\s*" + _KV_TYPE + r"\b", A
)
KV_BEFORE = re.compile(r"\b" + _KV_TYPE + r"[ -]?(?:kv[ -]?cache|kv|k/v)\b", A)
KV_TYPES = {
    "q8": "q8_0", "q8_0": "q8_0", "q4": "q4_0", "q4_0": "q4_0", "fp8": "fp8", "f8": "fp8",
    "f16": "f16", "fp16": "f16", "bf16": "bf16",
}
PROMPT = re.compile(
    r"\bprompts?\s*(?:of|von|mit|with|=|:)?\s*" + _NUM + r"\s*(k?)\b(?:\s*tokens?)?"
    r"|\b" + _NUM + r"\s*(k?)[ -]?(?:tokens?|tok)?[ -]?(?:prompt|eingabe)s?\b",
    A,
)
USERS = re.compile(
    r"--?(?:concurrent|users|parallel)\s*[= ]\s*(\d{1,5})\b"
    r"|\b(\d{1,5})\s*(?:(?:concurrent|gleichzeitigen?|parallelen?|simultaneous)\s*)?"
    r"(?:users?|nutzer\w*|benutzer\w*|anwender\w*|clients?|sessions?|requests?|anfragen|personen)\b"
    r"|\b(\d{1,5})\s*(?:concurrent|gleichzeitig|parallel|simultaneous)\b",
    A,
)
RAM = re.compile(
    r"\b" + _NUM + r"\s*(gb|gib|g|tb)?\s*(?:of\s+)?(?:ddr\d\s*)?(?:system\s*)?"
    r"(?:ram|arbeitsspeicher|hauptspeicher|system\s*memory)\b"
    r"|\b(?:ram|arbeitsspeicher|hauptspeicher)\s*[:=]?\s*(?:von\s+|of\s+)?" + _NUM + r"\s*(gb|gib|g|tb)?\b",
    A,
)
# three passes, most specific first: "context 16000", then "32k"/"1M", then "16000 tokens"
CONTEXT_WORD_FIRST = re.compile(
    r"\b(?:ctx|context|kontext)(?:[ -]?(?:window|length|länge|size|fenster))?\s*"
    r"(?:of|von|mit|with|=|:)?\s*" + _NUM + r"\s*(k|m)?\b(?:\s*tokens?)?",
    A,
)
CONTEXT_SUFFIX = re.compile(
    r"\b" + _NUM + r"(?:\s*(k)|(m))\b(?:\s*(?:tokens?|ctx|context|kontext))?", A
)
CONTEXT_WORD_AFTER = re.compile(r"\b(\d{3,8})\s*(?:tokens?|ctx|context|kontext)\b", A)
QUANT_GGUF = re.compile(
    r"\b((?:ud[-_])?i?q[1-8](?:[_-]?(?:k|0|1|xxs|xs|s|m|l|xl|nl))*)\b", A
)
QUANT_WORD = re.compile(
    r"\b(fp8|f8|w8a8|awq|gptq|mxfp4|nvfp4|bf16|fp16|f16|int4|int8|4[- ]?bits?|8[- ]?bits?"
    r"|native|nativ|unquantized|unquantised|unquantisiert|full precision)\b"
)
QUANT_ALIASES = {
    "q4": ("Q4_K_M",), "q5": ("Q5_K_M",), "q6": ("Q6_K",), "q3": ("Q3_K_M",), "q2": ("Q2_K",),
    "q8": ("Q8_0",), "int4": ("Q4_K_M",), "4bit": ("Q4_K_M",), "4bits": ("Q4_K_M",),
    "int8": ("Q8_0",), "8bit": ("Q8_0",), "8bits": ("Q8_0",), "f8": ("FP8",), "w8a8": ("FP8",),
    "fp16": ("BF16", "F16"), "f16": ("BF16", "F16"), "native": ("BF16",), "nativ": ("BF16",),
    "unquantized": ("BF16",), "unquantised": ("BF16",), "unquantisiert": ("BF16",),
    "fullprecision": ("BF16",), "q4k": ("Q4_K_M",), "q5k": ("Q5_K_M",), "q3k": ("Q3_K_M",),
}
FINETUNE = re.compile(
    r"\b(qlora|lora|full[ -]?(?:fine[ -]?tun\w*|finetun\w*|ft|parameter)|voll\w*)\b"
)
BARE_CONTEXT_MIN = 1024
# phrases that only say "per time" and must not be read as names ("pro" in "tokens pro sekunde")
FILLER_PHRASES = re.compile(
    r"\b(?:tokens?|tok|t)\s*(?:/|per|pro)\s*(?:sekunde|second|sec|s)\b|\b(?:pro|per) (?:stunde|hour|monat|month)\b"
)

# --- intents -----------------------------------------------------------------------------

COMMAND = re.compile(r"^\s*/([a-z_]{1,20})(?:@\w{1,64})?(?=\s|$)", A)
COMMANDS = frozenset(
    "fit speed cloud quant gpus models finetune tco compare help start mygpu lang settings forget".split()
)
COMMAND_ALIASES = {"gpu": "gpus", "model": "models", "ft": "finetune", "cost": "cloud", "language": "lang"}
INTENT_WORDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("forget", re.compile(r"\b(?:forget me|vergiss mich|delete my data|lösche? meine daten)\b")),
    ("settings", re.compile(r"\b(?:settings|einstellungen)\b")),
    ("tco", re.compile(
        r"\b(?:buy (?:vs\.?|or|oder) rent|rent (?:vs\.?|or) buy|kaufen oder mieten|mieten oder kaufen"
        r"|tco|lohnt (?:sich|es sich)|worth buying|break[ -]?even|amortis\w*|total cost)\b"
    )),
    ("finetune", re.compile(
        r"\b(?:fine[ -]?tun\w*|finetun\w*|q?lora|training|trainieren|train|nachtrainieren)\b"
    )),
    ("compare", re.compile(r"\b(?:compare|comparison|vergleich\w*|vs|versus|gegen|against)\b")),
    ("speed", re.compile(
        r"\b(?:wie schnell|how fast|fast enough|speed|geschwindigkeit|tokens? (?:per|pro) s\w*"
        r"|throughput|durchsatz|latency|latenz|ttft|schnell)\b|\btok(?:ens?)?/s|\bt/s"
    )),
    ("cloud", re.compile(
        r"\b(?:cheapest|günstigste\w*|billigste\w*|was kostet|kostet|how much does|cost\w*|kosten"
        r"|cloud|rent\w*|mieten|miete|price\w*|preis\w*|per hour|pro stunde|runpod|vast\.ai)\b"
    )),
    ("gpus", re.compile(
        r"\b(?:which|what|best|welche\w*|beste\w*) (?:gpus?|graphics cards?|grafikkarten?|karten?"
        r"|hardware)\b"
    )),
    ("models", re.compile(
        r"\b(?:which|what) (?:models?|llms?)\b|\bwelche\w* (?:modelle?|llms?)\b|what can i run"
        r"|was (?:kann ich|läuft)"
    )),
    ("quant", re.compile(r"\b(?:quant\w*|welche quant\w*|which quant\w*)\b")),
    ("mygpu", re.compile(
        r"\b(?:my (?:gpus?|graphics card|card|hardware) (?:is|are)|i (?:have|own|got)"
        r"|meine (?:gpus?|grafikkarte|karte|hardware) (?:ist|sind)|ich (?:habe|hab|besitze))\b"
    )),
    ("help", re.compile(r"^\s*(?:help|hilfe|\?+|what can you do|was kannst du)\s*[?!.]*\s*$")),
)

# --- language ----------------------------------------------------------------------------

GERMAN_WORDS = frozenset(
    """ist passt auf meine meiner meinem mein mit wie schnell kostet was welche welches welcher der
    die das und oder ich kann läuft laufen zwei drei vier nutzer für grafikkarte grafikkarten
    kontext modelle brauche reicht geht bei mir nicht ein eine einer lohnt sich kaufen mieten
    vergleich wieviel viel hilfe genug habe hab reichen passen sind schneller günstigste billigste
    in der cloud mal bitte""".split()
)
ENGLISH_WORDS = frozenset(
    """can i run on my with how fast is the what which cheapest does cost will fit for and or two
    three users need enough it a to do buy rent help have much many speed would could are this
    fits runs best compare""".split()
)
# words that are understood without being a parameter (never reported as leftovers)
FILLER = STOPWORDS | frozenset(
    """vs versus gegen against compare vergleich vergleiche cheapest cloud rent mieten kaufen buy
    kostet kosten cost price preis speed schnell fast wie how tokens token tok per pro second
    sekunde gpu gpus grafikkarte grafikkarten karte card hardware modelle models llms welche
    which lohnt sich tco worth fine tune tuning finetune finetuning training quant quants
    quantization quantisierung brauche need enough genug reicht reichen fine help hilfe ram
    vram memory speicher mac studio system setup machine rechner pc laptop server local lokal
    with gb gib s t ja yes no nein hi hallo hello hey thanks danke ok okay voll full finetunen
    buying worth lassen viele schafft schaffen bekomme bekommen kriege möglich possible
    sekunde second""".split()
)
