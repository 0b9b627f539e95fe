"""What the parser's patterns need (``core.query.literals``), read once and kept here: written by
tests/core/test_query_literals.py, which fails with the new table when a pattern changes."""

NEEDS: dict[int, tuple[str, ...]] = {
    # core.query.lexicon.RIG_JOINER
    3945006239: ("&", "+", ",", "and", "plus", "sowie", "und"),
    # core.query.lexicon.SAME_CARDS
    3911474702: ("&", "+", ",", "and", "plus", "und"),
    # core.query.lexicon.MAC_WORDS
    41775471: ("mac", "mini", "studio"),
    # core.query.lexicon.HF_URL
    2310621375: ("f.co", "uggingface.co"),
    # core.query.lexicon.HF_ID
    3604819212: ("/",),
    # core.query.lexicon.ENGINE
    2904503542: ("llama", "studio", "vllm"),
    # core.query.lexicon.READERS[1]
    2615085141: ("cache", "k/v", "kv"),
    # core.query.lexicon.READERS[2]
    2719670930: ("f16", "f8", "fp16", "fp8", "q4", "q8"),
    # core.query.lexicon.READERS[3]
    3546116771: ("prompt",),
    # core.query.lexicon.READERS[4]
    3978862930: ("eingabe", "prompt"),
    # core.query.lexicon.READERS[5]
    2646560853: ("concurrent", "parallel", "users"),
    # core.query.lexicon.READERS[6]
    2802597129: (
        "anfragen",
        "anwender",
        "client",
        "colleagues",
        "concurrent",
        "coworkers",
        "developers",
        "devs",
        "entwickler",
        "gleichzeitig",
        "kollegen",
        "kolleginnen",
        "leute",
        "menschen",
        "mitarbeiter",
        "nutzer",
        "parallel",
        "people",
        "personen",
        "persons",
        "request",
        "session",
        "simultaneous",
        "user",
    ),
    # core.query.lexicon.READERS[7]
    3184026582: (
        "anfragen",
        "anwender",
        "client",
        "colleagues",
        "coworkers",
        "developers",
        "devs",
        "entwickler",
        "kollegen",
        "kolleginnen",
        "leute",
        "menschen",
        "mitarbeiter",
        "nutzer",
        "people",
        "personen",
        "persons",
        "request",
        "session",
        "user",
    ),
    # core.query.lexicon.READERS[8]
    2490749185: ("arbeitsspeicher", "ddr", "hauptspeicher", "ram"),
    # core.query.lexicon.READERS[9]
    31732298: ("arbeitsspeicher", "ddr", "hauptspeicher", "ram", "system"),
    # core.query.lexicon.READERS[10]
    523756586: ("context", "ctx", "kontext"),
    # core.query.lexicon.READERS[11]
    3400962327: ("context", "ctx", "kontext", "token"),
    # core.query.lexicon.READERS[12]
    1040712296: ("context", "ctx", "kontext", "token"),
    # core.query.lexicon.READERS[13]
    3630111929: ("k", "m"),
    # core.query.lexicon.QUANT_GGUF
    2650599883: ("q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8"),
    # core.query.lexicon.QUANT_SHAPED
    54890886: ("q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8"),
    # core.query.lexicon.QUANT_WORD
    1384611478: (
        "awq",
        "bit",
        "f16",
        "f8",
        "fp16",
        "fp8",
        "full precision",
        "gptq",
        "int4",
        "int8",
        "mxfp4",
        "nativ",
        "nvfp4",
        "unquantised",
        "unquantisiert",
        "unquantized",
        "w8a8",
    ),
    # core.query.lexicon.FINETUNE
    2859387485: ("full", "lora", "voll"),
    # core.query.lexicon.FILLER_PHRASES
    505384902: ("/", "hour", "monat", "month", "per", "pro", "stunde"),
    # core.query.lexicon.INTENT_WORDS[0]
    1270941884: (
        " rent",
        "amortis",
        "break",
        "kaufen oder mieten",
        "lohnt ",
        "mieten oder kaufen",
        "rent ",
        "tco",
        "total cost",
        "worth buying",
    ),
    # core.query.lexicon.INTENT_WORDS[1]
    2768697576: ("fine", "lora", "train"),
    # core.query.lexicon.INTENT_WORDS[2]
    4169948414: (
        "against",
        "besser als",
        "better than",
        "compare",
        "comparison",
        "faster than",
        "gegen",
        "oder",
        "or",
        "schneller als",
        "vergleich",
        "versus",
        "vs",
    ),
    # core.query.lexicon.INTENT_WORDS[3]
    2485552423: (
        "/s",
        "durchsatz",
        "fast enough",
        "geschwindigkeit",
        "how fast",
        "latency",
        "latenz",
        "schnell",
        "speed",
        "throughput",
        "token",
        "ttft",
    ),
    # core.query.lexicon.INTENT_WORDS[4]
    2063412168: ("billigste", "cheapest", "günstigste"),
    # core.query.lexicon.INTENT_WORDS[5]
    1495304609: (
        "billigste",
        "cheapest",
        "cloud",
        "cost",
        "günstigste",
        "how much does",
        "kosten",
        "kostet",
        "miete",
        "per hour",
        "preis",
        "price",
        "pro stunde",
        "rent",
        "runpod",
        "vast.ai",
    ),
    # core.query.lexicon.INTENT_WORDS[6]
    2102994919: (
        "best",
        "empfehle",
        "empfehlung",
        "empfiehl",
        "kleinste",
        "least",
        "min",
        "recommend",
        "smallest",
        "suggest",
        "was brauch",
        "welche",
        "what",
        "which",
    ),
    # core.query.lexicon.INTENT_WORDS[7]
    2279560695: (
        " can run",
        " run ",
        "aktuellste",
        "best",
        "biggest",
        "decent",
        "empfehl",
        "empfiehl",
        "good",
        "gr",
        "gute",
        "kann ich",
        "largest",
        "latest",
        "llm",
        "läuft",
        "model",
        "neueste",
        "newest",
        "nice",
        "ordentliche",
        "passt",
        "recommend",
        "solid",
        "strong",
        "suggest",
        "vorschl",
        "was für ",
        "was geht",
        "was soll ich",
        "welche",
        "what",
    ),
    # core.query.lexicon.INTENT_WORDS[8]
    2462723923: ("quant",),
    # core.query.lexicon._UMLAUT
    549329040: ("ß", "ä", "ö", "ü"),
    # core.query.devices.PRICE
    2827061770: ("$", "bucks", "dollar", "eur", "usd", "£", "€"),
    # core.query.devices.GENERIC_DEVICES[0]
    2213083715: ("laptop", "notebook"),
    # core.query.devices.GENERIC_DEVICES[1]
    1732151558: ("laptop", "notebook"),
    # core.query.devices.GENERIC_DEVICES[2]
    3409314885: ("card", "gpu", "grafikspeicher", "graphics", "karte", "video", "vram"),
    # core.query.devices.GENERIC_DEVICES[3]
    3138250739: ("mit", "with"),
    # core.query.devices.GENERIC_DEVICES[4]
    2125932713: ("vram",),
    # core.query.devices.GENERIC_DEVICES[5]
    1673833507: ("gemeinsame", "geteilte", "shared", "unified", "vereinheitlichte"),
    # core.query.devices.GENERIC_DEVICES[6]
    3289355676: ("gemeinsame", "geteilte", "shared", "unified", "vereinheitlichte"),
    # core.query.devices.GENERIC_DEVICES[7]
    543968250: ("auf", "cpu", "gpu", "nur", "ohne", "only", "without"),
    # core.query.devices.MEMORY_ONLY
    3312409570: ("bedarf", "cache", "much", "needed", "required", "requirement", "usage", "viel"),
    # core.query.devices.OTHER_ENGINE
    2723106241: (
        "aphrodite",
        "exl2",
        "exl3",
        "exllama",
        "ktransformers",
        "mlx",
        "sglang",
        "tensorrt",
        "tgi",
        "trt llm",
        "trt-llm",
    ),
    # core.query.devices.CORES
    2828045656: ("c", "kern"),
    # core.query.devices.SBC
    410516: ("aspberry", "pi"),
    # core.query.devices.IGPU
    104717662: ("graphics", "igpu", "integrated", "integrierte", "iris", "onboard"),
    # core.query.devices.IGPU_CHIP
    2542667893: ("610m", "660m", "680m", "740m", "760m", "780m", "880m", "890m"),
    # core.query.devices.APU
    3357614569: ("i3", "i5", "i7", "i9", "ryzen", "ultra"),
    # core.query.devices.CPU
    1701369226: ("epyc", "i3", "i5", "i7", "i9", "ryzen", "threadripper", "ultra", "x"),
    # core.query.devices.BIGGEST
    570823786: ("biggest", "gliche", "gr", "how ", "hugest", "largest", "size"),
    # core.query.devices.DEVICE_ID
    4164871775: ("cpu-", "generic-"),
    # core.query.devices.BPW
    1394205817: ("pw", "weight"),
    # core.query.devices.MLX_BITS
    1124255776: ("bit", "mlx"),
    # core.query.specs.BACKEND
    2621982550: ("amdvlk", "cuda", "hip", "metal", "oneapi", "radv", "rocm", "sycl", "vulkan"),
    # core.query.specs.BANDWIDTH
    3920764857: ("/", "gbps", "tbps"),
    # core.query.specs.TFLOPS
    1604024400: ("flop",),
    # core.query.specs.SPEC_MEMORY
    3752747175: ("g",),
    # core.query.specs.DISPLAY
    3463146963: (
        "1080",
        "1440",
        "1600",
        "2160",
        "240",
        "2k",
        "360",
        "4320",
        "480",
        "4k",
        "540",
        "576",
        "5k",
        "720",
        "8k",
        "900",
        "@",
        "at",
        "auf",
        "fhd",
        "in",
        "mit",
        "on",
        "qhd",
        "uhd",
        "x",
        "×",
    ),
}
